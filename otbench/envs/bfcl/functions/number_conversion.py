"""Conversions between binary, decimal and hexadecimal representations."""

from __future__ import annotations

from . import _checks as check


def _binary_value(text: str, name: str) -> int:
    digits = check.non_empty_string(text, name)
    if any(char not in "01" for char in digits):
        raise ValueError(f"'{name}' must be a binary number made of 0s and 1s, got {text!r}")
    return int(digits, 2)


def add_binary_numbers(a: str, b: str) -> str:
    """Sum of two binary numbers given as strings, as a binary string without leading zeros.

    For example '0011' + '1100' -> '1111'.
    """
    return format(_binary_value(a, "a") + _binary_value(b, "b"), "b")


def convert_binary_to_decimal(binary: str) -> int:
    """The integer value of a binary string such as '1011' (-> 11)."""
    return _binary_value(binary, "binary")


def convert_decimal_to_hex(decimal: int) -> str:
    """Upper-case hexadecimal digits of an integer without a '0x' prefix (255 -> 'FF', -255 -> '-FF')."""
    value = check.integer(decimal, "decimal")
    return format(value, "X")
