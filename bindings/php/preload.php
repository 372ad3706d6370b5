<?php

declare(strict_types=1);

// Preloading for PHP-FPM and other web SAPIs, where ffi.enable=preload (the default outside
// the CLI) allows FFI only to preloaded code. In php.ini (paths of your installation):
//
//   opcache.enable=1
//   opcache.preload=/app/vendor/storefront/storefront/preload.php
//   ffi.enable=preload
//
// and, when the FPM master starts as root (then opcache.preload_user is required, and PHP
// refuses FFI::load during such a preload), bind the library at startup with ffi.preload:
//
//   opcache.preload_user=www-data
//   ffi.preload=/etc/php/storefront-ffi.h   ; php preload.php --ffi-header /etc/php/storefront-ffi.h
//
// As opcache.preload, this file binds the C library under the FFI scope "storefront" (FFI::load
// of the shipped header with FFI_SCOPE and an absolute FFI_LIB; nothing to do when ffi.preload
// already did) and preloads the wrapper's classes, whose FFI calls are then allowed;
// Storefront\Library takes the library with FFI::scope("storefront"). The library and the header
// are the package's own (STOREFRONT_LIB and STOREFRONT_HEADER, set for the process that
// preloads, override). No client is created here: a Storefront\Client belongs to a worker.
//
// Run as a command, `php preload.php --ffi-header FILE` writes the ffi.preload header for this
// package's library to FILE (regenerate it when the package moves or is upgraded).

require_once __DIR__ . '/storefront.php';

if (PHP_SAPI === 'cli' && isset($argv[0]) && realpath($argv[0]) === __FILE__) {
    if (($argv[1] ?? '') !== '--ffi-header' || !isset($argv[2])) {
        fwrite(STDERR, "usage: php {$argv[0]} --ffi-header FILE   (writes the header to name in ffi.preload)\n");
        exit(2);
    }
    file_put_contents($argv[2], Storefront\Library::scopeHeader());
    echo "wrote $argv[2]; php.ini:\n  ffi.enable=preload\n  ffi.preload=" . realpath($argv[2])
        . "\n  opcache.enable=1\n  opcache.preload=" . __FILE__ . "\n";
    return;
}

Storefront\Library::preload();

foreach (glob(__DIR__ . '/src/*.php') ?: [] as $file) {
    $class = 'Storefront\\' . basename($file, '.php');
    if (!class_exists($class)) {
        throw Storefront\LibraryException::because("preload_failed", "preload: $file does not declare $class: the package is incomplete; reinstall it");
    }
}
