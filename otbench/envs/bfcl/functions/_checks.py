"""Argument checks shared by the BFCL function implementations.

Models call these functions with JSON values, often of the wrong kind. The checks turn such
mistakes into a TypeError or ValueError whose message names the offending *parameter* (never
the function: the environment runs functions under opaque names, and an editor learns the
parameters from these messages). ``bool`` is refused wherever a number is expected, because a
JSON ``true`` sent for a count is always a mistake, even though Python would accept it as 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Number = int | float


def _kind(value: Any) -> str:
    return type(value).__name__


def number(value: Any, name: str) -> Number:
    """``value`` if it is an int or float (not bool), else TypeError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"'{name}' must be a number, got {_kind(value)} {value!r}")
    return value


def integer(value: Any, name: str) -> int:
    """``value`` as an int; whole floats such as 5.0 are accepted, 2.5 is a ValueError."""
    if isinstance(value, float) and not isinstance(value, bool):
        if not value.is_integer():
            raise ValueError(f"'{name}' must be a whole number, got {value!r}")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"'{name}' must be an integer, got {_kind(value)} {value!r}")
    return value


def non_negative_integer(value: Any, name: str) -> int:
    """An integer that is >= 0."""
    result = integer(value, name)
    if result < 0:
        raise ValueError(f"'{name}' must be non-negative, got {result}")
    return result


def positive(value: Any, name: str) -> Number:
    """A number that is > 0."""
    result = number(value, name)
    if result <= 0:
        raise ValueError(f"'{name}' must be positive, got {result!r}")
    return result


def string(value: Any, name: str) -> str:
    """``value`` if it is a str, else TypeError."""
    if not isinstance(value, str):
        raise TypeError(f"'{name}' must be a string, got {_kind(value)} {value!r}")
    return value


def non_empty_string(value: Any, name: str) -> str:
    """A str with something other than whitespace in it, stripped."""
    text = string(value, name).strip()
    if not text:
        raise ValueError(f"'{name}' must not be empty")
    return text


def boolean(value: Any, name: str) -> bool:
    """``value`` if it is a bool, else TypeError."""
    if not isinstance(value, bool):
        raise TypeError(f"'{name}' must be a boolean, got {_kind(value)} {value!r}")
    return value


def sequence(value: Any, name: str) -> list[Any]:
    """``value`` as a list if it is a list or tuple (JSON arrays arrive as lists)."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"'{name}' must be a list, got {_kind(value)} {value!r}")
    return list(value)


def number_list(value: Any, name: str, *, min_length: int = 0) -> list[Number]:
    """A list of numbers with at least ``min_length`` items."""
    items = sequence(value, name)
    for index, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise TypeError(f"'{name}' must contain only numbers; item {index} is {_kind(item)} {item!r}")
    if len(items) < min_length:
        raise ValueError(f"'{name}' must have at least {min_length} item(s), got {len(items)}")
    return items


def integer_list(value: Any, name: str) -> list[int]:
    """A list of integers (whole floats accepted, as in :func:`integer`)."""
    return [integer(item, f"{name}[{index}]") for index, item in enumerate(sequence(value, name))]


def string_list(value: Any, name: str) -> list[str]:
    """A list of strings."""
    return [string(item, f"{name}[{index}]") for index, item in enumerate(sequence(value, name))]


def point(value: Any, name: str) -> tuple[Number, Number]:
    """A 2D point given as a two-number list or tuple."""
    items = number_list(value, name)
    if len(items) != 2:
        raise ValueError(f"'{name}' must be a point [x, y] of 2 numbers, got {len(items)}")
    return items[0], items[1]


def points(value: Any, name: str) -> list[tuple[Number, Number]]:
    """A list of 2D points."""
    return [point(item, f"{name}[{index}]") for index, item in enumerate(sequence(value, name))]


def matrix(value: Any, name: str) -> list[list[Number]]:
    """A non-empty rectangular matrix given as a list of equally long rows of numbers."""
    rows = sequence(value, name)
    if not rows:
        raise ValueError(f"'{name}' must have at least one row")
    checked = [number_list(row, f"{name}[{index}]", min_length=1) for index, row in enumerate(rows)]
    widths = {len(row) for row in checked}
    if len(widths) != 1:
        raise ValueError(f"'{name}' must be rectangular: its rows have lengths {sorted(widths)}")
    return checked


def same_length(first: Sequence[Any], first_name: str, second: Sequence[Any], second_name: str) -> None:
    """ValueError unless the two sequences are equally long."""
    if len(first) != len(second):
        raise ValueError(
            f"'{first_name}' and '{second_name}' must have the same length, got {len(first)} and {len(second)}"
        )


def one_of(value: Any, name: str, options: dict[str, Any]) -> Any:
    """The entry of ``options`` whose key equals ``value`` ignoring case and surrounding spaces."""
    key = string(value, name).strip().lower()
    if key not in options:
        raise ValueError(f"'{name}' must be one of {sorted(options)}, got {value!r}")
    return options[key]
