<?php

declare(strict_types=1);

namespace Storefront;

use FFI\CData;

/**
 * A storefront client: one connection pool, one client-credentials token cache and one
 * runtime inside the C library. Client-credentials calls are methods here; calls on behalf of
 * a user are on the UserSession returned by user().
 *
 * Configuration keys are the core's: base_url (with its path prefix), token_endpoint,
 * userinfo_endpoint, client_id, client_secret, and optionally scopes, attempt_timeout_ms,
 * overall_deadline_ms, retry (max_attempts, base_delay_ms, max_delay_ms, max_retry_after_ms),
 * user_agent, root_ca_pem, allow_insecure_loopback (plain HTTP to loopback hosts, sandbox only),
 * max_response_bytes, token_refresh_margin_ms, rate_limits, max_in_flight, shared_state (a
 * store URL, `sqlite:///abs/path.db`, `redis://host:port/db` or `postgres://…`, through which
 * every process using the client id shares the rate budgets, the pause after a 429 and the
 * client-credentials token; README "Under php-fpm"). HTTPS only otherwise. An unknown key (at any
 * depth) or a value the field cannot hold is a ValidationException naming the key.
 *
 * Persistent clients (PHP-FPM, like PDO::ATTR_PERSISTENT): `Client::persistent($config)` or
 * `new Client($config, ['persistent' => true])` takes a handle on the process's shared client
 * for that configuration (sf_client_persistent): its runtime, connection pool and token outlive
 * the request and serve every later request of the same worker process with the same
 * configuration. close() and the destructor release only the handle.
 */
final class Client
{
    private ?CData $handle;
    private bool $persistent;

    /**
     * @param array<string, mixed> $config
     * @param array{persistent?: bool} $options
     */
    public function __construct(array $config, array $options = [])
    {
        foreach ($options as $key => $value) {
            if ($key !== 'persistent') {
                throw Input::refused((string) $key, "unknown option `$key` (expected: persistent)");
            }
            if (!is_bool($value)) {
                throw Input::refused('persistent', '`persistent` must be true or false');
            }
        }
        $this->persistent = $options['persistent'] ?? false;
        $json = Library::toJson(Input::check('config', $config), 'config_json');
        if ($this->persistent) {
            Library::pinLibrary();
            $this->handle = Library::callHandle('sf_client_persistent', 'sf_client', $json);
        } else {
            $this->handle = Library::callHandle('sf_client_new', 'sf_client', $json);
        }
    }

    /**
     * A handle on this worker process's shared client for $config (created by the first call
     * with that configuration; later requests served by the same process reuse its runtime,
     * connection pool and token).
     *
     * @param array<string, mixed> $config
     */
    public static function persistent(array $config): self
    {
        return new self($config, ['persistent' => true]);
    }

    /**
     * The client configured by the STOREFRONT_* environment variables (see configFromEnv()):
     * the same code runs against production and against storefront-sandbox, which prints the
     * lines to set. $options as for the constructor (`['persistent' => true]` under php-fpm).
     *
     * @param array{persistent?: bool} $options
     */
    public static function fromEnv(array $options = []): self
    {
        return new self(self::configFromEnv(), $options);
    }

    /**
     * The configuration array from the process environment, read by the core's
     * Config::from_env (sf_config_from_env; the same rule in every language):
     * STOREFRONT_BASE_URL, STOREFRONT_TOKEN_ENDPOINT, STOREFRONT_CLIENT_ID,
     * STOREFRONT_CLIENT_SECRET (required), STOREFRONT_USERINFO_ENDPOINT, STOREFRONT_SCOPES
     * (space-separated), STOREFRONT_ALLOW_INSECURE_LOOPBACK (1/true),
     * STOREFRONT_ROOT_CA_PEM_FILE (trust only this PEM file's roots, e.g. the sandbox's --tls CA),
     * STOREFRONT_SHARED_STATE. The process environment is what getenv() of the C library sees:
     * putenv() and php-fpm's `env[...]` pool settings reach it; $_ENV alone does not. A missing
     * required variable or a bad value is a ConfigException naming the variable (never showing a
     * secret). The array holds the client secret: do not log it. Add keys before passing it to
     * `new Client(...)` to change other settings.
     *
     * @return array<string, mixed>
     */
    public static function configFromEnv(): array
    {
        $config = Library::callJson('sf_config_from_env');
        if (!is_array($config)) {
            throw new \UnexpectedValueException('sf_config_from_env did not return an object');
        }
        return $config;
    }

    /** Whether this is a handle on a persistent (per-process, shared) client. */
    public function isPersistent(): bool
    {
        return $this->persistent;
    }

    /** Releases the client (idempotent); for a persistent client, only this handle. */
    public function close(): void
    {
        if ($this->handle !== null) {
            Library::ffi()->sf_client_free($this->handle);
            $this->handle = null;
        }
    }

    public function __destruct()
    {
        $this->close();
    }

    /**
     * Raw FFI call on this client's handle: not API (private). The wrapper's own UserSession
     * and Reconciler reach call() and callText() through a closure bound to Client's scope
     * (UserSession::call, Reconciler::callText), which is not API either.
     *
     * @param mixed ...$args
     * @return mixed
     */
    private function call(string $function, ...$args)
    {
        if ($this->handle === null) {
            throw new \LogicException('the client is closed');
        }
        return Library::callJson($function, $this->handle, ...$args);
    }

    /**
     * Like call(), the result string as returned (JSON lines, for Reconciler). Private.
     *
     * @param mixed ...$args
     */
    private function callText(string $function, ...$args): string
    {
        if ($this->handle === null) {
            throw new \LogicException('the client is closed');
        }
        return Library::callString($function, $this->handle, ...$args);
    }

    /** A session for calls on behalf of the user whose authorized access token this is. */
    public function user(string $token): UserSession
    {
        return new UserSession($this, $token);
    }

    /**
     * Obtains (or reuses) the client-credentials token; returns what was granted (scope,
     * expires_in), never the token.
     *
     * @return array<string, mixed>
     */
    public function authenticate(): array
    {
        return $this->call('sf_client_authenticate');
    }

    /**
     * Where this client's rate budgets and token live and what the shared store holds
     * (sf_client_shared_state): ['backend' => 'memory'|'sqlite'|'redis'|'postgres',
     * 'available' => bool (false while the store does not answer), 'stored' => null |
     * ['windows' => [['class' => 'create'|'read'|'requeue', 'in_window' => int,
     * 'paused_for_ms' => ?int], ...], 'token_shared' => bool, 'token_expires_in_ms' => ?int,
     * 'token_lease_held' => bool, 'token_failures_in_a_row' => int]]. Never the token. One
     * store round trip; works the same on a persistent client's handle.
     *
     * @return array{backend: string, available: bool, stored: ?array<string, mixed>}
     */
    public function sharedState(): array
    {
        return $this->call('sf_client_shared_state');
    }

    /** GET /openapi/v1/merchant with the client token. */
    public function merchantProfile(): MerchantProfile
    {
        return new MerchantProfile($this->call('sf_merchant_profile_get', null));
    }

    /**
     * One page of products: ->list (list<Product>), ->total, ->page, ->limit.
     *
     * @param array{page?: int, limit?: int, gd_no?: string, search_value?: string} $query
     */
    public function products(array $query = []): ProductPage
    {
        return new ProductPage($this->call('sf_products_list', null, self::query($query)));
    }

    /**
     * Every product over all pages.
     *
     * @param array{limit?: int, gd_no?: string, search_value?: string} $query
     * @return \Generator<int, Product>
     */
    public function iterProducts(array $query = []): \Generator
    {
        return self::pages(fn (array $q) => $this->products($q), $query);
    }

    /**
     * The merchant-collection channel directory.
     *
     * @return list<Channel>
     */
    public function channels(): array
    {
        return Channel::listOf($this->call('sf_channels_list')['items']);
    }

    /**
     * Creates a merchant payment from a MerchantPaymentRequest (its key made before sending:
     * persist $request->idempotencyKey() first) or an array of the contract's fields
     * (external_reference, amount_minor, currency, optional idempotency_key, payment_no,
     * description, expires_in, notify_*, return_url; a key is generated here when absent).
     * Every StorefrontException thrown carries the key sent (idempotencyKey()), so a timeout, a
     * 202 or an unknown outcome can be retried with the same key and parameters. The result has
     * the payment and the idempotency_key used; its status_version is null (a create answer
     * does not carry it). Its checkout_url carries a checkout token: never log it.
     *
     * @param array<string, mixed>|MerchantPaymentRequest $request
     */
    public function createMerchantPayment($request): CreatedMerchantPayment
    {
        if (!$request instanceof MerchantPaymentRequest) {
            if (!is_array($request)) {
                throw Input::refused('request', '`request` must be a MerchantPaymentRequest or an array of its fields');
            }
            $request = new MerchantPaymentRequest($request);
        }
        try {
            $created = $this->call('sf_merchant_payment_create', Library::toJson($request->toArray(), 'request_json'));
        } catch (StorefrontException $e) {
            throw $e->withIdempotencyKey($request->idempotencyKey());
        }
        return new CreatedMerchantPayment($created);
    }

    /** GET /openapi/v1/merchant-payments/{order_no}. */
    public function merchantPayment(string $orderNo): MerchantPayment
    {
        return new MerchantPayment($this->call('sf_merchant_payment_get', $orderNo));
    }

    /**
     * Merchant payments by external_reference and/or order_no (newest first).
     *
     * @param array{external_reference?: string, order_no?: string, limit?: int} $query
     * @return list<MerchantPayment>
     */
    public function listMerchantPayments(array $query): array
    {
        return MerchantPayment::listOf($this->call('sf_merchant_payments_list', Library::toJson((object) Input::check('merchant_payments_query', $query), 'query_json'))['items']);
    }

    /**
     * Notification delivery records of a payment (limit 0 = the service default; an int from 0
     * to 4294967295, never a float or a numeric string).
     *
     * @param int $limit
     * @return list<NotificationRecord>
     */
    public function notificationRecords(string $orderNo, $limit = 0): array
    {
        return NotificationRecord::listOf($this->call('sf_notification_records_list', $orderNo, Input::int('limit', $limit, 0, Input::U32_MAX))['items']);
    }

    /** Re-queues a notification whose automatic retries are exhausted. */
    public function requeueNotification(string $orderNo, string $eventId): bool
    {
        return (bool) $this->call('sf_notification_requeue', $orderNo, $eventId)['accepted'];
    }

    /**
     * The reconciler: one ReconcileReport per record of the shop's own bookings, in order,
     * looked up as the generator is consumed (see ReconcileReport for the findings). A record
     * is ['external_reference', 'expected_amount' (minor units), 'currency', 'order_no'?,
     * 'test_mode'?, 'booked_status_version'?, 'booked_event_id'? (set = booked as paid)].
     * Options: 'requeue_failed' (re-queue failed notification deliveries of payments found
     * paid but not booked), 'window' (['from'?, 'to'?], RFC 3339 bounds on expires_at),
     * 'limit' (1 to 100, default 100), 'cursor' (the last report's cursor, to resume). Unknown
     * keys are a ValidationException naming them, raised by this call.
     *
     * @param list<array<string, mixed>> $records
     * @param array<string, mixed> $options
     * @return \Generator<int, ReconcileReport>
     */
    public function reconcile(array $records, array $options = []): \Generator
    {
        return Reconciler::run($this, $records, $options);
    }

    /**
     * @internal the products query as JSON (null when empty), checked
     * @param array<string, mixed> $query
     */
    public static function query(array $query): ?string
    {
        $present = Input::check('products_query', $query);
        return $present === [] ? null : Library::toJson($present, 'query_json');
    }

    /**
     * @internal
     * @param callable(array<string, mixed>): ProductPage $fetch
     * @param array<string, mixed> $query
     * @return \Generator<int, Product>
     */
    public static function pages(callable $fetch, array $query): \Generator
    {
        $page = Input::int('page', $query['page'] ?? 1, 1, Input::U32_MAX);
        while (true) {
            $result = $fetch(['page' => $page] + $query);
            foreach ($result->list as $product) {
                yield $product;
            }
            if ($result->list === [] || $result->page * $result->limit >= $result->total) {
                return;
            }
            $page = $result->page + 1;
        }
    }
}
