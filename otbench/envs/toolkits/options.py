"""Command-line options of the toolkits (see :mod:`otbench.envs.registry`): ``--toolkit`` chooses the family, and
the settings are how its tools are shown under their opaque names.

``--env toolkit --toolkit NAME`` learns on the family's train requests and scores on its test
requests (``--limit``/``--test-limit`` and ``--seed`` sample them as in every environment). Runs are
filed under the environment ``toolkit-NAME``, so each family has its own runs, views and plots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otbench.core.opaque import PRESENTATIONS
from otbench.envs.toolkits import FAMILIES
from otbench.errors import ConfigError

if TYPE_CHECKING:
    from otbench.envs.registry import ArgumentGroup, EnvironmentOptions

LEARNING = "offline"
"""Its docs are learned on a train split and scored on a test split (its environment's ``learning``)."""


DEFAULT_SETTING = "names_only"
DEFAULT_TOOLKIT = FAMILIES[0]


def add_arguments(group: ArgumentGroup) -> None:
    group.add_argument("--toolkit", default=DEFAULT_TOOLKIT,
                       help=f"toolkit: the family of tools, {', '.join(FAMILIES)} (default {DEFAULT_TOOLKIT})")


def settings() -> str:
    """The settings ``--setting`` chooses from, for its help."""
    return f"{', '.join(PRESENTATIONS)} (default {DEFAULT_SETTING}): what the opaque tools show"


def check(options: EnvironmentOptions) -> None:
    if options.setting not in PRESENTATIONS:
        raise ConfigError(f"unknown toolkit setting {options.setting!r}; choose from {', '.join(PRESENTATIONS)}")
    if options.own["toolkit"] not in FAMILIES:
        raise ConfigError(f"unknown toolkit {options.own['toolkit']!r}; choose from {', '.join(FAMILIES)}")


def build(options: EnvironmentOptions, *, workers: int = 1):  # a FunctionEnvironment
    from otbench.envs.toolkits.families import load

    return load(str(options.own["toolkit"])).environment(str(options.setting))
