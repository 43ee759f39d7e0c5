"""Command-line options of the pool (see :mod:`otbench.envs.registry`): ``--pool-size`` chooses how many tools it
holds, and the settings are BFCL's, how much of each tool's true docs shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from otbench.arguments import positive_int
from otbench.envs.pool.settings import (
    DEFAULT_INDEX,
    DEFAULT_POOL_SIZE,
    DEFAULT_SETTING,
    INDEXES,
    MAX_STEPS,
    POOL_SIZES,
    SETTINGS,
)
from otbench.errors import ConfigError

if TYPE_CHECKING:
    from otbench.envs.registry import ArgumentGroup, EnvironmentOptions

__all__ = ["DEFAULT_SETTING", "LEARNING", "add_arguments", "build", "check", "settings"]

LEARNING = "offline"
"""Its docs are learned on a train split and scored on a test split, then reused by every later task."""


def add_arguments(group: ArgumentGroup) -> None:
    group.add_argument("--pool-size", default=DEFAULT_POOL_SIZE,
                       help=f"pool: how many tools, {', '.join(POOL_SIZES)} (default {DEFAULT_POOL_SIZE}); each size "
                            "holds the smaller ones")
    group.add_argument("--pool-steps", type=positive_int, default=MAX_STEPS, metavar="N",
                       help=f"pool: replies the agent may make per task (default {MAX_STEPS})")
    group.add_argument("--pool-index", default=DEFAULT_INDEX,
                       help=f"pool: what search_tools finds a tool by, {' or '.join(INDEXES)} (default {DEFAULT_INDEX}): "
                            "its current docs, or its docs and the train requests it answered (as Tool2Vec does)")


def settings() -> str:
    """The settings ``--setting`` chooses from, for its help."""
    return f"{', '.join(SETTINGS)} (default {DEFAULT_SETTING}): how much of each pool tool's true docs is shown"


def check(options: EnvironmentOptions) -> None:
    if options.setting not in SETTINGS:
        raise ConfigError(f"unknown setting {options.setting!r}; choose from {', '.join(SETTINGS)}")
    if options.own["pool_size"] not in POOL_SIZES:
        raise ConfigError(f"unknown pool size {options.own['pool_size']!r}; choose from {', '.join(POOL_SIZES)}")
    if options.own["pool_index"] not in INDEXES:
        raise ConfigError(f"unknown pool index {options.own['pool_index']!r}; choose from {', '.join(INDEXES)}")
    if options.own["pool_steps"] < 2:
        raise ConfigError("--pool-steps must be at least 2 (a search, then the answer)")


def build(options: EnvironmentOptions, *, workers: int = 1):  # a PoolEnvironment
    from otbench.envs.pool.env import PoolEnvironment

    own = options.own
    return PoolEnvironment(setting=str(options.setting), pool_size=str(own["pool_size"]),
                           max_steps=int(own["pool_steps"]), index_kind=str(own["pool_index"]), workers=workers)
