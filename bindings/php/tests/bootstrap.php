<?php

declare(strict_types=1);

require_once dirname(__DIR__) . '/storefront.php';
require_once __DIR__ . '/SandboxHarness.php';

$repo = dirname(__DIR__, 3);
if (getenv('STOREFRONT_LIB') === false) {
    putenv("STOREFRONT_LIB=$repo/target/debug/libstorefront.so");
}
