"""Command-line options of BFCL-Opaque (see :mod:`otbench.envs.registry`); its settings are how much of the
true docs the agent sees."""

from __future__ import annotations

from typing import TYPE_CHECKING

from otbench.arguments import positive_float, positive_int
from otbench.core.calls import DEFAULT_MAX_CALLS_PER_REPLY
from otbench.core.sandbox import DEFAULT_MAX_OUTPUT_BYTES
from otbench.envs.bfcl.settings import SETTINGS
from otbench.errors import ConfigError

if TYPE_CHECKING:
    from otbench.envs.registry import ArgumentGroup, EnvironmentOptions

LEARNING = "online"
"""Its docs are learned per task, at test time (its environment's ``learning``)."""
DEFAULT_SETTING = "names_only"


def add_arguments(group: ArgumentGroup) -> None:
    group.add_argument("--parallel", action="store_true",
                       help="BFCL: add the exec_parallel and exec_parallel_multiple categories")
    group.add_argument("--call-timeout", type=positive_float, default=5.0,
                       help="BFCL: CPU seconds a tool call may use (default 5)")
    group.add_argument("--max-calls-per-reply", type=positive_int, default=DEFAULT_MAX_CALLS_PER_REPLY,
                       help="BFCL: calls of one reply that are run; later ones are failed calls "
                            f"(default {DEFAULT_MAX_CALLS_PER_REPLY})")
    group.add_argument("--max-output-bytes", type=positive_int, default=DEFAULT_MAX_OUTPUT_BYTES,
                       help="BFCL: a tool call whose output is larger (pickled) fails "
                            f"(default {DEFAULT_MAX_OUTPUT_BYTES})")


def settings() -> str:
    """The settings ``--setting`` chooses from, for its help: how much of the true docs each test's tools show."""
    return f"{', '.join(SETTINGS)} (default {DEFAULT_SETTING}): how much of the true docs is shown"


def check(options: EnvironmentOptions) -> None:
    if options.setting not in SETTINGS:
        raise ConfigError(f"unknown setting {options.setting!r}; choose from {', '.join(SETTINGS)}")


def build(options: EnvironmentOptions, *, workers: int = 1):  # a BfclEnvironment
    from otbench.envs.bfcl.data import ALL_CATEGORIES, DEFAULT_CATEGORIES
    from otbench.envs.bfcl.env import BfclEnvironment

    own = options.own
    return BfclEnvironment(setting=str(options.setting), categories=ALL_CATEGORIES if own["parallel"] else DEFAULT_CATEGORIES,
                           call_timeout=own["call_timeout"], workers=workers,
                           max_calls_per_reply=own["max_calls_per_reply"], max_output_bytes=own["max_output_bytes"])
