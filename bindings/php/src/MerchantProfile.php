<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The merchant profile (Client::merchantProfile(), UserSession::merchantProfile()).
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $result['key'], isset(), foreach, count(), json_encode() and
 * toArray() give the contract's JSON exactly as received (nested values as arrays).
 */
final readonly class MerchantProfile extends Result
{
    /** Merchant number. */
    public string $merchant_no;
    /** Name. */
    public string $name;
    /** Logo address. */
    public string $logo_url;
    /** Short description. */
    public string $short_description;
    /** Description. */
    public string $description;
    /** Business scope. */
    public string $business_scope;
    /** Website. */
    public string $website_url;
    /** Contact. */
    public string $contact;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->merchant_no = $data['merchant_no'] ?? '';
        $this->name = $data['name'] ?? '';
        $this->logo_url = $data['logo_url'] ?? '';
        $this->short_description = $data['short_description'] ?? '';
        $this->description = $data['description'] ?? '';
        $this->business_scope = $data['business_scope'] ?? '';
        $this->website_url = $data['website_url'] ?? '';
        $this->contact = $data['contact'] ?? '';
    }
}
