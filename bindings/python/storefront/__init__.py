"""storefront: merchant collection and catalog orders, over the storefront C library.

A thin ctypes wrapper: every rule of the service contract (retries, idempotency keys, token
handling, redirect resolution, webhook checks) lives in the Rust core behind the C ABI; this
package converts Python values to the service's JSON shapes and failures to exceptions.
Amounts are ``int`` (minor units, or eight-decimal fixed point for catalog amounts), never
``float``.
"""

from ._lib import lib as _load
from .client import Client, UserSession
from .errors import (
    ApiError,
    CallCancelledError,
    ConfigError,
    DeadlineExceededError,
    DecodeError,
    ExpectationMismatchError,
    InboxError,
    InboxNotFoundError,
    InboxStoreError,
    InputTooLargeError,
    InvalidArgumentError,
    InvalidJsonError,
    InvalidUtf8Error,
    LeaseLost,
    LeaseLostError,
    NullArgumentError,
    OutcomeUnknownError,
    PanicError,
    ProviderResultPendingError,
    RequestTimeoutError,
    ResponseMismatchError,
    StorefrontError,
    TlsError,
    TokenProviderError,
    TransportError,
    ValidationError,
    WebhookBodyError,
    WebhookConfigError,
    WebhookError,
    WebhookEventIdError,
    WebhookHeaderError,
    WebhookSignatureError,
    WebhookTimestampError,
    WrongTokenSubjectError,
)
from .inbox import AsyncInbox, Inbox, InboxEvent, InboxStatus, Receipt, Watermark
from ._log import disable_logging, enable_logging
from .helpers import OtherIpuField, OtherIpuForm, generate_idempotency_key, other_ipu, other_ipu_fields
from .inputs import (
    Config,
    CreateMerchantPayment,
    CreateOrder,
    ListMerchantPaymentsQuery,
    ProductQuery,
    RateLimits,
    RetryPolicy,
)
from .models import PaymentStatus, ResultDict, SharedStateStatus, StoredState, StoredWindow
from .money import AmountError, format_fixed_point8, from_minor, parse_fixed_point8, to_minor
from .reconcile import (
    LocalRecord,
    ReconcileCursor,
    ReconcileOptions,
    ReconcileReport,
    ReconcileWindow,
)
from .webhook import (
    WebhookVerifier,
    check_expectation,
    sign_webhook,
    status_version_decision,
)
from . import aio
from .aio import AsyncClient, AsyncUserSession


def library_version() -> str:
    """Version of the loaded C library."""
    return _load().sf_version().decode("utf-8")


__all__ = [
    "AmountError",
    "ApiError",
    "AsyncClient",
    "AsyncInbox",
    "AsyncUserSession",
    "CallCancelledError",
    "Client",
    "Config",
    "ConfigError",
    "CreateMerchantPayment",
    "CreateOrder",
    "DeadlineExceededError",
    "DecodeError",
    "ExpectationMismatchError",
    "Inbox",
    "InboxError",
    "InboxEvent",
    "InboxNotFoundError",
    "InboxStatus",
    "InboxStoreError",
    "InputTooLargeError",
    "InvalidArgumentError",
    "InvalidJsonError",
    "InvalidUtf8Error",
    "LeaseLost",
    "LeaseLostError",
    "ListMerchantPaymentsQuery",
    "LocalRecord",
    "NullArgumentError",
    "OtherIpuField",
    "OtherIpuForm",
    "OutcomeUnknownError",
    "PanicError",
    "PaymentStatus",
    "ProductQuery",
    "ProviderResultPendingError",
    "RateLimits",
    "Receipt",
    "ReconcileCursor",
    "ReconcileOptions",
    "ReconcileReport",
    "ReconcileWindow",
    "RequestTimeoutError",
    "ResponseMismatchError",
    "ResultDict",
    "RetryPolicy",
    "SharedStateStatus",
    "StorefrontError",
    "StoredState",
    "StoredWindow",
    "TlsError",
    "TokenProviderError",
    "TransportError",
    "UserSession",
    "ValidationError",
    "Watermark",
    "WebhookBodyError",
    "WebhookConfigError",
    "WebhookError",
    "WebhookEventIdError",
    "WebhookHeaderError",
    "WebhookSignatureError",
    "WebhookTimestampError",
    "WebhookVerifier",
    "WrongTokenSubjectError",
    "check_expectation",
    "disable_logging",
    "enable_logging",
    "format_fixed_point8",
    "from_minor",
    "generate_idempotency_key",
    "library_version",
    "other_ipu",
    "other_ipu_fields",
    "parse_fixed_point8",
    "sign_webhook",
    "status_version_decision",
    "to_minor",
]
