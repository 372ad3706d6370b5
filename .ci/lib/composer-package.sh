# Sourced by the release steps that build a Composer package folder and its zip (.ci/release.d/php.sh:
# storefront/storefront, .ci/release.d/sandbox.sh: storefront/sandbox). Needs php and composer.
#
#   composer_package_json SOURCE_DIR PKG VERSION
#       checks SOURCE_DIR/composer.json (composer validate --strict), then writes it to
#       PKG/composer.json with "version": VERSION after its first two fields: without it Composer
#       takes a "path" repository's package for a dev version, which `composer require` refuses
#       under minimum-stability stable. The package's file must then be valid but for
#       Packagist's advice to leave the version out (the package is not on Packagist).
#   composer_package_zip PKG ZIP
#       zips the folder PKG into ZIP under one top folder named as PKG is (Composer strips it;
#       unzip gives the package folder), files in sorted order, modes kept, compressed.
# Both fail, saying why on stderr, when a check fails.

composer_package_json() {
  local source_dir=$1 pkg=$2 version=$3 warnings
  (cd "$source_dir" && composer validate --strict --no-check-lock --quiet) ||
    { echo "composer package: $source_dir/composer.json is not valid (composer validate --strict)" >&2; return 1; }
  php -r '
    [$script, $source, $file, $version] = $argv;
    $json = json_decode(file_get_contents($source), true, 512, JSON_THROW_ON_ERROR);
    $json = array_slice($json, 0, 2, true) + ["version" => $version] + $json;
    file_put_contents($file, json_encode($json, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n");
  ' "$source_dir/composer.json" "$pkg/composer.json" "$version"
  warnings=$(cd "$pkg" && composer validate --strict --no-check-lock 2>&1 | grep '^- ' || true)
  [[ "$warnings" == "- The version field is present, it is recommended to leave it out if the package is published on Packagist." ]] ||
    { echo "composer package: composer validate of $pkg: $warnings" >&2; return 1; }
}

composer_package_zip() {
  php -d phar.readonly=0 -r '
    [$script, $pkg, $zip] = $argv;
    $archive = new PharData($zip, 0, null, Phar::ZIP);
    $files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($pkg, FilesystemIterator::SKIP_DOTS));
    $paths = [];
    foreach ($files as $file) {
        $paths[] = $file->getPathname();
    }
    sort($paths);
    foreach ($paths as $path) {
        $archive->addFile($path, basename($pkg) . substr($path, strlen($pkg)));
    }
    $archive->compressFiles(Phar::GZ);
  ' "$1" "$2"
}
