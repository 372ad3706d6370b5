<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A notification delivery record of a payment (Client::notificationRecords()).
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $result['key'], isset(), foreach, count(), json_encode() and
 * toArray() give the contract's JSON exactly as received (nested values as arrays).
 */
final readonly class NotificationRecord extends Result
{
    /** The notification event id. */
    public string $event_id;
    /** The payment status version the notification carries (a string beyond PHP's integers). */
    public int|string $status_version;
    /** The notification as sent (decoded JSON). */
    public mixed $event;
    /** `pending`, `delivered` or `failed` (failed: automatic retries exhausted, requeueNotification() possible; not a payment failure). */
    public string $delivery_status;
    /** Delivery attempts so far. */
    public int $attempts;
    /** Next attempt time as the service sends it, or null. */
    public mixed $next_attempt_at;
    /** The receiver's last HTTP status as the service sends it, or null. */
    public mixed $last_http_status;
    /** Last delivery error as the service sends it, or null. */
    public mixed $last_error;
    /** Every attempt as the service sends it (list of arrays). */
    public array $delivery_attempts;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->event_id = $data['event_id'];
        $this->status_version = $data['status_version'];
        $this->event = $data['event'] ?? null;
        $this->delivery_status = $data['delivery_status'];
        $this->attempts = $data['attempts'];
        $this->next_attempt_at = $data['next_attempt_at'] ?? null;
        $this->last_http_status = $data['last_http_status'] ?? null;
        $this->last_error = $data['last_error'] ?? null;
        $this->delivery_attempts = $data['delivery_attempts'] ?? [];
    }
}
