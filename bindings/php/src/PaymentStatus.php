<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A merchant-payment status with the contract's questions answered: "Only `paid` confirms
 * payment"; `review` and unknown future statuses "are treated as needing verification and never
 * as paid" (the core's MerchantPaymentStatus). Unknown statuses are kept verbatim.
 *
 * Payment arrays keep `status` as the service's string (so `$payment['status'] === 'paid'` keeps
 * working); read it typed with PaymentStatus::of($payment) or PaymentStatus::of('review').
 * Compares and encodes as its text (__toString, JsonSerializable).
 */
final class PaymentStatus implements \JsonSerializable, \Stringable
{
    public const PENDING = 'pending';
    public const PAID = 'paid';
    public const REVIEW = 'review';
    public const EXPIRED = 'expired';
    public const REFUNDED = 'refunded';
    public const CHARGEBACK = 'chargeback';
    /** Every status the contract lists. */
    public const KNOWN = [self::PENDING, self::PAID, self::REVIEW, self::EXPIRED, self::REFUNDED, self::CHARGEBACK];

    private string $value;

    private function __construct(string $value)
    {
        $this->value = $value;
    }

    /**
     * The status of a payment (a MerchantPayment, or a payment or notification `data` array:
     * its `status`), or of a status text.
     *
     * @param MerchantPayment|array<string, mixed>|string|self $status
     */
    public static function of($status): self
    {
        if ($status instanceof self) {
            return $status;
        }
        if ($status instanceof Result) {
            $status = $status->toArray();
        }
        if (is_array($status)) {
            $status = $status['status'] ?? null;
        }
        if (!is_string($status)) {
            throw Input::refused('status', '`status` must be the status text or a payment array with one');
        }
        return new self($status);
    }

    /** The service's text. */
    public function value(): string
    {
        return $this->value;
    }

    /** True only for `paid`: `review`, `expired` and unknown statuses are never payment. */
    public function isPaid(): bool
    {
        return $this->value === self::PAID;
    }

    /** True for `review` and for a status the contract does not list: verify before deciding. */
    public function needsVerification(): bool
    {
        return $this->value === self::REVIEW || !$this->isKnown();
    }

    /** Whether the contract lists this status. */
    public function isKnown(): bool
    {
        return in_array($this->value, self::KNOWN, true);
    }

    public function __toString(): string
    {
        return $this->value;
    }

    public function jsonSerialize(): string
    {
        return $this->value;
    }
}
