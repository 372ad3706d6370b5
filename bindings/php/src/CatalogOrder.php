<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A catalog order (UserSession::order()). Its `status` (0-3) is the order numbering, not
 * the payment's. Amounts are eight-decimal fixed-point integers (raw, exact).
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $result['key'], isset(), foreach, count(), json_encode() and
 * toArray() give the contract's JSON exactly as received (nested values as arrays).
 */
final readonly class CatalogOrder extends Result
{
    /** Order number. */
    public string $order_no;
    /** Product number. */
    public string $gd_no;
    /** Title. */
    public string $title;
    /** Quantity. */
    public int $quantity;
    /** 0 awaiting payment, 1 paid (processing), 2 completed, 3 cancelled. */
    public int $status;
    /** Status label. */
    public string $status_label;
    /** Currency of the order amounts. */
    public string $currency;
    /** Its display precision. */
    public int $currency_decimals;
    /** Eight-decimal fixed point. */
    public int $total_amount;
    /** Eight-decimal fixed point. */
    public int $discount_amount;
    /** Eight-decimal fixed point. */
    public int $handling_amount;
    /** Eight-decimal fixed point. */
    public int $pay_amount;
    /** Currency of the payment amounts. */
    public string $payment_currency;
    /** Its display precision. */
    public int $payment_currency_decimals;
    /** Eight-decimal fixed point. */
    public int $payment_subtotal;
    /** Eight-decimal fixed point. */
    public int $payment_handling_amount;
    /** Eight-decimal fixed point. */
    public int $payment_pay_amount;
    /** The payment channel. */
    public string $payment_no;
    /** Its name. */
    public string $payment_name;
    /** Allowed payment_no values, or null. */
    public ?array $payment_methods;
    /** Payment session (trade) number; empty before payment starts. */
    public string $trade_no;
    /** Payment time as the service writes it (catalog local time), or null. */
    public ?string $paid_time;
    /** Creation time as the service writes it, or null. */
    public ?string $created_at;
    /** Update time as the service writes it, or null. */
    public ?string $updated_at;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->order_no = $data['order_no'];
        $this->gd_no = $data['gd_no'];
        $this->title = $data['title'] ?? '';
        $this->quantity = $data['quantity'];
        $this->status = $data['status'];
        $this->status_label = $data['status_label'] ?? '';
        $this->currency = $data['currency'];
        $this->currency_decimals = $data['currency_decimals'];
        $this->total_amount = $data['total_amount'];
        $this->discount_amount = $data['discount_amount'];
        $this->handling_amount = $data['handling_amount'];
        $this->pay_amount = $data['pay_amount'];
        $this->payment_currency = $data['payment_currency'];
        $this->payment_currency_decimals = $data['payment_currency_decimals'];
        $this->payment_subtotal = $data['payment_subtotal'];
        $this->payment_handling_amount = $data['payment_handling_amount'];
        $this->payment_pay_amount = $data['payment_pay_amount'];
        $this->payment_no = $data['payment_no'] ?? '';
        $this->payment_name = $data['payment_name'] ?? '';
        $this->payment_methods = $data['payment_methods'] ?? null;
        $this->trade_no = $data['trade_no'] ?? '';
        $this->paid_time = $data['paid_time'] ?? null;
        $this->created_at = $data['created_at'] ?? null;
        $this->updated_at = $data['updated_at'] ?? null;
    }
}
