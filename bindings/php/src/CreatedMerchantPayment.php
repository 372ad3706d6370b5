<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A created merchant payment (Client::createMerchantPayment()): the payment as created, plus
 * the idempotency key sent (persist it to retry with the same key). A create answer does not
 * carry `status_version` (null) nor the confirmation fields. Send the buyer to `checkout_url`
 * (never log it).
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $created['order_no'], toArray() (see Result).
 */
final readonly class CreatedMerchantPayment extends MerchantPayment
{
    /** The idempotency key sent. */
    public string $idempotency_key;

    /** @param array<string, mixed> $data the create answer with `idempotency_key`, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->idempotency_key = $data['idempotency_key'];
    }
}
