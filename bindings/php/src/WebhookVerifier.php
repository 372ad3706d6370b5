<?php

declare(strict_types=1);

namespace Storefront;

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
        $this->handle = self::asWebhookFailure(fn () => Library::callHandle(
            'sf_webhook_verifier_new',
            'sf_webhook_verifier',
            Library::toJson($list, 'secrets_json')
        ), WebhookConfigException::class);
    }

    public function __destruct()
    {
        if ($this->handle !== null) {
            Library::ffi()->sf_webhook_verifier_free($this->handle);
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
     * @param array<string, string|list<string>>|mixed $headers
     * @param string|mixed $rawBody
     * @return array<string, mixed>
     */
    public function verify($headers, $rawBody): array
    {
        return self::asWebhookFailure(fn () => Library::callJson('sf_webhook_verify', ...$this->args($headers, $rawBody)));
    }

    /**
     * verify() with an explicit current time (Unix seconds, an int), for tests.
     *
     * @param array<string, string|list<string>>|mixed $headers
     * @param string|mixed $rawBody
     * @param int|mixed $nowUnix
     * @return array<string, mixed>
     */
    public function verifyAt($headers, $rawBody, $nowUnix): array
    {
        return self::asWebhookFailure(function () use ($headers, $rawBody, $nowUnix) {
            $now = Input::int('now_unix', $nowUnix, PHP_INT_MIN);
            return Library::callJson('sf_webhook_verify_at', ...[...$this->args($headers, $rawBody), $now]);
        });
    }

    /**
     * @param mixed $headers
     * @param mixed $rawBody
     * @return list<mixed>
     */
    private function args($headers, $rawBody): array
    {
        if ($this->handle === null) {
            throw new WebhookConfigException(['result' => 310, 'result_name' => 'webhook_no_verifier', 'message' => 'the verifier was not created', 'field' => 'verifier']);
        }
        if (!is_string($rawBody)) {
            throw self::bodyError('the raw body must be a string (file_get_contents(\'php://input\')), not ' . get_debug_type($rawBody));
        }
        $limit = Library::maxInputBytes();
        if (strlen($rawBody) > $limit) {
            throw self::bodyError("the body is longer than $limit bytes", 'webhook_body_too_large');
        }
        $values = [];
        foreach (self::HEADER_ARGUMENTS as $header) {
            $values[] = Webhook::header($headers, $header);
        }
        [$buffer, $length] = Library::bytes($rawBody);
        return [$this->handle, ...$values, $buffer, $length];
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
        } catch (WebhookException $e) {
            throw $e;
        } catch (StorefrontException $e) {
            $field = $e->field();
            $class = $default;
            if ($field !== null && isset(self::HEADER_ARGUMENTS[$field])) {
                $class = WebhookHeaderException::class;
                $field = self::HEADER_ARGUMENTS[$field];
            } elseif ($field === 'body') {
                $class = WebhookBodyException::class;
            }
            throw new $class(['result' => $e->result(), 'result_name' => $e->resultName(), 'message' => $e->getMessage(), 'field' => $field]);
        } catch (\TypeError | \ValueError | \JsonException | \InvalidArgumentException $e) {
            throw new $default(['result' => 5, 'result_name' => 'invalid_argument', 'message' => $e->getMessage()]);
        }
    }
}
