"""Command-line options of Wild (see :mod:`otbench.envs.registry`); its settings are BFCL's: how much of each
function's true docs the agent sees."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from otbench.arguments import positive_int
from otbench.envs.registry import add_refuse_repeats
from otbench.envs.wild import defaults
from otbench.envs.wild.settings import DEFAULT_SETTING, SETTINGS
from otbench.errors import ConfigError

if TYPE_CHECKING:
    from otbench.envs.registry import ArgumentGroup, EnvironmentOptions


LEARNING = "offline"
"""Its docs are learned on a train split and scored on a test split (its environment's ``learning``)."""


def add_arguments(group: ArgumentGroup) -> None:
    group.add_argument("--max-steps", type=positive_int, default=defaults.MAX_STEPS,
                       help=f"Wild: replies the agent may make per user turn (default {defaults.MAX_STEPS})")
    add_refuse_repeats(group, defaults.REPEATS_REFUSED)
    group.add_argument("--answer-cue", action=argparse.BooleanOptionalAction, default=defaults.ANSWER_CUE,
                       help="Wild: once calls ran in a user turn, the agent's prompt ends with how to answer the user "
                            f"(default {'on' if defaults.ANSWER_CUE else 'off'})")


def settings() -> str:
    """The settings ``--setting`` chooses from, for its help."""
    return f"{', '.join(SETTINGS)} (default {DEFAULT_SETTING}): how much of the true docs is shown"


def check(options: EnvironmentOptions) -> None:
    if options.setting not in SETTINGS:
        raise ConfigError(f"unknown setting {options.setting!r}; choose from {', '.join(SETTINGS)}")


def build(options: EnvironmentOptions, *, workers: int = 1):  # a WildEnvironment
    from otbench.envs.wild.env import WildEnvironment

    own = options.own
    return WildEnvironment(setting=str(options.setting), workers=workers, max_steps=own["max_steps"],
                           call_timeout=5.0, repeats_refused=own["refuse_repeats"], answer_cue=own["answer_cue"])
