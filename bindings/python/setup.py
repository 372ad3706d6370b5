"""Build of the storefront distribution (setuptools; the metadata is in pyproject.toml).

The wheel carries the native library (``storefront/libstorefront.so``), loaded with ctypes, so it
is a platform wheel without a CPython ABI: tagged ``py3-none-<platform>``. The library comes from:

* ``STOREFRONT_PREBUILT_LIB`` (a path), when set: copied as it is and no Rust is built. The release
  step ``.ci/release.d/python.sh`` uses it with the library ``.ci/release`` built once;
* else ``cargo rustc --release --locked -p storefront --features uniffi,capi --crate-type cdylib``
  (the shared library alone, as ``.ci/release`` builds it: about a quarter smaller than the one
  built together with the rlib and the static library) in the Rust workspace: the checkout's root two directories up (``pip install ./bindings/python``), or the
  copy of the workspace an sdist carries in ``rust/``. ``CARGO_TARGET_DIR`` is honoured, so a
  build after ``.ci/release`` reuses its target directory.

The version is the workspace's (``[workspace.package] version`` in Cargo.toml), the one place it
is set; nothing here or in pyproject.toml repeats it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
PACKAGE = "storefront"
if sys.platform == "darwin":
    LIB_NAME = "libstorefront.dylib"
elif sys.platform == "win32":
    LIB_NAME = "storefront.dll"
else:
    LIB_NAME = "libstorefront.so"
# The same command as .ci/release, so both give the same library.
CARGO_ARGS = [
    "rustc", "--release", "--locked", "-p", "storefront", "--features", "uniffi,capi",
    "--crate-type", "cdylib",
]

# What an sdist carries of the workspace (under rust/) for `cargo build` to work without the
# checkout: every workspace member's manifest and sources, the lock file, and the files the
# root manifest names (its README is the crate documentation, its example and benches targets).
RUST_FILES = [
    "Cargo.toml", "Cargo.lock", "build.rs", "README.md", "cbindgen.toml", "uniffi.toml",
    "examples/storefront.rs",
]
RUST_DIRS = ["src", "include", "benches", "sandbox", "bindings/uniffi-bindgen"]
RUST_IGNORE = shutil.ignore_patterns("target", "__pycache__", "*.pyc")


def workspace() -> Path:
    """The Rust workspace root: rust/ inside an sdist, else the checkout two directories up."""
    for candidate in (HERE / "rust", HERE.parent.parent):
        manifest = candidate / "Cargo.toml"
        if manifest.is_file() and "[workspace.package]" in manifest.read_text(encoding="utf-8"):
            return candidate
    raise SystemExit(
        "storefront: no Rust workspace found (neither rust/ in this sdist nor the checkout "
        f"two directories above {HERE}); set STOREFRONT_PREBUILT_LIB to a built library"
    )


def workspace_version() -> str:
    """[workspace.package] version of the workspace's Cargo.toml."""
    section = None
    for line in (workspace() / "Cargo.toml").read_text(encoding="utf-8").splitlines():
        header = re.match(r"\s*\[([^\]]+)\]\s*$", line)
        if header:
            section = header.group(1).strip()
            continue
        if section == "workspace.package":
            value = re.match(r'\s*version\s*=\s*"([^"]+)"', line)
            if value:
                return value.group(1)
    raise SystemExit("storefront: no [workspace.package] version in Cargo.toml")


def native_library() -> Path:
    """The library to ship: STOREFRONT_PREBUILT_LIB, else a cargo release build."""
    prebuilt = os.environ.get("STOREFRONT_PREBUILT_LIB")
    if prebuilt:
        path = Path(prebuilt)
        if not path.is_file():
            raise SystemExit(f"storefront: STOREFRONT_PREBUILT_LIB={prebuilt} is not a file")
        print(f"storefront: packaging the prebuilt library {path}", flush=True)
        return path
    root = workspace()
    cargo = shutil.which("cargo")
    if cargo is None:
        raise SystemExit(
            "storefront: building from source needs cargo (the Rust toolchain) on PATH, "
            "or STOREFRONT_PREBUILT_LIB set to a built library"
        )
    print(f"storefront: cargo {' '.join(CARGO_ARGS)} (in {root})", flush=True)
    subprocess.run([cargo, *CARGO_ARGS], cwd=root, check=True)
    metadata = subprocess.run(
        [cargo, "metadata", "--format-version", "1", "--no-deps", "--locked"],
        cwd=root, check=True, stdout=subprocess.PIPE,
    )
    target_dir = Path(json.loads(metadata.stdout)["target_directory"])
    built = target_dir / "release" / LIB_NAME
    if not built.is_file():
        raise SystemExit(f"storefront: cargo succeeded but {built} is missing")
    return built


class BuildPyWithLibrary(build_py):
    """Copies the native library into the built package, beside _lib.py, which loads it."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # an editable install uses the checkout: set STOREFRONT_LIB there
        destination = Path(self.build_lib) / PACKAGE / LIB_NAME
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(native_library(), destination)
        destination.chmod(0o755)


class PlatformWheel(bdist_wheel):
    """A platform wheel (it holds a native library) for any Python 3: py3-none-<platform>."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self) -> tuple:
        _python, _abi, platform = super().get_tag()
        return "py3", "none", platform


class SdistWithRust(sdist):
    """Adds the Rust workspace under rust/, so that the sdist builds without the checkout."""

    def make_release_tree(self, base_dir: str, files: list) -> None:
        super().make_release_tree(base_dir, files)
        root = workspace()
        destination = Path(base_dir) / "rust"
        for name in RUST_FILES:
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / name, target)
        for name in RUST_DIRS:
            shutil.copytree(root / name, destination / name, ignore=RUST_IGNORE, dirs_exist_ok=True)


class BinaryDistribution(Distribution):
    """Never pure: the package is installed as platform-specific (platlib)."""

    def has_ext_modules(self) -> bool:
        return True


setup(
    version=workspace_version(),
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel, "sdist": SdistWithRust},
)
