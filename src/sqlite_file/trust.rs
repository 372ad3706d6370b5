//! Which files the SDK's SQLite databases may live in (issue 27, item 1). The inbox database
//! holds the shop's notifications and the shared state holds the client-credentials token, so
//! another local user must neither read nor plant them:
//! - the folder holding the database is owned by this user (or root) and no other user can
//!   create names in it (not world-writable; group-writable only for this process's own group);
//! - the database and SQLite's companion files (`-wal`, `-shm`, `-journal`) are, when present,
//!   regular files (never a link, a device or a pipe), owned by this user and not accessible to
//!   group or others;
//! - the database is created mode 0600 with `O_NOFOLLOW`. Nothing is ever `chmod`ed: a file
//!   with looser modes is refused with the fix in the message, never narrowed (narrowing would
//!   leave a reader's open descriptor working, and through a link would change another file).

use std::path::{Path, PathBuf};

use super::OpenError;

/// SQLite's companion files of a database in WAL mode, and the rollback journal.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Checks the folder, the database and its companions, then creates the database file (0600,
/// not following a link) when it does not exist.
pub(crate) fn prepare_private(path: &Path) -> Result<(), OpenError> {
    check_folder(path)?;
    check_companions(path)?;
    create_or_check(path)
}

/// Checks the companion files that exist (after SQLite opened the database, as before).
pub(crate) fn check_companions(path: &Path) -> Result<(), OpenError> {
    for suffix in COMPANIONS {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let companion = PathBuf::from(name);
        match std::fs::symlink_metadata(&companion) {
            Ok(meta) => check_file(&companion, &meta)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(refused(&companion, &format!("cannot be examined ({e})"))),
        }
    }
    Ok(())
}

fn refused(path: &Path, why: &str) -> OpenError {
    OpenError(format!(
        "refusing the SQLite file {}: {why}",
        path.display()
    ))
}

#[cfg(unix)]
fn check_folder(path: &Path) -> Result<(), OpenError> {
    use std::os::unix::fs::MetadataExt;
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let meta = std::fs::metadata(&folder).map_err(|e| {
        OpenError(format!(
            "the folder {} of the SQLite file cannot be used ({e}); create it, owned by this \
             user, mode 0700",
            folder.display()
        ))
    })?;
    let folder_refused = |why: String| {
        OpenError(format!(
            "refusing the folder {} of the SQLite file {}: {why}; use a folder only this user \
             can write (mode 0700)",
            folder.display(),
            path.display()
        ))
    };
    if !meta.is_dir() {
        return Err(folder_refused("not a folder".into()));
    }
    // SAFETY: geteuid and getegid cannot fail.
    let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if meta.uid() != euid && meta.uid() != 0 {
        return Err(folder_refused(format!(
            "it is owned by another user (uid {})",
            meta.uid()
        )));
    }
    let mode = meta.mode();
    if mode & 0o002 != 0 {
        return Err(folder_refused(
            "any user can create files in it (another user could plant the database's -wal or \
             -shm file)"
                .into(),
        ));
    }
    if mode & 0o020 != 0 && meta.gid() != egid {
        return Err(folder_refused(format!(
            "the users of group {} can create files in it",
            meta.gid()
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_folder(_path: &Path) -> Result<(), OpenError> {
    Ok(())
}

#[cfg(unix)]
fn check_file(path: &Path, meta: &std::fs::Metadata) -> Result<(), OpenError> {
    use std::os::unix::fs::MetadataExt;
    if meta.file_type().is_symlink() {
        return Err(refused(path, "it is a symbolic link"));
    }
    if !meta.file_type().is_file() {
        return Err(refused(path, "it is not a regular file"));
    }
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    if meta.uid() != euid {
        return Err(refused(
            path,
            &format!(
                "it is owned by another user (uid {}); remove it, or use a folder only this \
                 user can write",
                meta.uid()
            ),
        ));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(refused(
            path,
            &format!(
                "group or other users can access it (mode {:03o}); after checking who may have \
                 read it, run chmod 600 on it",
                meta.mode() & 0o777
            ),
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_file(_path: &Path, _meta: &std::fs::Metadata) -> Result<(), OpenError> {
    Ok(())
}

#[cfg(unix)]
fn create_or_check(path: &Path) -> Result<(), OpenError> {
    use std::os::unix::fs::OpenOptionsExt;
    // A device or a pipe is refused before it is opened (opening one can have effects).
    match std::fs::symlink_metadata(path) {
        Ok(meta) => check_file(path, &meta)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(refused(path, &format!("cannot be examined ({e})"))),
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                refused(path, "it is a symbolic link")
            } else {
                OpenError(format!(
                    "cannot create or open the SQLite file {}: {e}",
                    path.display()
                ))
            }
        })?;
    let meta = file
        .metadata()
        .map_err(|e| refused(path, &format!("cannot be examined ({e})")))?;
    check_file(path, &meta)
}

#[cfg(not(unix))]
fn create_or_check(path: &Path) -> Result<(), OpenError> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(|_| ())
        .map_err(|e| {
            OpenError(format!(
                "cannot create the SQLite file {}: {e}",
                path.display()
            ))
        })
}
