//! Gives the shared library a versioned SONAME on Linux and the BSDs (`libstorefront.so.<major>`),
//! so a C install ships `libstorefront.so.<major>` with the `libstorefront.so` development link
//! beside it, as shared libraries are installed there. Not on Android, whose APKs carry only
//! `lib*.so` names. Rust users of the `rlib` are unaffected: the argument applies to the cdylib.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(os.as_str(), "linux" | "freebsd" | "netbsd" | "openbsd") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libstorefront.so.{major}");
    }
}
