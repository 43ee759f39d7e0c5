"""An optimizer's tuning knobs, declared once: a dataclass whose fields carry help, bounds and sweep range.

Everything else is derived from the declaration: the command-line flags (``--p2p-samples``, with
their defaults and bounds checked as the options are read), optuna's search space, the options
``compare`` passes on to an optimizer's row, and the check a library user's values get.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Protocol

from otbench.errors import ConfigError

MODES = ("online", "offline")
"""The learning modes: docs learned per task at test time (``online``), or on a train split (``offline``)."""


@dataclass(frozen=True)
class Knob:
    """What a knob field declares: its help text, its lower bound, its sweep range by learning mode
    (``"online"``, ``"offline"``, or ``"any"``; a mode without a range is not swept), and the modes it acts in
    (a knob that does not act in a run's mode is not part of what defines the run)."""

    help: str
    minimum: int | None = None
    sweep: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    modes: tuple[str, ...] = MODES

    def sweep_range(self, mode: str) -> tuple[int, int] | None:
        return self.sweep.get(mode, self.sweep.get("any"))


def knob(default: int | None, help: str, *, minimum: int | None = None,
         sweep: Mapping[str, tuple[int, int]] | tuple[int, int] | None = None, modes: tuple[str, ...] = MODES) -> Any:
    """A knob field: ``sweep`` is one range for every mode, or ranges by mode; ``modes``, where it acts."""
    ranges = {"any": sweep} if isinstance(sweep, tuple) else dict(sweep or {})
    return field(default=default, metadata={"knob": Knob(help, minimum, ranges, modes)})


class Knobs(Protocol):
    """A frozen dataclass of knobs; ``flag_prefix`` names its command-line flags (``p2p`` -> ``--p2p-...``)."""

    flag_prefix: ClassVar[str]
    __dataclass_fields__: ClassVar[dict[str, Any]]


def declared(knobs: type[Knobs]) -> list[tuple[str, Knob, Any]]:
    """(field name, declaration, default) of every budget knob (a field declared with :func:`knob`), in declaration
    order; the knobs' other fields are choices of another kind, which their optimizer's spec handles."""
    return [(f.name, f.metadata["knob"], f.default) for f in fields(knobs) if "knob" in f.metadata]


def dest(knobs: type[Knobs], name: str) -> str:
    """The option's name on the command line's namespace (and in MLflow's run parameters)."""
    return f"{knobs.flag_prefix}_{name}" if knobs.flag_prefix else name


def check(knobs: Knobs) -> None:
    """Refuse values under a knob's bound (:class:`~otbench.errors.ConfigError`, a ``ValueError``; one line)."""
    for name, declaration, _ in declared(type(knobs)):
        value = getattr(knobs, name)
        if declaration.minimum is not None and value is not None and value < declaration.minimum:
            raise ConfigError(f"{name} must be at least {declaration.minimum}, got {value}")


def int_at_least(minimum: int) -> Any:
    """An argparse type: a whole number no smaller than ``minimum`` (else argparse's one-line error)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number >= {minimum}, got {value}")
        return value

    return parse


def help_text(text: str) -> str:
    """``text`` as argparse's help: it formats help with ``%`` (``%(default)s``), so a literal ``%`` (a request's
    "15%") is doubled, or ``--help`` ends in a traceback."""
    return text.replace("%", "%%")


def add_arguments(group: argparse._ArgumentGroup, knobs: type[Knobs], *, only: list[str] | None = None) -> None:
    """One ``--flag`` per knob (those named in ``only``, where given), with its default and bound."""
    for name, declaration, default in declared(knobs):
        if only is not None and name not in only:
            continue
        option = dest(knobs, name)
        shown = f" (default {default})" if default is not None else ""
        group.add_argument(f"--{option.replace('_', '-')}", dest=option, default=default,
                           type=int_at_least(declaration.minimum) if declaration.minimum is not None else int,
                           help=help_text(f"{declaration.help}{shown}"))


def from_values(knobs: type[Knobs], values: Mapping[str, Any]) -> Any:
    """The knobs as ``values`` set them by option name (a command line's, a checkpoint's; defaults for those
    left out), checked."""
    chosen = knobs(**{name: values.get(dest(knobs, name), default) for name, _, default in declared(knobs)})
    check(chosen)
    return chosen


def replaced(knobs: Any, values: Mapping[str, Any]) -> Any:
    """``knobs`` with the budget knobs ``values`` sets by option name (a sweep's draw) replaced, checked; its other
    fields kept."""
    by_option = {dest(type(knobs), name): name for name, _, _ in declared(type(knobs))}
    chosen = dataclasses.replace(knobs, **{by_option[option]: value for option, value in values.items()
                                           if option in by_option})
    check(chosen)
    return chosen


def values(knobs: Knobs) -> dict[str, Any]:
    """The knobs by option name (``p2p_samples``), as runs log them."""
    return {dest(type(knobs), name): getattr(knobs, name) for name, _, _ in declared(type(knobs))}


def search_space(knobs: type[Knobs], trial: Any, mode: str) -> dict[str, Any]:
    """An optuna trial's values for every knob with a sweep range in ``mode`` that acts there, keyed as the command
    line's."""
    space = {}
    for name, declaration, _ in declared(knobs):
        bounds = declaration.sweep_range(mode)
        if bounds is not None and mode in declaration.modes:
            space[dest(knobs, name)] = trial.suggest_int(dest(knobs, name), *bounds)
    return space


def markdown_table(knobs: type[Knobs], label: str) -> str:
    """The budget knobs as a Markdown table (flag, default, lower bound, sweep range, help), for an optimizer's
    docs page."""
    found = declared(knobs)
    lines = []
    if found:
        lines += ["| flag | default | at least | swept over | what it sets |", "|---|---|---|---|---|"]
    for field_name, declaration, default in found:
        flag = "--" + dest(knobs, field_name).replace("_", "-")
        ranges = ", ".join(f"{mode}: {low}-{high}" for mode, (low, high) in declaration.sweep.items()).replace("any: ", "")
        minimum = "" if declaration.minimum is None else str(declaration.minimum)
        shown = "-" if default is None else str(default)
        modes = "" if set(declaration.modes) == set(MODES) else f" (acts {' and '.join(declaration.modes)})"
        lines.append(f"| `{flag}` | {shown} | {minimum} | {ranges or 'not swept'} | "
                     f"{declaration.help.replace('|', chr(92) + '|')}{modes} |")
    if not found:
        lines.append(f"{label} has no budget knobs.")
    return "\n".join(lines)
