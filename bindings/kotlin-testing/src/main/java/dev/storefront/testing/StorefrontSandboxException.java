package dev.storefront.testing;

/**
 * The sandbox could not be found (the message says how to install it), did not start, or
 * refused a control request or a trigger.
 */
public class StorefrontSandboxException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StorefrontSandboxException(String message) {
        super(message);
    }

    public StorefrontSandboxException(String message, Throwable cause) {
        super(message, cause);
    }
}
