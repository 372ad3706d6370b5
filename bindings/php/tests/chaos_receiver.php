<?php

declare(strict_types=1);

/*
 * The PHP receiver of the inbox chaos test (tests/inbox_chaos.rs, `chaos_php_sqlite`): the Rust
 * receiver (tests/inbox_chaos/receiver.rs) written with the wrapper, on SQLite, in two processes
 * that the test starts, kills (SIGKILL) and restarts together:
 *
 *   receiver:  PHP_CLI_SERVER_WORKERS=2 php -d ffi.enable=1 -S 127.0.0.1:PORT chaos_receiver.php
 *   worker:    php -d ffi.enable=1 chaos_receiver.php work
 *
 * Environment: INBOX_URL (sqlite:///absolute/path.db), NOTIFY_SECRET and STOREFRONT_LIB.
 *
 * The receiver checks timestamps on real time with receive() (the sandbox stamps deliveries
 * with the real time of the attempt, however far its clock moved), and answers what the inbox
 * says. The worker claims events (2 s lease) and handles
 * each in one PDO transaction on the same file: the app's tables and upserts of
 * tests/inbox_chaos/app.rs (`times` counts bookings of an event_id, `regressions` the versions at
 * or below the app's) and completeIn(). The test creates the app's tables. The worker ends, with
 * its process group (the receiver), when its stdin closes (the test ended or died).
 */

require_once dirname(__DIR__) . '/storefront.php';

// The statements of tests/inbox_chaos/app.rs (BOOK_SQLITE, STATE_SQLITE).
const BOOK = 'INSERT INTO app_bookings (event_id, order_no, inbox_id, times) '
    . 'VALUES (?1, ?2, ?3, 1) ON CONFLICT (event_id) DO UPDATE SET times = app_bookings.times + 1';
const STATE = 'INSERT INTO app_states '
    . '(order_no, status, status_version, regressions, handled) VALUES (?1, ?2, ?3, 0, 1) '
    . 'ON CONFLICT (order_no) DO UPDATE SET status = excluded.status, '
    . 'status_version = excluded.status_version, handled = app_states.handled + 1, '
    . 'regressions = app_states.regressions '
    . '+ (CASE WHEN excluded.status_version <= app_states.status_version THEN 1 ELSE 0 END)';
const LEASE_MS = 2000;

$url = (string) getenv('INBOX_URL');
if (strncmp($url, 'sqlite:///', 10) !== 0) {
    fwrite(STDERR, "chaos receiver: INBOX_URL must be sqlite:///absolute/path.db\n");
    exit(2);
}
$path = substr($url, 9);
$inbox = Storefront\Inbox::open($url, [(string) getenv('NOTIFY_SECRET')]);

if (PHP_SAPI === 'cli-server') {
    if ($_SERVER['REQUEST_METHOD'] !== 'POST') {
        http_response_code(404);
        return;
    }
    [$status, $body] = $inbox->receive($_SERVER, (string) file_get_contents('php://input'));
    http_response_code($status);
    header('Content-Type: application/json');
    echo $body;
    return;
}

if (($argv[1] ?? '') !== 'work') {
    fwrite(STDERR, "usage: php -S HOST:PORT {$argv[0]}  |  php {$argv[0]} work\n");
    exit(2);
}

$pdo = new PDO("sqlite:$path", null, null, [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
$pdo->exec('PRAGMA busy_timeout = 10000');
$book = $pdo->prepare(BOOK);
$state = $pdo->prepare(STATE);
stream_set_blocking(STDIN, false);
while (true) {
    fread(STDIN, 4096);
    if (feof(STDIN)) {
        // The test is gone: end the receiver (our process group) with us.
        if (function_exists('posix_kill')) {
            posix_kill(0, 9);
        }
        exit(0);
    }
    try {
        $events = $inbox->claim(10, LEASE_MS);
    } catch (Storefront\StorefrontException $e) {
        fwrite(STDERR, "chaos receiver: claim: {$e->getMessage()}\n");
        usleep(100_000);
        continue;
    }
    if ($events === []) {
        usleep(50_000);
        continue;
    }
    foreach ($events as $event) {
        usleep(10_000); // the app's own work: a kill lands while events are claimed
        $pdo->beginTransaction();
        try {
            if ($event['book']) {
                $book->execute([$event['event_id'] ?? '', $event['order_no'], $event['id']]);
            }
            $state->execute([$event['order_no'], $event['status'], $event['status_version']]);
            $inbox->completeIn($pdo, $event);
            $pdo->commit();
        } catch (Storefront\InboxLeaseLostException $e) {
            $pdo->rollBack(); // another worker holds it: nothing of ours committed
        } catch (Throwable $e) {
            if ($pdo->inTransaction()) {
                $pdo->rollBack();
            }
            fwrite(STDERR, "chaos receiver: handling {$event['id']}: {$e->getMessage()}\n");
            try {
                $inbox->release($event);
            } catch (Storefront\StorefrontException) {
            }
        }
    }
}
