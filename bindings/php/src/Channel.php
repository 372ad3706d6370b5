<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A payment channel of the merchant-collection directory (Client::channels()).
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $result['key'], isset(), foreach, count(), json_encode() and
 * toArray() give the contract's JSON exactly as received (nested values as arrays).
 */
final readonly class Channel extends Result
{
    /** Channel identifier used when creating a payment (not a display name). */
    public string $payment_no;
    /** Channel name. */
    public string $name;
    /** `card-provider` or `platform-coin`. */
    public string $provider;
    /** `platform` or `merchant`. */
    public string $owner;
    /** Payment currency of the channel. */
    public string $currency;
    /** Whether the buyer must log in. */
    public bool $login_required;
    /** Administrator-assigned card-provider test channel. */
    public bool $test_mode;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->payment_no = $data['payment_no'];
        $this->name = $data['name'];
        $this->provider = $data['provider'];
        $this->owner = $data['owner'];
        $this->currency = $data['currency'];
        $this->login_required = $data['login_required'];
        $this->test_mode = $data['test_mode'];
    }
}
