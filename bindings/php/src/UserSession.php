<?php

declare(strict_types=1);

namespace Storefront;

/** Calls on behalf of one user (catalog orders and payments, userinfo). */
final class UserSession
{
    private Client $client;
    private string $token;

    public function __construct(Client $client, string $token)
    {
        $this->client = $client;
        $this->token = $token;
    }

    /**
     * GET {userinfo_endpoint}: the user's claims.
     *
     * @return array<string, mixed>
     */
    public function userinfo(): array
    {
        return $this->client->call('sf_userinfo_get', $this->token);
    }

    /**
     * GET /openapi/v1/merchant with the user's token.
     *
     * @return array<string, mixed>
     */
    public function merchantProfile(): array
    {
        return $this->client->call('sf_merchant_profile_get', $this->token);
    }

    /**
     * One page of products with the user's token.
     *
     * @param array{page?: int, limit?: int, gd_no?: string, search_value?: string} $query
     * @return array<string, mixed>
     */
    public function products(array $query = []): array
    {
        return $this->client->call('sf_products_list', $this->token, Client::query($query));
    }

    /**
     * Every product over all pages, with the user's token.
     *
     * @param array{limit?: int, gd_no?: string, search_value?: string} $query
     * @return \Generator<int, array<string, mixed>>
     */
    public function iterProducts(array $query = []): \Generator
    {
        return Client::pages(fn (array $q) => $this->products($q), $query);
    }

    /**
     * Creates a catalog order and returns its order_no. Never re-sent by the SDK: on
     * OutcomeUnknownException follow advice() (do not order again automatically; lookup()
     * holds the request).
     *
     * @param int $quantity an int from 1 (never a float or a numeric string)
     * @param array<string, string>|null $otherIpu keys from the product's other_ipu_cnf (see Webhook::otherIpu)
     */
    public function createOrder(string $gdNo, $quantity, string $paymentNo, ?array $otherIpu = null): string
    {
        $request = Input::check('order', ['gd_no' => $gdNo, 'quantity' => $quantity, 'payment_no' => $paymentNo, 'other_ipu' => $otherIpu]);
        return $this->client->call('sf_order_create', $this->token, Library::toJson($request, 'request_json'))['order_no'];
    }

    /**
     * The catalog order (its status 0-3 is the order numbering, not the payment's).
     *
     * @return array<string, mixed>
     */
    public function order(string $orderNo): array
    {
        return $this->client->call('sf_order_get', $this->token, $orderNo);
    }

    /**
     * Starts payment: ['trade_no', 'redirect' (absolute), 'expire_time']. Not proof of payment.
     *
     * @return array{trade_no: string, redirect: string, expire_time: int}
     */
    public function startPayment(string $orderNo, string $paymentNo): array
    {
        return $this->client->call('sf_payment_start', $this->token, $orderNo, $paymentNo);
    }

    /** Payment status: 0 awaiting payment, 1 paid, 2 cancelled. */
    public function paymentStatus(string $orderNo): int
    {
        return (int) $this->client->call('sf_payment_status', $this->token, $orderNo)['status'];
    }

    /**
     * Polls until paid (1) or cancelled (2), honouring Retry-After, then reads the order:
     * ['outcome' => 'final', 'payment_status' => int, 'order' => [...]]; after $timeoutMs without
     * a final status returns ['outcome' => 'still_pending', 'last_status' => int, 'waited_ms' =>
     * int, 'last_poll_failed' => bool] (an outcome, not an exception).
     *
     * $intervalMs and $timeoutMs are non-negative ints (never floats or numeric strings).
     *
     * @param int $intervalMs
     * @param int $timeoutMs
     * @return array<string, mixed>
     */
    public function waitForPayment(string $orderNo, $intervalMs, $timeoutMs): array
    {
        $interval = Input::int('interval_ms', $intervalMs, 0);
        $timeout = Input::int('timeout_ms', $timeoutMs, 0);
        return $this->client->call('sf_payment_wait', $this->token, $orderNo, $interval, $timeout);
    }
}
