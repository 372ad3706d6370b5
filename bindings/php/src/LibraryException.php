<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The wrapper cannot use the storefront C library: thrown before the first call reaches it,
 * with the fix in the message. resultName() says which case (branch on it, not on the text):
 *
 *   ffi_missing        the FFI extension is not loaded in this PHP
 *   ffi_disabled       ffi.enable=0 (or false/off)
 *   ffi_restricted     ffi.enable=preload outside the CLI (php-fpm, php -S) and nothing preloaded
 *   library_not_found  no libstorefront at the paths tried (named), or STOREFRONT_LIB names no file
 *   library_unloadable the file exists but dlopen refused it (not a library, wrong architecture)
 *   header_not_found   no storefront.h at the paths tried, or STOREFRONT_HEADER names no file
 *   header_invalid     FFI cannot parse the header
 *   header_mismatch    the header declares a function the library lacks (different versions)
 *   version_mismatch   the library's sf_version() is not the package's VERSION
 *   preload_failed     preloading could not bind the library (e.g. under opcache.preload_user)
 *
 * result() is 499 (SF_RESULT_OTHER); getPrevious() holds PHP's own FFI error, when there is one.
 */
final class LibraryException extends StorefrontException
{
    /** @internal the failure $reason (one of the names above) with its actionable message */
    public static function because(string $reason, string $message, ?\Throwable $previous = null): self
    {
        return new self(['result' => 499, 'result_name' => $reason, 'message' => $message], $previous);
    }
}
