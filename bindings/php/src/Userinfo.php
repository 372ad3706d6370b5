<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The user's claims (UserSession::userinfo()). The contract does not list them: the usual
 * OpenID claims are properties (null when absent or not a string); toArray() has every claim.
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $result['key'], isset(), foreach, count(), json_encode() and
 * toArray() give the contract's JSON exactly as received (nested values as arrays).
 */
final readonly class Userinfo extends Result
{
    /** Subject: the user id. */
    public ?string $sub;
    /** Display name. */
    public ?string $name;
    /** Username. */
    public ?string $preferred_username;
    /** The merchant the token is bound to. */
    public ?string $merchant_no;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->sub = is_string($data['sub'] ?? null) ? $data['sub'] : null;
        $this->name = is_string($data['name'] ?? null) ? $data['name'] : null;
        $this->preferred_username = is_string($data['preferred_username'] ?? null) ? $data['preferred_username'] : null;
        $this->merchant_no = is_string($data['merchant_no'] ?? null) ? $data['merchant_no'] : null;
    }
}
