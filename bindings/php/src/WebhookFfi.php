<?php

declare(strict_types=1);

namespace Storefront;

use FFI;
use FFI\CData;

/**
 * The FFI binding WebhookVerifier uses: cheap to set up in every request of a worker.
 *
 * Preloaded (preload.php, FFI scope "storefront"), it is that scope: nothing is parsed or
 * loaded per request. Otherwise (FFI::cdef per request, as with ffi.enable=true and no
 * preload) it binds only the declarations a receiver needs (DECLARATIONS, a few lines instead
 * of the whole header, whose parse costs tens of microseconds per request) and pins the library
 * in the process (dlopen with RTLD_NODELETE, as Library::pinLibrary() does), so that later
 * requests of the worker find it mapped instead of loading and unloading it every request. A
 * handle made through one binding is used only through that binding (FFI checks the types of
 * handles per binding).
 *
 * @internal
 */
final class WebhookFfi
{
    /**
     * Declarations of include/storefront.h a receiver needs, as the header writes them
     * (tests/WebhookFfiTest.php checks each against the shipped header), except that the body
     * of the verify-body functions is declared `const char *` instead of `const uint8_t *`:
     * the same C type size and calling convention, and PHP then passes a string in place
     * instead of copying it into a uint8_t[] first. Then dlopen, for pinning (found in the C
     * library's dependencies).
     */
    public const DECLARATIONS = <<<'C'
typedef uint32_t sf_result;
typedef struct sf_error sf_error;
typedef struct sf_webhook_verifier sf_webhook_verifier;
const char *sf_error_json(const sf_error *error);
void sf_error_free(sf_error *error);
size_t sf_max_input_bytes(void);
const char *sf_version(void);
sf_result sf_webhook_verifier_new(const char *secrets_json,
                                  sf_webhook_verifier **verifier_out,
                                  sf_error **error_out);
void sf_webhook_verifier_free(sf_webhook_verifier *verifier);
sf_result sf_webhook_verify_body(const sf_webhook_verifier *verifier,
                                 const char *event_id,
                                 const char *timestamp,
                                 const char *signature,
                                 const char *body,
                                 size_t body_len,
                                 sf_error **error_out);
sf_result sf_webhook_verify_body_at(const sf_webhook_verifier *verifier,
                                    const char *event_id,
                                    const char *timestamp,
                                    const char *signature,
                                    const char *body,
                                    size_t body_len,
                                    int64_t now_unix,
                                    sf_error **error_out);
C;

    /** dlopen, declared with the binding (not part of storefront.h). */
    private const PIN = 'void *dlopen(const char *filename, int flags);';

    private static ?FFI $ffi = null;
    private static bool $inPlace = false;
    private static ?int $maxInputBytes = null;

    /** The binding (created once per request; see the class comment). */
    public static function ffi(): FFI
    {
        if (self::$ffi === null) {
            Library::requireFfi();
            try {
                self::$ffi = FFI::scope(Library::SCOPE);
                self::$inPlace = false;
            } catch (\FFI\Exception $notPreloaded) {
                self::$ffi = self::cdef();
                self::$inPlace = true;
            }
        }
        return self::$ffi;
    }

    /**
     * Whether the verify-body functions take the body as a PHP string in place (the cdef
     * binding) rather than as a uint8_t buffer (the preloaded header).
     */
    public static function bodyInPlace(): bool
    {
        self::ffi();
        return self::$inPlace;
    }

    /** sf_max_input_bytes(), asked once per request. */
    public static function maxInputBytes(): int
    {
        return self::$maxInputBytes ??= (int) self::ffi()->sf_max_input_bytes();
    }

    /**
     * The body argument for the verify-body functions: the string itself (in place), or a
     * uint8_t copy for the preloaded header (NULL for an empty body).
     *
     * @return string|CData|null
     */
    public static function body(string $body)
    {
        if (self::bodyInPlace()) {
            return $body;
        }
        $length = strlen($body);
        if ($length === 0) {
            return null;
        }
        $buffer = self::ffi()->new("uint8_t[$length]");
        FFI::memcpy($buffer, $body, $length);
        return $buffer;
    }

    /** The exception for a failed call of this binding; frees the error object. */
    public static function exception(int $result, CData $error): StorefrontException
    {
        if (FFI::isNull($error)) {
            return StorefrontException::fromDetail(['result' => $result, 'message' => "storefront call failed ($result)"]);
        }
        $ffi = self::ffi();
        try {
            $json = (string) $ffi->sf_error_json($error);
        } finally {
            $ffi->sf_error_free($error);
        }
        return StorefrontException::fromDetail(Library::fromJson($json));
    }

    /**
     * FFI::cdef of DECLARATIONS over the library, pinned in the process; where FFI::cdef is
     * refused (ffi.enable=preload outside preloading), Library::ffi() says what to configure.
     */
    private static function cdef(): FFI
    {
        $library = Library::libraryPath();
        $flags = ['Linux' => 0x1002, 'Darwin' => 0x82][PHP_OS_FAMILY] ?? null;   // RTLD_NODELETE | RTLD_NOW
        try {
            $ffi = FFI::cdef(self::DECLARATIONS . ($flags === null ? '' : "\n" . self::PIN), $library);
        } catch (\FFI\Exception $refused) {
            throw Library::loadFailure($refused, $library, 'the webhook declarations');
        }
        Library::checkVersion($ffi, $library);
        if ($flags !== null) {
            $ffi->dlopen($library, $flags);
        }
        return $ffi;
    }
}
