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
        404 => WaitTimeoutException::class,
        405 => ExpectationMismatchException::class,
        406 => TokenProviderException::class,
    ];

    /** @var array<string, mixed> */
    private array $detail;

    /** @param array<string, mixed> $detail the sf_error_json document */
    final public function __construct(array $detail)
    {
        $this->detail = $detail;
        parent::__construct((string) ($detail['message'] ?? ''), (int) ($detail['result'] ?? 499));
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

    /** Retry-After in milliseconds, or null when the service did not ask to wait. */
    public function retryAfterMs(): ?int
    {
        return isset($this->detail['retry_after_ms']) ? (int) $this->detail['retry_after_ms'] : null;
    }
}

/** An argument was refused before anything was sent. */
class InvalidArgumentException extends StorefrontException
{
}

/** A required argument was missing (NULL). */
class NullArgumentException extends InvalidArgumentException
{
}

/** A string argument was not valid UTF-8. */
class InvalidUtf8Exception extends InvalidArgumentException
{
}

/** A JSON argument was not valid JSON. */
class InvalidJsonException extends InvalidArgumentException
{
}

/** An argument exceeded the library's input limit. */
class InputTooLargeException extends InvalidArgumentException
{
}

/** A request parameter broke a limit of the contract; nothing was sent (see field()). */
class ValidationException extends InvalidArgumentException
{
}

/** A bug inside the library was caught at its boundary; the client stays usable. */
class PanicException extends StorefrontException
{
}

/** The client configuration was refused (URL, HTTPS-only rule, CA). */
class ConfigException extends StorefrontException
{
}

/** The service answered with an HTTP error; see httpStatus() and errorCode(). */
class ApiException extends StorefrontException
{
}

/** HTTP 202 provider_result_pending: not success; keep the original payment and check it. */
class ProviderResultPendingException extends StorefrontException
{
}

/** An order creation or payment start may have been processed; it was not re-sent. */
class OutcomeUnknownException extends StorefrontException
{
}

/** The operation needs another kind of token; nothing was sent. */
class WrongTokenSubjectException extends StorefrontException
{
}

/** The service could not be reached or the exchange broke. */
class TransportException extends StorefrontException
{
}

/** An attempt timed out. */
class TimeoutException extends TransportException
{
}

/** The overall deadline across retries ran out. */
class DeadlineExceededException extends TransportException
{
}

/** TLS setup or certificate verification failed. */
class TlsException extends TransportException
{
}

/** The service's answer did not have the contract's shape. */
class DecodeException extends StorefrontException
{
}

/** The answer contradicts the request (amount, currency or precision). */
class ResponseMismatchException extends StorefrontException
{
}

/** No final payment status within the wait timeout. */
class WaitTimeoutException extends StorefrontException
{
}

/** The host's user-token provider failed. */
class TokenProviderException extends StorefrontException
{
}

/** A payment or notification does not match the merchant's expectation: do not book it. */
class ExpectationMismatchException extends StorefrontException
{
}

/** A webhook failed verification: answer non-2xx and do not book it. */
class WebhookException extends StorefrontException
{
}

/** A required webhook header is absent (field() names it). */
class WebhookHeaderException extends WebhookException
{
}

/** The signature is malformed or matches no secret. */
class WebhookSignatureException extends WebhookException
{
}

/** The timestamp is malformed or outside the 5-minute tolerance. */
class WebhookTimestampException extends WebhookException
{
}

/** X-Service-Event-ID differs from the body's id. */
class WebhookEventIdException extends WebhookException
{
}

/** The signed body is not a supported status notification. */
class WebhookBodyException extends WebhookException
{
}

/** The verifier was given no usable secret. */
class WebhookConfigException extends WebhookException
{
}
