#!/usr/bin/env bash
# Release step (run by .ci/release): the sandbox, for people without Rust, into $STOREFRONT_OUT/sandbox/:
#   storefront-sandbox-<version>-<arch>-linux.tar.gz   the prebuilt binary, README, licences
#   storefront_sandbox-<version>-py3-none-manylinux2014_<arch>.manylinux_2_17_<arch>.musllinux_1_2_<arch>.whl
#       `pip install` puts the `storefront-sandbox` command on PATH (the binary under the wheel's
#       .data/scripts, as ruff ships its own) plus the `storefront_sandbox` package (start it from
#       Python, the pytest fixtures). The binary is static (musl, .ci/lib/cross.sh; checked), so
#       the wheel installs on any Linux of its architecture, glibc (2.17+) or musl.
# and, for PHP and JVM developers, the same binary in their own package manager's format:
#   OUT/php/storefront-sandbox-php/              the Composer package storefront/sandbox (a
#                                                "path" repository, like OUT/php/storefront-php):
#                                                composer.json ("bin": bin/storefront-sandbox,
#                                                from sandbox/php/composer.json plus the version),
#                                                README.md, licences, VERSION
#   OUT/php/storefront-sandbox-php-VERSION.zip   the same folder, zipped (top folder
#                                                storefront-sandbox-php/)
#       `composer require --dev storefront/sandbox` gives vendor/bin/storefront-sandbox, which
#       Storefront\Testing\Sandbox::binaryPath() finds through Composer's runtime API.
#   OUT/jvm/repo/dev/storefront/storefront-sandbox/VERSION/   dev.storefront:storefront-sandbox,
#       a jar holding the binary as dev/storefront/sandbox/<platform>/storefront-sandbox (JNA's
#       platform name, linux-x86-64) built from sandbox/jvm/pom.xml and deployed into the
#       release's Maven repository next to storefront and storefront-testing (jvm.sh runs first
#       and empties OUT/jvm); storefront-testing's StorefrontSandbox extracts and runs it when
#       it is on the test classpath. With STOREFRONT_INSTALL_M2=1 also installed into ~/.m2.
# The binary is the release profile's (size first, stripped), byte for byte the same in all four.
# The wheel is packed by `wheel pack` (PyPI's wheel, in a private venv removed at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/lib/composer-package.sh
: "${STOREFRONT_VERSION:?set by .ci/release}" "${STOREFRONT_OUT:?set by .ci/release}"
version="$STOREFRONT_VERSION"
arch=$(uname -m)
out="$STOREFRONT_OUT/sandbox"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A static musl binary (.ci/lib/cross.sh): no library to load, so it runs on any Linux of its
# architecture (glibc of any age, Alpine's musl), and its wheel carries both tag families.
source .ci/lib/cross.sh
binary=$(cross_sandbox "$arch-unknown-linux-musl")
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

# The wheel's platform tags: the binary needs no library at all (static), so it runs wherever
# its architecture does: manylinux2014 (glibc 2.17+) and musllinux_1_2, one compressed tag set.
if readelf -lW "$binary" | grep -q INTERP || readelf -dW "$binary" | grep -q NEEDED; then
  echo "sandbox: $binary is not a static binary" >&2
  exit 1
fi
# In the order `wheel pack` writes them into the file name.
tags=("manylinux2014_$arch" "manylinux_2_17_$arch" "musllinux_1_2_$arch")
tag=$(IFS=.; echo "${tags[*]}")

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
{
  printf 'Wheel-Version: 1.0\nGenerator: storefront .ci/release.d/sandbox.sh\nRoot-Is-Purelib: false\n'
  printf 'Tag: py3-none-%s\n' "${tags[@]}"
} >"$info/WHEEL"
printf '[pytest11]\nstorefront_sandbox = storefront_sandbox.pytest_plugin\n' >"$info/entry_points.txt"
"$work/tools/bin/python" -m wheel pack --dest-dir "$out" "$stage" >/dev/null
wheel="$out/storefront_sandbox-$version-py3-none-$tag.whl"
[[ -f "$wheel" ]] || { echo "sandbox: wheel pack did not produce $(basename "$wheel"):" >&2; ls "$out" >&2; exit 1; }

# The Composer package storefront/sandbox.
for tool in php composer java mvn unzip; do # installed by .ci/release-prerequisites --install, never here
  command -v "$tool" >/dev/null || { echo "sandbox: $tool is required (.ci/release-prerequisites)" >&2; exit 1; }
done
export COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_NO_INTERACTION=1
php_dest="$STOREFRONT_OUT/php"
php_pkg="$php_dest/storefront-sandbox-php"
php_zip="$php_dest/storefront-sandbox-php-$version.zip"
rm -rf "$php_pkg" "$php_dest"/storefront-sandbox-php-*.zip
mkdir -p "$php_pkg/bin"
install -m 0755 "$binary" "$php_pkg/bin/storefront-sandbox"
cp sandbox/README.md sandbox/LICENSE-MIT sandbox/LICENSE-APACHE "$php_pkg/"
printf '%s\n' "$version" >"$php_pkg/VERSION"
# The stable version in the package's composer.json (as php.sh does for storefront/storefront:
# without it a path repository offers a dev version, refused under minimum-stability stable).
composer_package_json sandbox/php "$php_pkg" "$version"
# The zip: one top folder (Composer strips it); the binary keeps its mode 0755 in the zip.
composer_package_zip "$php_pkg" "$php_zip"
unzip -p "$php_zip" storefront-sandbox-php/bin/storefront-sandbox | cmp -s - "$binary" \
  || { echo "sandbox: bin/storefront-sandbox in $php_zip is not the release binary" >&2; exit 1; }

# The Maven artifact dev.storefront:storefront-sandbox (sandbox/jvm/pom.xml), into the release's
# repository (JNA's platform name for this machine: the binary is built here).
case "$arch" in
  x86_64) jvm_platform=linux-x86-64 ;;
  aarch64) jvm_platform=linux-aarch64 ;;
  *) echo "sandbox: no JVM platform name for $arch" >&2; exit 1 ;;
esac
jvm_out="$STOREFRONT_OUT/jvm"
mkdir -p "$jvm_out/repo"
rm -rf "$jvm_out/repo/dev/storefront/storefront-sandbox"
resources="$work/jvm-resources"
mkdir -p "$resources/dev/storefront/sandbox/$jvm_platform" "$resources/META-INF/storefront-sandbox"
install -m 0755 "$binary" "$resources/dev/storefront/sandbox/$jvm_platform/storefront-sandbox"
cp sandbox/README.md sandbox/LICENSE-MIT sandbox/LICENSE-APACHE "$resources/META-INF/storefront-sandbox/"
m2_skip=()
[[ "${STOREFRONT_INSTALL_M2:-0}" == 1 ]] || m2_skip=(-Dmaven.install.skip=true)
mvn -B -ntp -q -Dstyle.color=never -f sandbox/jvm/pom.xml deploy "${m2_skip[@]}" \
  -Dstorefront.sandbox.resources="$resources" \
  -Dstorefront.build.dir="$work/jvm-build" \
  -DaltDeploymentRepository="storefront-dist::file://$jvm_out/repo" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
jvm_jar="$jvm_out/repo/dev/storefront/storefront-sandbox/$version/storefront-sandbox-$version.jar"
[[ -f "$jvm_jar" ]] || { echo "sandbox: mvn deploy did not write $jvm_jar" >&2; exit 1; }
unzip -p "$jvm_jar" "dev/storefront/sandbox/$jvm_platform/storefront-sandbox" | cmp -s - "$binary" \
  || { echo "sandbox: dev/storefront/sandbox/$jvm_platform/storefront-sandbox in $jvm_jar is not the release binary" >&2; exit 1; }

for f in "$out/$name.tar.gz" "$wheel" "$php_zip" "$jvm_jar"; do
  echo "sandbox: $(basename "$f") $(stat -c %s "$f") bytes"
done
