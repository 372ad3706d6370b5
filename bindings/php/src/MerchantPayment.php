<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A merchant payment (query, list item, notification data; the create answer is a
 * CreatedMerchantPayment). Only `status` `paid` confirms payment: PaymentStatus::of($payment).
 * `checkout_url` carries a checkout token: never log it (var_dump and print_r show it redacted).
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $result['key'], isset(), foreach, count(), json_encode() and
 * toArray() give the contract's JSON exactly as received (nested values as arrays).
 */
readonly class MerchantPayment extends Result
{
    /** Service-assigned payment number. */
    public string $order_no;
    /** The merchant's business order reference. */
    public string $external_reference;
    /** The channel chosen by the buyer; empty until then. */
    public string $payment_no;
    /** Amount in minor units of `currency` (an exact integer, never a float). */
    public int $amount_minor;
    /** Uppercase currency code. */
    public string $currency;
    /** Precision of the currency (scale of `amount_minor`): Money::fromMinor($p->amount_minor, $p->currency_decimals). */
    public int $currency_decimals;
    /** `pending`, `paid`, `expired`, `review`, ... (only `paid` confirms payment). */
    public string $status;
    /**
     * Per-payment version (0 for a historical never-changed record); null when the answer does
     * not carry it (a create answer); a string when beyond PHP's integers (the contract's u64).
     */
    public int|string|null $status_version;
    /** False until a channel is chosen. */
    public bool $test_mode;
    /** Checkout address with its token (never log it), when the answer carries it. */
    public ?string $checkout_url;
    /** Saved merchant return address. */
    public ?string $return_url;
    /** Expiry, RFC 3339. */
    public string $expires_at;
    /** Stable payment event number, set once confirmed: book by it. */
    public ?string $event_id;
    /** Channel transaction number, once known. */
    public ?string $provider_trade_no;
    /** Payment confirmation time, RFC 3339. */
    public ?string $occurred_at;
    /** Platform-locked settlement in platform coin: the eight-decimal fixed-point integer as a string (Money::formatFixedPoint8((int) ...)); not proof of payment. */
    public ?string $settlement_coin;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->order_no = $data['order_no'];
        $this->external_reference = $data['external_reference'];
        $this->payment_no = $data['payment_no'] ?? '';
        $this->amount_minor = $data['amount_minor'];
        $this->currency = $data['currency'];
        $this->currency_decimals = $data['currency_decimals'];
        $this->status = $data['status'];
        $this->status_version = $data['status_version'] ?? null;
        $this->test_mode = $data['test_mode'];
        $this->checkout_url = $data['checkout_url'] ?? null;
        $this->return_url = $data['return_url'] ?? null;
        $this->expires_at = $data['expires_at'];
        $this->event_id = $data['event_id'] ?? null;
        $this->provider_trade_no = $data['provider_trade_no'] ?? null;
        $this->occurred_at = $data['occurred_at'] ?? null;
        $this->settlement_coin = $data['settlement_coin'] ?? null;
    }

    /**
     * var_dump() and print_r() show the properties with the checkout token redacted.
     *
     * @return array<string, mixed>
     */
    public function __debugInfo(): array
    {
        $properties = get_object_vars($this);
        if ($this->checkout_url !== null) {
            $properties['checkout_url'] = preg_replace('~^(https?://[^/]*).*$~', '$1/[REDACTED]', $this->checkout_url);
        }
        return $properties;
    }
}
