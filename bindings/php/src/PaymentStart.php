<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A started catalog payment (UserSession::startPayment()): not proof of payment.
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $result['key'], isset(), foreach, count(), json_encode() and
 * toArray() give the contract's JSON exactly as received (nested values as arrays).
 */
final readonly class PaymentStart extends Result
{
    /** Payment session number. */
    public string $trade_no;
    /** Absolute address to send the buyer to. */
    public string $redirect;
    /** Session expiry, Unix seconds. */
    public int $expire_time;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->trade_no = $data['trade_no'];
        $this->redirect = $data['redirect'];
        $this->expire_time = $data['expire_time'];
    }
}
