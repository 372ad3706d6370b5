<?php

declare(strict_types=1);

/*
 * The webhook inbox, receiver and worker in one file.
 *
 *   receiver:  php -d ffi.enable=1 -S 127.0.0.1:8080 examples/inbox_receiver.php   (or php-fpm: README "Preloading")
 *   worker:    php examples/inbox_receiver.php work                  (cron, systemd; as many as you like)
 *
 * INBOX_URL (default sqlite:///tmp/storefront-inbox.db) and NOTIFY_SECRET (comma-separated during
 * a rotation) configure both. The worker books each paid payment event once, in the same PDO
 * transaction that completes the event.
 */

require_once dirname(__DIR__) . '/storefront.php';   // in an app: vendor/autoload.php

$url = getenv('INBOX_URL') ?: 'sqlite:///tmp/storefront-inbox.db';
$secrets = explode(',', (string) getenv('NOTIFY_SECRET'));
$inbox = Storefront\Inbox::open($url, $secrets);

if (PHP_SAPI !== 'cli') {
    // The receiver: store, then answer what the inbox says (never 2xx for what was not stored).
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

// The worker: the app's bookings live in the inbox's SQLite file, so one PDO transaction holds
// the booking and the completion.
if (strncmp($url, 'sqlite://', 9) !== 0) {
    fwrite(STDERR, "this example books into the inbox's SQLite file: INBOX_URL=sqlite:///path.db\n");
    exit(2);
}
$pdo = new PDO('sqlite:' . substr($url, 9), null, null, [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
$pdo->exec('PRAGMA busy_timeout = 5000');
$pdo->exec('CREATE TABLE IF NOT EXISTS bookings (event_id TEXT PRIMARY KEY, order_no TEXT NOT NULL, amount_minor INTEGER NOT NULL, currency TEXT NOT NULL)');

while (true) {
    $events = $inbox->claim(10, 30_000);
    if ($events === []) {
        sleep(1);
        continue;
    }
    foreach ($events as $event) {
        $pdo->beginTransaction();
        try {
            if ($event['book']) {
                $pdo->prepare('INSERT INTO bookings (event_id, order_no, amount_minor, currency) VALUES (?, ?, ?, ?)')
                    ->execute([$event['event_id'], $event['order_no'], $event['amount_minor'], $event['currency']]);
                echo "booked {$event['order_no']} ({$event['event_id']}): {$event['amount_minor']} {$event['currency']}\n";
            } else {
                echo "{$event['order_no']} is {$event['status']} (version {$event['status_version']})\n";
            }
            $inbox->completeIn($pdo, $event);
            $pdo->commit();
        } catch (Storefront\InboxLeaseLostException $e) {
            $pdo->rollBack();                   // another worker holds it now: nothing booked here
        } catch (Throwable $e) {
            $pdo->rollBack();
            $inbox->release($event);            // handed out again at once
            fwrite(STDERR, "{$event['id']}: {$e->getMessage()}\n");
            sleep(1);
        }
    }
}
