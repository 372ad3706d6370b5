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
 * overall_deadline_ms, retry, user_agent, root_ca_pem, allow_insecure_loopback (plain HTTP to
 * loopback hosts, sandbox only). HTTPS only otherwise.
 */
final class Client
{
    private ?CData $handle;

    /** @param array<string, mixed> $config */
    public function __construct(array $config)
    {
        $this->handle = Library::callHandle('sf_client_new', 'sf_client', Library::toJson($config));
    }

    /** Releases the client (idempotent). */
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
     * @internal used by UserSession
     * @param mixed ...$args
     * @return mixed
     */
    public function call(string $function, ...$args)
    {
        if ($this->handle === null) {
            throw new \LogicException('the client is closed');
        }
        return Library::callJson($function, $this->handle, ...$args);
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
     * GET /openapi/v1/merchant with the client token.
     *
     * @return array<string, mixed>
     */
    public function merchantProfile(): array
    {
        return $this->call('sf_merchant_profile_get', null);
    }

    /**
     * One page of products: ['list' => [...], 'total', 'page', 'limit'].
     *
     * @param array{page?: int, limit?: int, gd_no?: string, search_value?: string} $query
     * @return array<string, mixed>
     */
    public function products(array $query = []): array
    {
        return $this->call('sf_products_list', null, self::query($query));
    }

    /**
     * Every product over all pages.
     *
     * @param array{limit?: int, gd_no?: string, search_value?: string} $query
     * @return \Generator<int, array<string, mixed>>
     */
    public function iterProducts(array $query = []): \Generator
    {
        return self::pages(fn (array $q) => $this->products($q), $query);
    }

    /**
     * The merchant-collection channel directory.
     *
     * @return list<array<string, mixed>>
     */
    public function channels(): array
    {
        return $this->call('sf_channels_list')['items'];
    }

    /**
     * Creates a merchant payment from the contract's fields (external_reference, amount_minor,
     * currency, optional idempotency_key, payment_no, description, expires_in, notify_*,
     * return_url). The result has the payment and the idempotency_key used: persist it to
     * retry with the same key. Its checkout_url carries a checkout token: never log it.
     *
     * @param array<string, mixed> $request
     * @return array<string, mixed>
     */
    public function createMerchantPayment(array $request): array
    {
        return $this->call('sf_merchant_payment_create', Library::toJson($request));
    }

    /**
     * GET /openapi/v1/merchant-payments/{order_no}.
     *
     * @return array<string, mixed>
     */
    public function merchantPayment(string $orderNo): array
    {
        return $this->call('sf_merchant_payment_get', $orderNo);
    }

    /**
     * Merchant payments by external_reference and/or order_no (newest first).
     *
     * @param array{external_reference?: string, order_no?: string, limit?: int} $query
     * @return list<array<string, mixed>>
     */
    public function listMerchantPayments(array $query): array
    {
        return $this->call('sf_merchant_payments_list', Library::toJson((object) $query))['items'];
    }

    /**
     * Notification delivery records of a payment (limit 0 = the service default).
     *
     * @return list<array<string, mixed>>
     */
    public function notificationRecords(string $orderNo, int $limit = 0): array
    {
        return $this->call('sf_notification_records_list', $orderNo, $limit)['items'];
    }

    /** Re-queues a notification whose automatic retries are exhausted. */
    public function requeueNotification(string $orderNo, string $eventId): bool
    {
        return (bool) $this->call('sf_notification_requeue', $orderNo, $eventId)['accepted'];
    }

    /** @param array<string, mixed> $query */
    private static function query(array $query): ?string
    {
        $present = array_filter($query, fn ($v) => $v !== null);
        return $present === [] ? null : Library::toJson($present);
    }

    /**
     * @internal
     * @param array<string, mixed> $query
     * @return \Generator<int, array<string, mixed>>
     */
    public static function pages(callable $fetch, array $query): \Generator
    {
        $page = (int) ($query['page'] ?? 1);
        while (true) {
            $result = $fetch(['page' => $page] + $query);
            foreach ($result['list'] as $product) {
                yield $product;
            }
            if ($result['list'] === [] || $result['page'] * $result['limit'] >= $result['total']) {
                return;
            }
            $page = $result['page'] + 1;
        }
    }
}
