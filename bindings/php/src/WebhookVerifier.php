<?php

declare(strict_types=1);

namespace Storefront;

use FFI;
use FFI\CData;

/**
 * Verifies signed status notifications against one or more secrets (several during a
 * rotation). Checks the sha256= HMAC over "timestamp.raw_body" in constant time, the 5-minute
 * tolerance in both directions, and that X-Service-Event-ID equals the body's id.
 *
 * Every problem with the input, whatever its type, is a WebhookException subclass (never a
 * \TypeError, a global \InvalidArgumentException or an exception outside that hierarchy), so a
 * receiver answers 400 with one catch:
 *
 *     try {
 *         $notification = (new Storefront\WebhookVerifier([$secret]))->verify(getallheaders(), file_get_contents('php://input'));
 *     } catch (Storefront\WebhookException $e) { http_response_code(400); exit; }
 */
final class WebhookVerifier
{
    private const HEADER_ARGUMENTS = [
        'event_id' => Webhook::EVENT_ID_HEADER,
        'timestamp' => Webhook::TIMESTAMP_HEADER,
        'signature' => Webhook::SIGNATURE_HEADER,
    ];

    private ?CData $handle = null;

    /**
     * @param string|list<string> $secrets one secret, or several during a rotation; a secret
     *   that is not a non-empty UTF-8 string without NUL bytes is a WebhookConfigException
     */
    public function __construct($secrets)
    {
        $list = is_array($secrets) ? array_values($secrets) : [$secrets];
        foreach ($list as $index => $secret) {
            $problem = null;
            if (!is_string($secret)) {
                $problem = 'must be a string, not ' . get_debug_type($secret);
            } elseif (strpos($secret, "\0") !== false) {
                $problem = 'contains a NUL byte';
            } elseif (preg_match('//u', $secret) !== 1) {
                $problem = 'is not UTF-8';
            }
            if ($problem !== null) {
                throw new WebhookConfigException([
                    'result' => 310, 'result_name' => 'webhook_bad_secret',
                    'message' => "webhook secret $index $problem", 'field' => 'secrets',
                ]);
            }
        }
        // Inline rather than through a closure (asWebhookFailure): this runs in every request.
        try {
            $json = Library::toJson($list, 'secrets_json');
            $ffi = WebhookFfi::ffi();
            $out = $ffi->new('sf_webhook_verifier*');
            $error = $ffi->new('sf_error*');
            $result = $ffi->sf_webhook_verifier_new($json, FFI::addr($out), FFI::addr($error));
            if ($result !== 0) {
                throw WebhookFfi::exception($result, $error);
            }
        } catch (\Throwable $e) {
            throw self::webhookFailure($e, WebhookConfigException::class);
        }
        $this->handle = $out;
    }

    public function __destruct()
    {
        if ($this->handle !== null) {
            WebhookFfi::ffi()->sf_webhook_verifier_free($this->handle);
            $this->handle = null;
        }
    }

    /**
     * Verifies a delivery from its headers and the raw body exactly as received; returns the
     * notification (id, type, api_version, created_at, data).
     *
     * $headers: getallheaders(), $_SERVER (HTTP_X_SERVICE_SIGNATURE...), a PSR-7 getHeaders()
     * array or any array of name => value (names in any letter case; see Webhook::header()).
     * Throws a WebhookException subclass for every failure and every malformed input: a missing,
     * duplicated, non-string, non-UTF-8, NUL-holding or oversized header, a body that is not a
     * string or is longer than Library::maxInputBytes(), headers that are not an array.
     *
     * The library (sf_webhook_verify_body) checks the headers, the timestamp, the signature
     * over the string as given (passed in place, not copied, when not preloaded) and the
     * envelope, and hands nothing back; the verified body is then decoded once with
     * json_decode and its data checked as the library's typed decoding would (a signed data
     * that is not a valid payment snapshot is a WebhookBodyException).
     *
     * The result is a VerifiedNotification: ->id, ->type, ->data (a MerchantPayment: the
     * payment as of the notification); $notification['data'] is still the array that
     * Webhook::checkExpectation() takes.
     *
     * @param array<string, string|list<string>>|mixed $headers
     * @param string|mixed $rawBody
     */
    public function verify($headers, $rawBody): VerifiedNotification
    {
        try {
            return $this->verified($headers, $rawBody, null);
        } catch (\Throwable $e) {
            throw self::webhookFailure($e, WebhookException::class);
        }
    }

    /**
     * verify() with an explicit current time (Unix seconds, an int), for tests.
     *
     * @param array<string, string|list<string>>|mixed $headers
     * @param string|mixed $rawBody
     * @param int|mixed $nowUnix
     */
    public function verifyAt($headers, $rawBody, $nowUnix): VerifiedNotification
    {
        return self::asWebhookFailure(function () use ($headers, $rawBody, $nowUnix) {
            $now = Input::int('now_unix', $nowUnix, PHP_INT_MIN);
            return $this->verified($headers, $rawBody, $now);
        });
    }

    /**
     * One verification through sf_webhook_verify_body[_at], then the one decode.
     *
     * @param mixed $headers
     * @param mixed $rawBody
     */
    private function verified($headers, $rawBody, ?int $now): VerifiedNotification
    {
        if ($this->handle === null) {
            throw new WebhookConfigException(['result' => 310, 'result_name' => 'webhook_no_verifier', 'message' => 'the verifier was not created', 'field' => 'verifier']);
        }
        if (!is_string($rawBody)) {
            throw self::bodyError('the raw body must be a string (file_get_contents(\'php://input\')), not ' . get_debug_type($rawBody));
        }
        $limit = WebhookFfi::maxInputBytes();
        if (strlen($rawBody) > $limit) {
            throw self::bodyError("the body is longer than $limit bytes", 'webhook_body_too_large');
        }
        [$eventId, $timestamp, $signature] = Webhook::deliveryHeaders($headers);
        $ffi = WebhookFfi::ffi();
        $body = WebhookFfi::body($rawBody);
        $error = $ffi->new('sf_error*');
        $result = $now === null
            ? $ffi->sf_webhook_verify_body($this->handle, $eventId, $timestamp, $signature, $body, strlen($rawBody), FFI::addr($error))
            : $ffi->sf_webhook_verify_body_at($this->handle, $eventId, $timestamp, $signature, $body, strlen($rawBody), $now, FFI::addr($error));
        if ($result !== 0) {
            throw WebhookFfi::exception($result, $error);
        }
        return new VerifiedNotification(self::decode($rawBody));
    }

    /**
     * Decodes a verified body with json_decode (integers beyond PHP's range stay strings) and
     * checks its data.
     *
     * @return array<string, mixed>
     */
    private static function decode(string $rawBody): array
    {
        $notification = json_decode($rawBody, true, 512, JSON_BIGINT_AS_STRING);
        if (!is_array($notification) || !array_key_exists('data', $notification)) {
            throw self::bodyError('invalid notification body: ' . json_last_error_msg());
        }
        $problem = self::dataProblem($notification['data']);
        if ($problem !== null) {
            throw self::bodyError("invalid notification body: $problem");
        }
        return $notification;
    }

    /** Integer fields of data: [smallest, largest] (minor units, precision 0 to MAX_SCALE 18). */
    private const INTEGERS = ['amount_minor' => [1, 9007199254740991], 'currency_decimals' => [0, 18]];
    /** RFC 3339 date-time (the service's times): shape and field ranges. */
    private const RFC3339 = '/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/D';

    /**
     * What is wrong with a verified notification's data (null when it is a valid payment
     * snapshot): the checks of the library's typed decoding (the decoding verify export), made on
     * json_decode's result. Absent optional fields are filled in as that decoding did
     * (payment_no '', event_id, provider_trade_no and occurred_at null).
     *
     * @param mixed $data
     */
    private static function dataProblem(&$data): ?string
    {
        if (!is_array($data) || ($data !== [] && array_is_list($data))) {
            return 'data: not an object';
        }
        foreach (['order_no', 'external_reference', 'currency', 'status'] as $name) {
            if (!is_string($data[$name] ?? null)) {
                return "data.$name: missing or not a string";
            }
        }
        foreach (self::INTEGERS as $name => [$low, $high]) {
            $value = $data[$name] ?? null;
            if (!is_int($value) || $value < $low || $value > $high) {
                return "data.$name: missing, not an integer, or outside $low..$high";
            }
        }
        $version = $data['status_version'] ?? null;
        if (!(is_int($version) && $version >= 0)
            && !(is_string($version) && ctype_digit($version) && (strlen($version) < 20 || (strlen($version) === 20 && strcmp($version, '18446744073709551615') <= 0)))) {
            return 'data.status_version: missing, not an integer, or outside 0..18446744073709551615';
        }
        if (!is_bool($data['test_mode'] ?? null)) {
            return 'data.test_mode: missing or not a boolean';
        }
        if (!is_string($data['expires_at'] ?? null) || preg_match(self::RFC3339, $data['expires_at']) !== 1) {
            return 'data.expires_at: missing or not an RFC 3339 time';
        }
        if (!array_key_exists('payment_no', $data)) {
            $data['payment_no'] = '';
        } elseif (!is_string($data['payment_no'])) {
            return 'data.payment_no: not a string';
        }
        foreach (['event_id', 'provider_trade_no'] as $name) {
            $data[$name] ??= null;
            if ($data[$name] !== null && !is_string($data[$name])) {
                return "data.$name: not a string";
            }
        }
        $data['occurred_at'] ??= null;
        if ($data['occurred_at'] !== null && (!is_string($data['occurred_at']) || preg_match(self::RFC3339, $data['occurred_at']) !== 1)) {
            return 'data.occurred_at: not an RFC 3339 time';
        }
        return null;
    }

    private static function bodyError(string $message, string $resultName = 'webhook_invalid_body'): WebhookBodyException
    {
        return new WebhookBodyException(['result' => 306, 'result_name' => $resultName, 'message' => $message, 'field' => 'body']);
    }

    /**
     * Runs $call; a failure that is not already a WebhookException (an argument the library
     * refused, a ValidationException of the wrapper, a JSON or type error) becomes one: a
     * WebhookHeaderException when it is about a header, a WebhookBodyException about the body,
     * $default otherwise.
     *
     * @template T
     * @param callable(): T $call
     * @param class-string<WebhookException> $default
     * @return T
     */
    private static function asWebhookFailure(callable $call, string $default = WebhookException::class)
    {
        try {
            return $call();
        } catch (\Throwable $e) {
            throw self::webhookFailure($e, $default);
        }
    }

    /**
     * What asWebhookFailure throws for $e: $e itself when it is a WebhookException or not an
     * input failure, else the WebhookException subclass for its field ($default otherwise).
     *
     * @param class-string<WebhookException> $default
     */
    private static function webhookFailure(\Throwable $e, string $default): \Throwable
    {
        if ($e instanceof WebhookException || $e instanceof LibraryException) {
            return $e;   // a LibraryException is the server's setup, not the sender's input (500, not 400)
        }
        if ($e instanceof StorefrontException) {
            $field = $e->field();
            $class = $default;
            if ($field !== null && isset(self::HEADER_ARGUMENTS[$field])) {
                $class = WebhookHeaderException::class;
                $field = self::HEADER_ARGUMENTS[$field];
            } elseif ($field === 'body') {
                $class = WebhookBodyException::class;
            }
            return new $class(['result' => $e->result(), 'result_name' => $e->resultName(), 'message' => $e->getMessage(), 'field' => $field]);
        }
        if ($e instanceof \TypeError || $e instanceof \ValueError || $e instanceof \JsonException || $e instanceof \InvalidArgumentException) {
            return new $default(['result' => 5, 'result_name' => 'invalid_argument', 'message' => $e->getMessage()]);
        }
        return $e;
    }
}
