"""Command-line options of Chess (see :mod:`otbench.envs.registry`).

Position and game counts are limited with the shared ``--limit`` (and ``--test-limit`` in
optimize): a chess task is one game from one position.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from otbench.cli import positive_int
from otbench.errors import ConfigError


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--max-moves", type=positive_int, default=120,
                       help="chess: agent moves per test game before it is scored a draw (default 120)")
    group.add_argument("--exploration-moves", type=positive_int, default=10,
                       help="chess: agent moves per exploration (train) game (default 10)")
    group.add_argument("--stockfish", default=None,
                       help="chess: Stockfish binary (default: $OTBENCH_STOCKFISH, PATH, then /usr/games/stockfish)")
    group.add_argument("--engine-cache", default=None,
                       help="chess: file that keeps engine results across runs (default: in the otbench cache); "
                            "'none' keeps them for this run only")


def toolsets() -> str:
    """The tool sets ``--toolset`` chooses from, for its help."""
    from otbench.envs.chess.tools import DEFAULT_TOOLSET, TOOLSETS

    return f"{', '.join(TOOLSETS)} (default {DEFAULT_TOOLSET})"


def check(args: argparse.Namespace) -> None:
    from otbench.envs.chess.engine import find_stockfish
    from otbench.envs.chess.tools import TOOLSETS

    if args.toolset is not None and args.toolset not in TOOLSETS:
        raise ConfigError(f"unknown chess toolset {args.toolset!r}; choose from {', '.join(TOOLSETS)}")
    find_stockfish(args.stockfish)


def build(args: argparse.Namespace, *, workers: int = 1):  # a ChessEnvironment
    from otbench.envs.chess.env import ChessEnvironment
    from otbench.envs.chess.tools import DEFAULT_TOOLSET
    from otbench.paths import cache_dir

    choice = getattr(args, "engine_cache", None)
    default = cache_dir() / "chess" / "engine-results.sqlite"
    engine_cache = None if choice == "none" else Path(choice) if choice else default
    return ChessEnvironment(toolset=args.toolset or DEFAULT_TOOLSET, max_moves=args.max_moves,
                            exploration_moves=args.exploration_moves, stockfish=args.stockfish, workers=workers,
                            engine_cache=engine_cache)
