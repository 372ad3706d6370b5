"""One webhook exception: every malformed input to WebhookVerifier.verify raises a
storefront.WebhookError subclass (never ValueError, TypeError or UnicodeError), and the headers
are found however the framework hands them over."""

from __future__ import annotations

import pytest
import storefront
from storefront.webhook import MAX_HEADER_BYTES

from test_webhook import BODY, NOW, SECRET, headers


@pytest.fixture
def verifier():
    created = storefront.WebhookVerifier([SECRET])
    yield created
    created.close()


def only_webhook_error(verifier, given_headers, body=BODY, field=None):
    """verify(...) raises a WebhookError and nothing else (in particular not the ValueError,
    TypeError or UnicodeError that WebhookError must never be confused with)."""
    try:
        verifier.verify_at(given_headers, body, NOW)
    except storefront.WebhookError as error:
        assert not isinstance(error, (TypeError, UnicodeError))
        if field is not None:
            assert error.field == field
        return error
    except BaseException as other:  # pragma: no cover - the failure being tested for
        pytest.fail(f"{type(other).__name__} instead of WebhookError: {other}")
    pytest.fail("verified")


class EnvironHeaders:
    """What Flask/Werkzeug give as request.headers over a WSGI environ: get() and items()
    with HTTP names, not a dict."""

    def __init__(self, environ):
        self._environ = environ

    def items(self):
        for key, value in self._environ.items():
            if key.startswith("HTTP_"):
                yield key[5:].replace("_", "-").title(), value

    def get(self, name, default=None):
        return self._environ.get("HTTP_" + name.upper().replace("-", "_"), default)


class GetOnly:
    def __init__(self, values):
        self._values = values

    def get(self, name, default=None):
        return self._values.get(name, default)


def wsgi(given):
    return {"HTTP_" + k.upper().replace("-", "_"): v for k, v in given.items()} | {
        "REQUEST_METHOD": "POST",
        "wsgi.input": None,
    }


def test_headers_are_found_under_every_framework_spelling(verifier):
    plain = headers()
    shapes = {
        "dict": plain,
        "lower-case": {k.lower(): v for k, v in plain.items()},
        "WSGI environ / Django request.META": wsgi(plain),
        "list of pairs": list(plain.items()),
        "bytes pairs (ASGI scope)": [(k.lower().encode(), v.encode()) for k, v in plain.items()],
        "Werkzeug EnvironHeaders": EnvironHeaders(wsgi(plain)),
        "an object with get() only": GetOnly(plain),
        "one-element lists": {k: [v] for k, v in plain.items()},
    }
    for label, given in shapes.items():
        assert verifier.verify_at(given, BODY, NOW)["id"] == "EVT-1", label
    assert verifier.verify_at(plain, bytearray(BODY), NOW)["id"] == "EVT-1"
    assert verifier.verify_at(plain, memoryview(BODY), NOW)["id"] == "EVT-1"


def test_every_malformed_header_is_a_webhook_error(verifier):
    good = headers()
    sig = "X-Service-Signature"
    cases = {
        "non-UTF-8 bytes": {**good, sig: b"sha256=\xff\xfe"},
        "NUL character": {**good, sig: good[sig] + "\0"},
        "NUL in bytes": {**good, sig: good[sig].encode() + b"\0"},
        "lone surrogate": {**good, sig: good[sig] + "\udcff"},
        "list of two values": {**good, sig: [good[sig], good[sig]]},
        "duplicated pair": list(good.items()) + [(sig.lower(), good[sig])],
        "two spellings": {**good, "HTTP_X_SERVICE_SIGNATURE": good[sig]},
        "oversized": {**good, sig: "sha256=" + "a" * MAX_HEADER_BYTES},
        "oversized bytes": {**good, sig: b"a" * (MAX_HEADER_BYTES + 1)},
        "not text": {**good, sig: 12345},
    }
    for label, given in cases.items():
        error = only_webhook_error(verifier, given, field=sig)
        assert isinstance(error, storefront.WebhookHeaderError), label
    missing = dict(good)
    del missing[sig]
    assert isinstance(only_webhook_error(verifier, missing, field=sig), storefront.WebhookHeaderError)
    assert isinstance(only_webhook_error(verifier, {**good, sig: None}, field=sig), storefront.WebhookHeaderError)
    assert isinstance(only_webhook_error(verifier, [("a", "b", "c")]), storefront.WebhookHeaderError)
    assert isinstance(only_webhook_error(verifier, 42), storefront.WebhookHeaderError)
    assert isinstance(only_webhook_error(verifier, None), storefront.WebhookHeaderError)


def test_every_malformed_body_is_a_webhook_error(verifier):
    good = headers()
    limit = storefront._lib.lib().sf_max_input_bytes()
    for body in (BODY.decode(), None, 12, ["x"], b"\xff\xfe", b"", b"\0" * 10, b" " * (limit + 1)):
        error = only_webhook_error(verifier, good, body=body)
        assert isinstance(error, storefront.WebhookError)
    oversized = only_webhook_error(verifier, good, body=b"x" * (limit + 1))
    assert isinstance(oversized, storefront.WebhookBodyError)
    assert oversized.result_name == "webhook_body_too_large"


def test_verify_without_a_fixed_clock_raises_the_same_errors(verifier):
    """verify() (the one production uses) shares the checks."""
    with pytest.raises(storefront.WebhookHeaderError):
        verifier.verify({**headers(), "X-Service-Timestamp": b"\xff"}, BODY)
    with pytest.raises(storefront.WebhookBodyError):
        verifier.verify(headers(), "text")
    with pytest.raises(storefront.WebhookTimestampError):  # NOW is long past
        verifier.verify(headers(), BODY)
