<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A catalog product. Prices are eight-decimal fixed-point integers (raw, exact):
 * Money::formatFixedPoint8($product->actual_price, $product->currency_decimals).
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $result['key'], isset(), foreach, count(), json_encode() and
 * toArray() give the contract's JSON exactly as received (nested values as arrays).
 */
final readonly class Product extends Result
{
    /** Product number. */
    public string $gd_no;
    /** Product name. */
    public string $gd_name;
    /** Description. */
    public string $gd_description;
    /** Price, eight-decimal fixed point (integer). */
    public int $actual_price;
    /** Retail price, eight-decimal fixed point (integer). */
    public int $retail_price;
    /** Currency code. */
    public string $currency;
    /** Display precision of the currency. */
    public int $currency_decimals;
    /** Stock. */
    public int $in_stock;
    /** Purchase limit per order. */
    public int $buy_limit_num;
    /** `automatic`, `allowlist` (or a value the contract does not list). */
    public string $payment_policy;
    /** Allowed payment_no values (list of strings), or null. */
    public ?array $payment_methods;
    /** Extra inputs the order needs (OtherIpuForm), or null. */
    public ?array $other_ipu_cnf;
    /** Wholesale price configuration (list of strings), or null. */
    public ?array $wholesale_price_cnf;
    /** Prompt shown before buying, or null. */
    public ?string $buy_prompt;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->gd_no = $data['gd_no'];
        $this->gd_name = $data['gd_name'];
        $this->gd_description = $data['gd_description'] ?? '';
        $this->actual_price = $data['actual_price'];
        $this->retail_price = $data['retail_price'];
        $this->currency = $data['currency'];
        $this->currency_decimals = $data['currency_decimals'];
        $this->in_stock = $data['in_stock'];
        $this->buy_limit_num = $data['buy_limit_num'];
        $this->payment_policy = $data['payment_policy'];
        $this->payment_methods = $data['payment_methods'] ?? null;
        $this->other_ipu_cnf = $data['other_ipu_cnf'] ?? null;
        $this->wholesale_price_cnf = $data['wholesale_price_cnf'] ?? null;
        $this->buy_prompt = $data['buy_prompt'] ?? null;
    }
}
