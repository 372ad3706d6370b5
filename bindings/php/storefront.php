<?php

declare(strict_types=1);

// Loads the storefront PHP wrapper (no Composer needed): require this file.
require_once __DIR__ . '/src/Library.php';
require_once __DIR__ . '/src/Exceptions.php';
require_once __DIR__ . '/src/Client.php';
require_once __DIR__ . '/src/UserSession.php';
require_once __DIR__ . '/src/Webhook.php';
