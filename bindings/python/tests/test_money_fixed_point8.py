"""Catalog amounts in eight-decimal fixed point (value x 10^8), converted by the core through
``sf_fixed_point8_parse`` / ``sf_fixed_point8_format``: exact, never floats, a typed
:class:`storefront.AmountError` with a ``reason`` for every refusal.

Contract rule: catalog amounts "are integers in eight-decimal fixed point (value multiplied by
10^8)"; "use integer or decimal arithmetic, never floating-point rounding"."""

from __future__ import annotations

from decimal import Decimal

import pytest

import storefront
from storefront import AmountError, format_fixed_point8, parse_fixed_point8

I64_MAX = 2**63 - 1


def test_fixed_point8_is_exported():
    assert "parse_fixed_point8" in storefront.__all__
    assert "format_fixed_point8" in storefront.__all__


def test_decimal_text_parses_to_the_raw_integer_exactly():
    assert parse_fixed_point8("12.5") == 1_250_000_000
    assert parse_fixed_point8("12.50000000") == 1_250_000_000
    assert parse_fixed_point8("0.100000000") == 10_000_000  # trailing zeros are not digits cut
    assert parse_fixed_point8("0") == 0
    assert parse_fixed_point8("0.00000001") == 1
    # The core's rule: catalog amounts are signed, so a leading minus parses.
    assert parse_fixed_point8("-0.00000001") == -1
    assert parse_fixed_point8("-12.5") == -1_250_000_000
    assert parse_fixed_point8("92233720368.54775807") == I64_MAX
    assert parse_fixed_point8("0.1") + parse_fixed_point8("0.2") == parse_fixed_point8("0.3")
    assert parse_fixed_point8(Decimal("12.5")) == 1_250_000_000
    assert parse_fixed_point8(Decimal("1E+1")) == 1_000_000_000  # plain notation reaches the core
    assert parse_fixed_point8(Decimal("-0.00000001")) == -1


def test_raw_integers_format_at_a_display_precision_exactly():
    assert format_fixed_point8(1_250_000_000, 2) == "12.50"
    assert format_fixed_point8(1_250_000_000, 8) == "12.50000000"
    assert format_fixed_point8(100_000_000, 0) == "1"
    assert format_fixed_point8(0, 0) == "0"
    assert format_fixed_point8(-1, 8) == "-0.00000001"
    assert format_fixed_point8(-1_250_000_000, 1) == "-12.5"
    assert format_fixed_point8(I64_MAX, 8) == "92233720368.54775807"
    assert format_fixed_point8(-(2**63), 8) == "-92233720368.54775808"
    for text in ["12.5", "-0.00000001", "92233720368.54775807", "0.12345678"]:
        assert parse_fixed_point8(format_fixed_point8(parse_fixed_point8(text), 8)) == \
            parse_fixed_point8(text)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("0.000000001", "too_many_decimals"),
        ("1.123456789", "too_many_decimals"),
        ("92233720368.54775808", "out_of_range"),
        ("999999999999999999999999", "out_of_range"),
        ("", "syntax"),
        (".5", "syntax"),
        ("1.", "syntax"),
        ("1e3", "syntax"),
        ("1,5", "syntax"),
        ("NaN", "syntax"),
        (" 1", "syntax"),
        ("--1", "syntax"),
    ],
)
def test_refused_text_raises_a_typed_error_with_a_reason(text, reason):
    with pytest.raises(AmountError) as refused:
        parse_fixed_point8(text)
    assert refused.value.reason == reason
    assert refused.value.field == "amount"
    assert isinstance(refused.value, storefront.ValidationError)


@pytest.mark.parametrize(
    "raw, decimals, reason",
    [
        (1_250_000_000, 0, "too_many_decimals"),  # "12.5" at 0 decimals would cut the 5
        (1, 7, "too_many_decimals"),
        (-1, 7, "too_many_decimals"),
        (1, 9, "unsupported_scale"),
        (1, 2**32 - 1, "unsupported_scale"),
        (2**63, 8, "out_of_range"),
        (-(2**63) - 1, 8, "out_of_range"),
    ],
)
def test_formatting_refusals_raise_a_typed_error_with_a_reason(raw, decimals, reason):
    with pytest.raises(AmountError) as refused:
        format_fixed_point8(raw, decimals)
    assert refused.value.reason == reason
    assert refused.value.field == "raw"


def test_floats_are_never_accepted():
    with pytest.raises(TypeError):
        parse_fixed_point8(12.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        format_fixed_point8(12.5, 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        format_fixed_point8(True, 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        format_fixed_point8(1, 2.0)  # type: ignore[arg-type]
    with pytest.raises(AmountError) as nan:
        parse_fixed_point8(Decimal("NaN"))
    assert nan.value.reason == "syntax"
