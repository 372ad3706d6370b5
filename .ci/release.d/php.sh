#!/usr/bin/env bash
# Release step (run by .ci/release): the Composer package storefront/storefront.
#   OUT/php/storefront-php/              the package folder (a Composer "path" repository)
#   OUT/php/storefront-php-VERSION.zip   the same folder, zipped (top folder storefront-php/)
# The package holds composer.json, src/ (PSR-4 Storefront\ => src/; src/Testing holds the
# PHPUnit sandbox fixture Storefront\Testing\*, not the sandbox program), storefront.php
# (autoloader without Composer), preload.php (opcache.preload for ffi.enable=preload), README.md, VERSION,
# include/storefront.h (the shipped header) and lib/<platform>/libstorefront.so (the stripped
# release library; platform as Storefront\Library::platform() names it, e.g. linux-x86_64).
# Storefront\Library finds the header and the library inside the package, relative to its own
# files: no environment variable is needed. The package's composer.json carries the version
# (Cargo.toml's [workspace.package], also in VERSION and checked against sf_version() on load):
# a path repository then offers a stable 0.1.0, not a dev version, so the README's
# `composer require storefront/storefront` resolves under minimum-stability stable.
# (bindings/php/composer.json itself has no version field, as Packagist recommends.)
#
# Environment (exported by .ci/release): STOREFRONT_VERSION, STOREFRONT_RELEASE_LIB,
# STOREFRONT_OUT. Optional: STOREFRONT_PHP_PLATFORM (default: <os>-<machine> of this machine,
# where the release library was built).
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/lib/composer-package.sh
version="${STOREFRONT_VERSION:?set by .ci/release}"
release_lib="${STOREFRONT_RELEASE_LIB:?set by .ci/release}"
out="${STOREFRONT_OUT:?set by .ci/release}"
[[ -f "$release_lib" ]] || { echo "php release: no release library at $release_lib" >&2; exit 1; }

for tool in php composer; do # installed by .ci/release-prerequisites --install, never here
  command -v "$tool" >/dev/null || { echo "php release: $tool is required (.ci/release-prerequisites)" >&2; exit 1; }
done
php -r 'exit(extension_loaded("ffi") ? 0 : 1);' || { echo "php release: PHP lacks the FFI extension" >&2; exit 1; }
export COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_NO_INTERACTION=1

platform="${STOREFRONT_PHP_PLATFORM:-$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m)}"
platform="${platform/-amd64/-x86_64}"
platform="${platform/-arm64/-aarch64}"

dest="$out/php"
pkg="$dest/storefront-php"
zip="$dest/storefront-php-$version.zip"
rm -rf "$pkg" "$dest"/storefront-php-*.zip
mkdir -p "$pkg/src/Testing" "$pkg/include" "$pkg/lib/$platform"

src=bindings/php
cp "$src/storefront.php" "$src/preload.php" "$src/README.md" "$pkg/"
cp "$src"/src/*.php "$pkg/src/"
cp "$src"/src/Testing/*.php "$pkg/src/Testing/"
cp include/storefront.h "$pkg/include/storefront.h"
install -m 0644 "$release_lib" "$pkg/lib/$platform/libstorefront.so"
printf '%s\n' "$version" >"$pkg/VERSION"
for license in LICENSE LICENSE-MIT LICENSE-APACHE; do
  [[ -f "$license" ]] && cp "$license" "$pkg/"
done

# The source composer.json is valid (strictly), then the package's gets the stable version:
# without it Composer takes a path repository's package as a dev version and
# `composer require storefront/storefront` fails under minimum-stability stable.
composer_package_json "$src" "$pkg" "$version"
[[ "$(php -r 'echo json_decode(file_get_contents($argv[1]), true)["version"];' "$pkg/composer.json")" == "$version" ]]
# The wrapper loads its own library and header with no environment.
for file in "$pkg"/src/*.php "$pkg"/src/Testing/*.php "$pkg"/*.php; do php -l "$file" >/dev/null; done
loaded=$(cd / && env -u STOREFRONT_LIB -u STOREFRONT_HEADER php -r '
  require $argv[1] . "/storefront.php";
  echo Storefront\Library::version(), " ", Storefront\Library::libraryPath(), " ", Storefront\Library::headerPath();
' "$pkg")
read -r loaded_version loaded_lib loaded_header <<<"$loaded"
[[ "$loaded_version" == "$version" ]] || { echo "php release: library reports $loaded_version, expected $version" >&2; exit 1; }
[[ "$loaded_lib" == "$pkg/lib/$platform/libstorefront.so" && "$loaded_header" == "$pkg/include/storefront.h" ]] || {
  echo "php release: the packaged wrapper loaded $loaded_lib and $loaded_header, not its own files" >&2
  exit 1
}

# The zip: one top folder storefront-php/ (Composer strips it; unzip gives the package folder).
composer_package_zip "$pkg" "$zip"

echo "php: $pkg ($platform) and $(basename "$zip") ($(du -k "$zip" | cut -f1) KiB)"
