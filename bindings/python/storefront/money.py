"""Exact conversion between decimal amounts and ``amount_minor``, done by the core (the C
library's ``sf_money_to_minor`` / ``sf_money_from_minor``), so Python converts amounts with the
same rules as every other language of the SDK.

Contract: ``amount_minor`` is "a positive integer equal to the amount multiplied by 10 to the
power of the currency precision" (``currency_decimals``), at most 9007199254740991; "use integer
or decimal arithmetic, never floating-point rounding". Nothing is rounded::

    >>> to_minor("19.99", 2)
    1999
    >>> from_minor(1999, 2)
    '19.99'

Catalog amounts (product prices, order amounts) are "integers in eight-decimal fixed point (value
multiplied by 10^8)"; :func:`parse_fixed_point8` and :func:`format_fixed_point8` convert them
through the core's ``sf_fixed_point8_parse`` / ``sf_fixed_point8_format``, exactly::

    >>> parse_fixed_point8("12.5")
    1250000000
    >>> format_fixed_point8(1250000000, 2)
    '12.50'
"""

from __future__ import annotations

import ctypes
from decimal import Decimal
from typing import Any, Dict, Union

from . import _lib
from ._call import call_string, encode, raise_for
from .errors import StorefrontError, ValidationError
from .inputs import I64, U32, check_int

#: ``reason`` of an :class:`AmountError`: not a plain decimal (``1e3``, ``" 1"``, ``"1,5"``).
SYNTAX = "syntax"
#: More significant fractional digits than ``decimals`` (no rounding is done).
TOO_MANY_DECIMALS = "too_many_decimals"
#: Zero or negative.
NOT_POSITIVE = "not_positive"
#: Above 9007199254740991 (or not representable at all).
OUT_OF_RANGE = "out_of_range"
#: ``decimals`` above 18 (above 8 for :func:`format_fixed_point8`).
UNSUPPORTED_SCALE = "unsupported_scale"


class AmountError(ValidationError):
    """An amount was refused by :func:`to_minor`, :func:`from_minor`,
    :func:`parse_fixed_point8` or :func:`format_fixed_point8`. Branch on ``reason`` (one of
    :data:`SYNTAX`, :data:`TOO_MANY_DECIMALS`, :data:`NOT_POSITIVE`, :data:`OUT_OF_RANGE`,
    :data:`UNSUPPORTED_SCALE`, the core's code in ``error``), never on the message. ``field``
    is ``amount``, ``amount_minor`` or ``raw``."""

    @property
    def reason(self) -> str:
        return str(self.error)


def _amount_error(error: StorefrontError) -> StorefrontError:
    if isinstance(error, ValidationError) and error.error:
        detail: Dict[str, Any] = {
            "result": error.result,
            "result_name": error.result_name,
            "message": error.message,
            "error": error.error,
            "field": error.field,
        }
        return AmountError(detail)
    return error


def _text(amount: Union[str, Decimal]) -> str:
    if isinstance(amount, Decimal):
        if not amount.is_finite():
            return str(amount)  # "NaN", "Infinity": refused by the core as syntax
        return format(amount, "f")  # plain notation, every digit kept
    if isinstance(amount, str):
        return amount
    raise TypeError(
        f"amount must be a str or Decimal, not {type(amount).__name__}"
        + (" (floats are never accepted for money)" if isinstance(amount, float) else "")
    )


def to_minor(amount: Union[str, Decimal], decimals: int) -> int:
    """``amount`` (decimal text such as ``"19.99"``, or a :class:`decimal.Decimal`) in minor
    units at the currency precision ``decimals`` (``currency_decimals``): ``to_minor("19.99",
    2) == 1999``. Exact: ``"19.999"`` at 2 decimals raises :class:`AmountError` with reason
    ``too_many_decimals``; zero, negatives, values above 9007199254740991 and text that is not a
    plain decimal are refused too. ``float`` is a ``TypeError``."""
    text = encode(_text(amount))
    scale = check_int("decimals", decimals, U32)
    minor = ctypes.c_uint64(0)
    error = ctypes.c_void_p()
    result = _lib.lib().sf_money_to_minor(
        text, scale, ctypes.addressof(minor), ctypes.byref(error)
    )
    if result != 0:
        try:
            raise_for(result, error)
        except StorefrontError as failure:
            raise _amount_error(failure) from None
    return int(minor.value)


def from_minor(amount_minor: int, decimals: int) -> str:
    """``amount_minor`` as decimal text with exactly ``decimals`` fractional digits:
    ``from_minor(1999, 2) == "19.99"``, ``from_minor(1200, 0) == "1200"``. Zero, values above
    9007199254740991 and ``decimals`` above 18 raise :class:`AmountError`."""
    if isinstance(amount_minor, bool) or not isinstance(amount_minor, int):
        raise TypeError(f"amount_minor must be an int, not {type(amount_minor).__name__}")
    if not 0 <= amount_minor < 2**64:
        reason = NOT_POSITIVE if amount_minor < 0 else OUT_OF_RANGE
        raise AmountError(
            {"result": 400, "result_name": "validation", "error": reason, "field": "amount_minor",
             "message": f"`amount_minor`: {amount_minor} is {reason.replace('_', ' ')}"}
        )
    minor = int(amount_minor)
    scale = check_int("decimals", decimals, U32)
    try:
        return call_string("sf_money_from_minor", minor, scale)
    except StorefrontError as failure:
        raise _amount_error(failure) from None


def parse_fixed_point8(text: Union[str, Decimal]) -> int:
    """A catalog amount (decimal text such as ``"12.5"``, or a :class:`decimal.Decimal`) as its
    raw eight-decimal fixed-point integer (value x 10^8): ``parse_fixed_point8("12.5") ==
    1250000000``. Exact, with the core's rules: a leading ``-`` is accepted (``"-0.00000001"``
    is ``-1``); more than 8 significant fractional digits raises :class:`AmountError` with
    reason ``too_many_decimals`` (no rounding), a value outside a signed 64-bit raw integer
    ``out_of_range``, text that is not a plain decimal ``syntax``. ``float`` is a
    ``TypeError``."""
    encoded = encode(_text(text))
    raw = ctypes.c_int64(0)
    error = ctypes.c_void_p()
    result = _lib.lib().sf_fixed_point8_parse(
        encoded, ctypes.addressof(raw), ctypes.byref(error)
    )
    if result != 0:
        try:
            raise_for(result, error)
        except StorefrontError as failure:
            raise _amount_error(failure) from None
    return int(raw.value)


def format_fixed_point8(raw: int, decimals: int) -> str:
    """The raw eight-decimal fixed-point catalog amount ``raw`` (value x 10^8) as decimal text
    with exactly ``decimals`` fractional digits: ``format_fixed_point8(1250000000, 2) ==
    "12.50"``, ``format_fixed_point8(-1, 8) == "-0.00000001"``. Nothing is rounded: digits that
    ``decimals`` would cut off raise :class:`AmountError` with reason ``too_many_decimals``;
    ``decimals`` above 8 reason ``unsupported_scale``; ``raw`` outside a signed 64-bit integer
    reason ``out_of_range``. ``float`` is a ``TypeError``."""
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise TypeError(
            f"raw must be an int, not {type(raw).__name__}"
            + (" (floats are never accepted for money)" if isinstance(raw, float) else "")
        )
    if not I64[0] <= raw <= I64[1]:
        raise AmountError(
            {"result": 400, "result_name": "validation", "error": OUT_OF_RANGE, "field": "raw",
             "message": f"`raw`: {raw} is out of range"}
        )
    scale = check_int("decimals", decimals, U32)
    try:
        return call_string("sf_fixed_point8_format", int(raw), scale)
    except StorefrontError as failure:
        raise _amount_error(failure) from None
