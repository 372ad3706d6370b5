<?php

declare(strict_types=1);

namespace Storefront;

use FFI\CData;

/**
 * Verifies signed status notifications against one or more secrets (several during a
 * rotation). Checks the sha256= HMAC over "timestamp.raw_body" in constant time, the 5-minute
 * tolerance in both directions, and that X-Service-Event-ID equals the body's id.
 *
 *     $verifier = new Storefront\WebhookVerifier([$secret]);
 *     $notification = $verifier->verify(getallheaders(), file_get_contents('php://input'));
 *     Storefront\Webhook::checkExpectation($notification['data'], $expected);
 */
final class WebhookVerifier
{
    private ?CData $handle;

    /** @param string|list<string> $secrets */
    public function __construct($secrets)
    {
        $this->handle = Library::callHandle(
            'sf_webhook_verifier_new',
            'sf_webhook_verifier',
            Library::toJson(array_values((array) $secrets))
        );
    }

    public function __destruct()
    {
        if ($this->handle !== null) {
            Library::ffi()->sf_webhook_verifier_free($this->handle);
            $this->handle = null;
        }
    }

    /**
     * Verifies a delivery from its headers (any letter case) and the raw body exactly as
     * received; returns the notification (id, type, api_version, created_at, data). Throws a
     * WebhookException subclass.
     *
     * @param array<string, string|list<string>> $headers
     * @return array<string, mixed>
     */
    public function verify(array $headers, string $rawBody): array
    {
        return Library::callJson('sf_webhook_verify', ...$this->args($headers, $rawBody));
    }

    /**
     * verify() with an explicit current time (Unix seconds), for tests.
     *
     * @param array<string, string|list<string>> $headers
     * @return array<string, mixed>
     */
    public function verifyAt(array $headers, string $rawBody, int $nowUnix): array
    {
        return Library::callJson('sf_webhook_verify_at', ...[...$this->args($headers, $rawBody), $nowUnix]);
    }

    /**
     * @param array<string, string|list<string>> $headers
     * @return list<mixed>
     */
    private function args(array $headers, string $rawBody): array
    {
        [$buffer, $length] = Library::bytes($rawBody);
        return [
            $this->handle,
            Webhook::header($headers, Webhook::EVENT_ID_HEADER),
            Webhook::header($headers, Webhook::TIMESTAMP_HEADER),
            Webhook::header($headers, Webhook::SIGNATURE_HEADER),
            $buffer,
            $length,
        ];
    }
}
