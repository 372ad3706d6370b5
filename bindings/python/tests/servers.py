"""Redis and PostgreSQL servers for tests (test support), as .ci/lib/servers.sh starts them:
Debian's binaries (installed by ``bash .ci/install-servers.sh``), on 127.0.0.1, on a free port,
with their files in a temp dir, stopped by process id.

    with RedisServer() as redis:         # redis.url == "redis://127.0.0.1:PORT/0"
        ...
    with PostgresServer() as postgres:   # postgres.url == "postgres://postgres@127.0.0.1:PORT/postgres"
        ...

PostgreSQL refuses to run as root: its directory is given to the ``postgres`` user and the
temp-dir parents it cannot enter are made enterable (``o+x``, not listable), as in servers.sh.
A missing binary fails with "run bash .ci/install-servers.sh".
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, List, Optional

#: How long a start waits for its server to answer.
START_TIMEOUT = 60.0
INSTALL_HINT = "run bash .ci/install-servers.sh"


class ServerMissing(RuntimeError):
    """A server binary is not installed."""


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (asks the kernel)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _stop_pid(pid: Optional[int], sig: int, process: Optional[subprocess.Popen] = None) -> None:
    """Stops ``pid`` with ``sig``, then SIGKILL after 10 s; reaps it when it is our child."""
    if pid is None:
        return
    if _alive(pid):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            if process is not None:
                process.poll()
            time.sleep(0.05)
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if process is not None:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass


def _tail(path: Path, lines: int = 50) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


class RedisServer:
    """``redis-server --port P --bind 127.0.0.1 --save '' --appendonly no --dir TMP``."""

    def __init__(self, directory: Optional[str] = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise ServerMissing(f"redis-server is not installed ({INSTALL_HINT})")
        self._tmp: Optional[tempfile.TemporaryDirectory] = None
        if directory is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="sf-redis-")
            directory = self._tmp.name
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._out = open(self.dir / "redis.out", "wb")
        self.process: Optional[subprocess.Popen] = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.dir), "--daemonize", "no",
             "--logfile", str(self.dir / "redis.log")],
            stdout=self._out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self.pid: Optional[int] = self.process.pid
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.ping():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        log = _tail(self.dir / "redis.log") or _tail(self.dir / "redis.out")
        self.stop()
        raise RuntimeError(f"redis-server did not answer on 127.0.0.1:{self.port}\n{log}")

    def ping(self) -> bool:
        """Whether the server answers PING (plain RESP over a socket: no client library)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Stops the server (SIGTERM, then SIGKILL) and removes its files. Idempotent."""
        _stop_pid(self.pid, signal.SIGTERM, self.process)
        self.pid = None
        self.process = None
        self._out.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "RedisServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def postgres_bindir() -> str:
    """The newest installed PostgreSQL's bin directory (``/usr/lib/postgresql/*/bin``)."""

    def version(path: str) -> List[int]:
        return [int(part) for part in re.findall(r"\d+", path)]

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version)
    if not found or not os.access(os.path.join(found[-1], "initdb"), os.X_OK):
        raise ServerMissing(
            f"no PostgreSQL server under /usr/lib/postgresql/*/bin ({INSTALL_HINT})"
        )
    if shutil.which("runuser") is None:
        raise ServerMissing(f"runuser is missing ({INSTALL_HINT})")
    return found[-1]


def _as_postgres(*args: str, **kwargs: Any) -> "subprocess.CompletedProcess[bytes]":
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *args]
    else:  # not root: run as ourselves (the directory is ours)
        command = list(args)
    return subprocess.run(command, stdin=subprocess.DEVNULL, **kwargs)


def _reach(directory: Path) -> None:
    """Lets the postgres user enter ``directory``: temp-dir parents it cannot enter get o+x
    (not listable); anything else is an error."""
    if os.geteuid() != 0:
        return
    tmp = Path(os.path.realpath(tempfile.gettempdir()))
    parent = directory.parent
    while parent != Path("/"):
        check = _as_postgres("test", "-x", str(parent))
        if check.returncode != 0:
            if tmp in parent.parents:
                os.chmod(parent, os.stat(parent).st_mode | 0o001)
            else:
                raise RuntimeError(
                    f"the postgres user cannot enter {parent} (needed for {directory})"
                )
        parent = parent.parent


class PostgresServer:
    """A PostgreSQL cluster: ``initdb -D DIR/data -A trust -U postgres``, then ``pg_ctl -D
    DIR/data -o "-p P -k DIR -c listen_addresses=127.0.0.1" -l DIR/log -w start``; stopped with
    ``pg_ctl stop -m fast`` (and SIGINT, SIGKILL by pid if it is still there)."""

    def __init__(self, directory: Optional[str] = None) -> None:
        self.bindir = postgres_bindir()
        self._tmp: Optional[tempfile.TemporaryDirectory] = None
        if directory is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="sf-pg-")
            directory = self._tmp.name
        self.dir = Path(os.path.realpath(directory))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.pid: Optional[int] = None
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        os.chmod(self.dir, 0o700)
        _reach(self.dir)
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"
        data = str(self.dir / "data")
        with open(self.dir / "initdb.log", "wb") as out:
            init = _as_postgres(
                f"{self.bindir}/initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync",
                stdout=out, stderr=subprocess.STDOUT,
            )
        if init.returncode != 0:
            log = _tail(self.dir / "initdb.log")
            self.stop()
            raise RuntimeError(f"initdb failed in {data}\n{log}")
        start = _as_postgres(
            f"{self.bindir}/pg_ctl", "-D", data,
            "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1",
            "-l", str(self.dir / "log"), "-w", "-t", str(int(START_TIMEOUT)), "start",
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        )
        self.pid = self._postmaster_pid()
        if start.returncode != 0 or not _port_open(self.port):
            log = _tail(self.dir / "log")
            self.stop()
            raise RuntimeError(f"postgres did not start on 127.0.0.1:{self.port}\n{log}")

    def _postmaster_pid(self) -> Optional[int]:
        try:
            return int((self.dir / "data" / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop(self) -> None:
        """``pg_ctl stop -m fast``, then SIGINT (fast shutdown) and SIGKILL by pid if it is
        still there; removes the files. Idempotent."""
        if self.pid is not None and _alive(self.pid):
            _as_postgres(
                f"{self.bindir}/pg_ctl", "-D", str(self.dir / "data"), "-m", "fast", "-w",
                "-t", "30", "stop", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        _stop_pid(self.pid, signal.SIGINT)
        self.pid = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "PostgresServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
