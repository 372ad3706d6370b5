<?php

declare(strict_types=1);

namespace Storefront;

/**
 * Base of every storefront failure, mirroring the SDK's error model. Branch on the class,
 * httpStatus() and errorCode() (the service's `error`), never on the message text (contract:
 * "Branch on HTTP status and `error`"). retryAfterMs() keeps the service's Retry-After.
 */
class StorefrontException extends \RuntimeException
{
    /** sf_result number -> exception class; numbers are the ABI's (include/storefront.h). */
    private const CLASSES = [
        1 => NullArgumentException::class,
        2 => InvalidUtf8Exception::class,
        3 => InvalidJsonException::class,
        4 => InputTooLargeException::class,
        5 => InvalidArgumentException::class,
        6 => PanicException::class,
        100 => ApiException::class,
        101 => ProviderResultPendingException::class,
        102 => OutcomeUnknownException::class,
        200 => TransportException::class,
        201 => TimeoutException::class,
        202 => TlsException::class,
        203 => TransportException::class,
        204 => TransportException::class,
        205 => DeadlineExceededException::class,
        206 => DecodeException::class,
        300 => WebhookHeaderException::class,
        301 => WebhookTimestampException::class,
        302 => WebhookTimestampException::class,
        303 => WebhookTimestampException::class,
        304 => WebhookSignatureException::class,
        305 => WebhookSignatureException::class,
        306 => WebhookBodyException::class,
        307 => WebhookEventIdException::class,
        308 => WebhookBodyException::class,
        309 => WebhookBodyException::class,
        310 => WebhookConfigException::class,
        400 => ValidationException::class,
        401 => WrongTokenSubjectException::class,
        402 => ResponseMismatchException::class,
        403 => ConfigException::class,
        405 => ExpectationMismatchException::class,
        406 => TokenProviderException::class,
        407 => CancelledException::class,
        500 => InboxStoreException::class,
        501 => InboxLeaseLostException::class,
        502 => InboxNotFoundException::class,
    ];

    /** @var array<string, mixed> */
    private array $detail;

    /** @param array<string, mixed> $detail the sf_error_json document */
    final public function __construct(array $detail, ?\Throwable $previous = null)
    {
        $this->detail = $detail;
        parent::__construct((string) ($detail['message'] ?? ''), (int) ($detail['result'] ?? 499), $previous);
    }

    /**
     * The exception for an sf_error_json document.
     *
     * @param array<string, mixed> $detail
     */
    public static function fromDetail(array $detail): self
    {
        $class = self::CLASSES[(int) ($detail['result'] ?? 499)] ?? self::class;
        return new $class($detail);
    }

    /** The sf_result number. */
    public function result(): int
    {
        return (int) ($this->detail['result'] ?? 499);
    }

    /** Stable name of the result (`api`, `timeout`, `webhook_signature_mismatch`...). */
    public function resultName(): string
    {
        return (string) ($this->detail['result_name'] ?? 'other');
    }

    /** HTTP status of the service's answer, or null. */
    public function httpStatus(): ?int
    {
        return isset($this->detail['http_status']) ? (int) $this->detail['http_status'] : null;
    }

    /** The service's `error` code (`payment_conflict`, `rate_limited`...), or null. */
    public function errorCode(): ?string
    {
        return $this->detail['error'] ?? null;
    }

    /** The service's `error_description`, or null. */
    public function errorDescription(): ?string
    {
        return $this->detail['error_description'] ?? null;
    }

    /** The rejected field or argument, or null. */
    public function field(): ?string
    {
        return $this->detail['field'] ?? null;
    }

    /**
     * On a failed merchant-payment creation, the idempotency key that was sent (else null):
     * after a timeout, a 202 or an unknown outcome, retry with it and the same parameters.
     */
    public function idempotencyKey(): ?string
    {
        return $this->detail['idempotency_key'] ?? null;
    }

    /**
     * @internal the same failure (same class and detail) carrying the create's idempotency key
     * @return static
     */
    public function withIdempotencyKey(string $key): self
    {
        return new static(['idempotency_key' => $key] + $this->detail);
    }

    /**
     * For an unclear answer (ProviderResultPendingException, OutcomeUnknownException): what the
     * app can do now, per the contract; null otherwise.
     */
    public function advice(): ?string
    {
        return $this->detail['advice'] ?? null;
    }

    /**
     * For an unclear answer: the request's identifying data to look the payment or order up
     * (`order_no`, `external_reference`, `payment_no`, `idempotency_key`, `gd_no`, `quantity`;
     * absent keys omitted); null otherwise.
     *
     * @return array<string, string|int>|null
     */
    public function lookup(): ?array
    {
        $lookup = $this->detail['lookup'] ?? null;
        return is_array($lookup) ? $lookup : null;
    }

    /** Retry-After in milliseconds, or null when the service did not ask to wait. */
    public function retryAfterMs(): ?int
    {
        return isset($this->detail['retry_after_ms']) ? (int) $this->detail['retry_after_ms'] : null;
    }
}
