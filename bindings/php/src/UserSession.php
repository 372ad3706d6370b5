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
     * Client::call() on this session's client. Raw FFI calls are not API: Client::call() is
     * private, and this session (part of the wrapper) reaches it in Client's scope.
     *
     * @param mixed ...$args
     * @return mixed
     */
    private function call(string $function, ...$args)
    {
        static $call = null;
        $call ??= \Closure::bind(static fn (Client $client, string $function, array $args) => $client->call($function, ...$args), null, Client::class);
        return $call($this->client, $function, $args);
    }

    /** GET {userinfo_endpoint}: the user's claims. */
    public function userinfo(): Userinfo
    {
        return new Userinfo($this->call('sf_userinfo_get', $this->token));
    }

    /** GET /openapi/v1/merchant with the user's token. */
    public function merchantProfile(): MerchantProfile
    {
        return new MerchantProfile($this->call('sf_merchant_profile_get', $this->token));
    }

    /**
     * One page of products with the user's token.
     *
     * @param array{page?: int, limit?: int, gd_no?: string, search_value?: string} $query
     */
    public function products(array $query = []): ProductPage
    {
        return new ProductPage($this->call('sf_products_list', $this->token, Client::query($query)));
    }

    /**
     * Every product over all pages, with the user's token.
     *
     * @param array{limit?: int, gd_no?: string, search_value?: string} $query
     * @return \Generator<int, Product>
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
        return $this->call('sf_order_create', $this->token, Library::toJson($request, 'request_json'))['order_no'];
    }

    /** The catalog order (its status 0-3 is the order numbering, not the payment's). */
    public function order(string $orderNo): CatalogOrder
    {
        return new CatalogOrder($this->call('sf_order_get', $this->token, $orderNo));
    }

    /** Starts payment: ->trade_no, ->redirect (absolute), ->expire_time. Not proof of payment. */
    public function startPayment(string $orderNo, string $paymentNo): PaymentStart
    {
        return new PaymentStart($this->call('sf_payment_start', $this->token, $orderNo, $paymentNo));
    }

    /** Payment status: 0 awaiting payment, 1 paid, 2 cancelled. */
    public function paymentStatus(string $orderNo): int
    {
        return (int) $this->call('sf_payment_status', $this->token, $orderNo)['status'];
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
        return $this->call('sf_payment_wait', $this->token, $orderNo, $interval, $timeout);
    }
}
