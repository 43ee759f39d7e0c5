"""Command-line options of Chess (see :mod:`otbench.envs.registry`); its settings are which engines the agent
chooses among.

Position and game counts are limited with the shared ``--limit`` (and ``--test-limit`` in
optimize): a chess task is one game from one position.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from otbench.arguments import positive_int
from otbench.envs.chess.settings import DEFAULT_SETTING, PHASE_NAMED, SETTINGS
from otbench.errors import ConfigError
from otbench.outputs import OutputType

if TYPE_CHECKING:
    from otbench.envs.registry import ArgumentGroup, EnvironmentOptions


LEARNING = "offline"
"""Its docs are learned on a train split and scored on a test split (its environment's ``learning``)."""


def add_arguments(group: ArgumentGroup) -> None:
    group.add_argument("--max-moves", type=positive_int, default=120,
                       help="chess: agent moves per test game before it is scored a draw (default 120)")
    group.add_argument("--exploration-moves", type=positive_int, default=10,
                       help="chess: agent moves per exploration (train) game (default 10)")
    group.add_argument("--board-diagram", action="store_true",
                       help="chess: also show the agent the board as a text diagram under the FEN (default: FEN "
                            "only, as a small agent tends to pass the diagram as the FEN)")
    group.add_argument("--phase-name", action=argparse.BooleanOptionalAction, default=PHASE_NAMED,
                       help="chess: also tell the agent which game phase the piece count puts the position in "
                            f"(default {'on' if PHASE_NAMED else 'off'}; a small agent matches a phase's name, "
                            "not a count against ranges)")
    group.add_argument("--stockfish", default=None,
                       help="chess: Stockfish binary (default: $OTBENCH_STOCKFISH, PATH, then /usr/games/stockfish)")
    group.add_argument("--engine-cache", type=OutputType("file", off="none"), default=None,
                       help="chess: file that keeps engine results across runs (default: in the otbench cache); "
                            "'none' keeps them for this run only")


def settings() -> str:
    """The settings ``--setting`` chooses from, for its help."""
    return f"{', '.join(SETTINGS)} (default {DEFAULT_SETTING}): which engines"


def check(options: EnvironmentOptions) -> None:
    from otbench.envs.chess.engine import find_stockfish

    if options.setting not in SETTINGS:
        raise ConfigError(f"unknown chess setting {options.setting!r}; choose from {', '.join(SETTINGS)}")
    find_stockfish(options.own["stockfish"])


def build(options: EnvironmentOptions, *, workers: int = 1):  # a ChessEnvironment
    from otbench.envs.chess.env import ChessEnvironment
    from otbench.paths import cache_dir

    own = options.own
    choice = own["engine_cache"]
    default = cache_dir() / "chess" / "engine-results.sqlite"
    engine_cache = None if choice == "none" else Path(choice) if choice else default
    return ChessEnvironment(setting=str(options.setting), max_moves=own["max_moves"],
                            exploration_moves=own["exploration_moves"], stockfish=own["stockfish"], workers=workers,
                            engine_cache=engine_cache, board_diagram=own["board_diagram"],
                            phase_named=own["phase_name"])
