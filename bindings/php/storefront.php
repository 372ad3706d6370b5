<?php

declare(strict_types=1);

// Loads the storefront PHP wrapper without Composer: `require 'storefront.php';` registers a
// PSR-4 autoloader for Storefront\ => src/ (the same mapping composer.json declares; with
// Composer, require vendor/autoload.php instead).
spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'Storefront\\', 11) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 11)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
