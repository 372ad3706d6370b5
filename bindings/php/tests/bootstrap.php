<?php

declare(strict_types=1);

// The wrapper's PSR-4 autoloader (storefront.php: Storefront\ => src/, as composer.json
// declares), the sandbox harness, and the repository's debug library unless STOREFRONT_LIB
// names another (the header is the repository's include/storefront.h).
require_once dirname(__DIR__) . '/storefront.php';
require_once __DIR__ . '/SandboxHarness.php';

$repo = dirname(__DIR__, 3);
if (getenv('STOREFRONT_LIB') === false) {
    putenv("STOREFRONT_LIB=$repo/target/debug/libstorefront.so");
}
