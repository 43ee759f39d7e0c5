"""How a command reads its arguments: a parser that reports a mistake on one line, and the kinds of argument
(whole numbers of at least 1, finite limits, ports, seeds) that refuse a bad value before anything runs.

Environments and run settings declare their options with these kinds as the commands do, so a value is refused with
the same words wherever it is given.
"""

from __future__ import annotations

import argparse
import math
import re
from typing import Any, NoReturn


def plain_text(text: str) -> str:
    """Docstring text without its reStructuredText markup (``code``, :role:`name`), as a terminal shows it."""
    return re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text).replace("``", "")


THROUGH_CONSOLE = False
"""Whether the command runs as ``otbench COMMAND`` (the console script sets it): its usage line names it so."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (and exit 2), not a usage dump; the
    description (a command's docstring line) is shown without its markup. An option is taken only as
    spelled in full: argparse would read a mistyped ``--no-request-value`` as the one option it begins
    and start an hour-long run."""

    def __init__(self, *, description: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        prog = str(kwargs.get("prog", ""))
        if THROUGH_CONSOLE and prog.startswith("python -m otbench."):  # the usage line names the program as run
            kwargs["prog"] = "otbench " + prog.removeprefix("python -m otbench.")
        super().__init__(description=plain_text(description) if description else description, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0: seconds and similar limits, where 0, nan or inf make no sense."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number of at least 0: a sampling temperature, where nan, inf or a negative value make no sense."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text}")
    return value


def port_number(text: str) -> int:
    """A TCP port, 1 to 65535."""
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {value}")
    return value


def seed(text: str) -> int:
    """A task sample's seed: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a seed of 0 or more, got {value}")
    return value


def seed_list(text: str) -> tuple[int, ...]:
    """``1,2,3``: the seeds of several task samples (whole numbers, 0 or more, none left empty)."""
    parts = [part.strip() for part in text.split(",")]
    if not all(parts):
        raise argparse.ArgumentTypeError(f"expected seeds separated by commas, with none empty, got {text!r}")
    return tuple(seed(part) for part in parts)
