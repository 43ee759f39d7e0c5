"""Deterministic pseudo-random values derived from arguments, for the offline stand-ins.

A stand-in for a live service must answer equal arguments with equal outputs in every process,
so values come from a SHA-256 digest of the (namespace, normalised arguments), never from
Python's salted ``hash()`` or the ``random`` module's global state. Callers pass already
normalised text (e.g. upper-cased symbols); numbers are normalised here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def _normalise(value: Any) -> Any:
    """Whole floats become ints so that 1000 and 1000.0 (equal arguments) give equal values."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, (list, tuple)):
        return [_normalise(item) for item in value]
    return value


def _digest_int(parts: tuple[Any, ...]) -> int:
    payload = json.dumps(_normalise(parts), sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=repr)
    return int.from_bytes(hashlib.sha256(payload.encode("ascii")).digest(), "big")


def unit(*parts: Any) -> float:
    """A float in [0, 1) fixed by ``parts``."""
    return (_digest_int(parts) >> 203) / float(1 << 53)


def uniform(low: float, high: float, *parts: Any) -> float:
    """A float in [low, high) fixed by ``parts``."""
    return low + (high - low) * unit(*parts)


def randint(low: int, high: int, *parts: Any) -> int:
    """An int in [low, high] (both included) fixed by ``parts``."""
    return low + _digest_int(parts) % (high - low + 1)


def choice(options: Sequence[T], *parts: Any) -> T:
    """One of ``options`` fixed by ``parts``."""
    return options[_digest_int(parts) % len(options)]
