#!/usr/bin/env bash
# Release step (run by .ci/release): the sandbox, for people without Rust, into $STOREFRONT_OUT/sandbox/:
#   storefront-sandbox-<version>-<arch>-linux.tar.gz   the prebuilt binary, README, licences
#   storefront_sandbox-<version>-py3-none-manylinux_<glibc>_<arch>.whl
#       `pip install` puts the `storefront-sandbox` command on PATH (the binary under the wheel's
#       .data/scripts, as ruff ships its own) plus the `storefront_sandbox` package (start it from
#       Python, the pytest fixtures). The manylinux tag is the newest glibc symbol version the
#       binary needs; it must need no library outside the manylinux policy (checked).
# The binary is the release profile's (size first, stripped). The wheel is packed by `wheel pack`
# (PyPI's wheel, in a private venv removed at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${STOREFRONT_VERSION:?set by .ci/release}" "${STOREFRONT_OUT:?set by .ci/release}"
version="$STOREFRONT_VERSION"
arch=$(uname -m)
out="$STOREFRONT_OUT/sandbox"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build --release --locked -p storefront-sandbox
binary="${CARGO_TARGET_DIR:-$PWD/target}/release/storefront-sandbox"
reported=$("$binary" --help 2>&1 | head -1 || true)
[[ "$reported" == usage:* ]] || { echo "sandbox: $binary does not run: $reported" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"

# The tarball: one top folder, the binary at its root.
name="storefront-sandbox-$version-$arch-linux"
mkdir -p "$work/$name"
cp "$binary" "$work/$name/storefront-sandbox"
cp sandbox/README.md sandbox/LICENSE-MIT sandbox/LICENSE-APACHE "$work/$name/"
tar -C "$work" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz" "$name"

# The wheel's platform tag, from the binary's needs.
needed=$(objdump -p "$binary" | awk '/NEEDED/ {print $2}' | sort -u)
policy="libc.so.6 libm.so.6 libgcc_s.so.1 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1"
for lib in $needed; do
  [[ " $policy " == *" $lib "* ]] || { echo "sandbox: the binary needs $lib, outside the manylinux policy" >&2; exit 1; }
done
glibc=$(objdump -T "$binary" | grep -Eo 'GLIBC_[0-9]+\.[0-9]+' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n | tail -1)
[[ -n "$glibc" ]] || { echo "sandbox: no glibc symbol versions found in $binary" >&2; exit 1; }
tag="manylinux_${glibc%.*}_${glibc#*.}_$arch"

python3 -m venv "$work/tools"
"$work/tools/bin/python" -m pip install --quiet --disable-pip-version-check "wheel>=0.43"
stage="$work/wheel/storefront_sandbox-$version"
mkdir -p "$stage/storefront_sandbox-$version.data/scripts" "$stage/storefront_sandbox-$version.dist-info"
cp -r sandbox/python/storefront_sandbox "$stage/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
install -m 0755 "$binary" "$stage/storefront_sandbox-$version.data/scripts/storefront-sandbox"
info="$stage/storefront_sandbox-$version.dist-info"
cp sandbox/LICENSE-MIT sandbox/LICENSE-APACHE "$info/"
{
  echo "Metadata-Version: 2.1"
  echo "Name: storefront-sandbox"
  echo "Version: $version"
  echo "Summary: The storefront sandbox: a stateful simulator of the payment and catalog service, for local development and tests"
  echo "License: MIT OR Apache-2.0"
  echo "Requires-Python: >=3.8"
  echo "Description-Content-Type: text/markdown"
  echo
  cat sandbox/README.md
} >"$info/METADATA"
printf 'Wheel-Version: 1.0\nGenerator: storefront .ci/release.d/sandbox.sh\nRoot-Is-Purelib: false\nTag: py3-none-%s\n' "$tag" >"$info/WHEEL"
printf '[pytest11]\nstorefront_sandbox = storefront_sandbox.pytest_plugin\n' >"$info/entry_points.txt"
"$work/tools/bin/python" -m wheel pack --dest-dir "$out" "$stage" >/dev/null
wheel="$out/storefront_sandbox-$version-py3-none-$tag.whl"
[[ -f "$wheel" ]] || { echo "sandbox: wheel pack did not produce $(basename "$wheel"):" >&2; ls "$out" >&2; exit 1; }

for f in "$out/$name.tar.gz" "$wheel"; do
  echo "sandbox: $(basename "$f") $(stat -c %s "$f") bytes"
done
