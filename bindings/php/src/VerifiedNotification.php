<?php

declare(strict_types=1);

namespace Storefront;

/**
 * A verified webhook notification (WebhookVerifier::verify()). Deduplicate by `id`, book
 * by `data->event_id`, apply only when Webhook::statusVersionDecision() says `apply`.
 * `$notification['data']` (the array) is what Webhook::checkExpectation() takes.
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $result['key'], isset(), foreach, count(), json_encode() and
 * toArray() give the contract's JSON exactly as received (nested values as arrays).
 */
final readonly class VerifiedNotification extends Result
{
    /** Notification id (X-Service-Event-ID): deduplicate by it. */
    public string $id;
    /** `merchant_payment.status_changed`, ... */
    public string $type;
    /** Envelope version. */
    public int $api_version;
    /** When the notification was created, RFC 3339. */
    public string $created_at;
    /** The payment as of the notification. */
    public MerchantPayment $data;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->id = $data['id'];
        $this->type = $data['type'];
        $this->api_version = $data['api_version'];
        $this->created_at = $data['created_at'];
        $this->data = new MerchantPayment($data['data']);
    }
}
