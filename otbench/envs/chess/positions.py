"""Chess positions of the benchmark: game phase, evaluation bucket, strata and the data file.

Phase follows the material on the board (kings and pawns included): the phase specialists key
on it, and the positions are stratified by it. Evaluation buckets are from White's side, as the
paper stratifies them: equal, then slight / winning / crushing-or-mate for each side.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import TypeVar

import chess
import chess.engine

from otbench.envs.chess.metrics import MATE_CP
from otbench.errors import DataError

_Key = TypeVar("_Key")

PHASES = ("opening", "middlegame", "endgame", "late_endgame")
# Lowest piece count (kings and pawns included) of each phase; below the last: late endgame.
PHASE_FLOORS = {"opening": 28, "middlegame": 16, "endgame": 10}
PHASE_SHARES = {"opening": 0.25, "middlegame": 0.40, "endgame": 0.25, "late_endgame": 0.10}

BUCKETS = ("equal", "white_slight", "black_slight", "white_winning", "black_winning", "white_crushing",
           "black_crushing")
# The paper's shares (40 / 10+10 / 8+8 / 6+6) add up to 88%; the ratios are kept and normalised.
_RAW_BUCKET_SHARES = {"equal": 40, "white_slight": 10, "black_slight": 10, "white_winning": 8, "black_winning": 8,
                      "white_crushing": 6, "black_crushing": 6}
BUCKET_SHARES = {name: share / sum(_RAW_BUCKET_SHARES.values()) for name, share in _RAW_BUCKET_SHARES.items()}
# Upper centipawn bounds (White's view, absolute value) of equal, slight and winning; beyond: crushing.
EQUAL_CP, SLIGHT_CP, WINNING_CP = 50, 150, 400
TRAIN_SHARE = 0.10
SPLITS = ("train", "test")
DATA_FILE = "positions.jsonl"


def piece_count(board: chess.Board) -> int:
    return len(board.piece_map())


def phase_of(board: chess.Board) -> str:
    pieces = piece_count(board)
    for phase, floor in PHASE_FLOORS.items():
        if pieces >= floor:
            return phase
    return "late_endgame"


def phase_label(board: chess.Board) -> str:
    """The phase with the piece counts that define it (``"endgame (10-15 pieces)"``): a caller can count."""
    phase = phase_of(board)
    floors = list(PHASE_FLOORS.values())
    if phase == PHASES[0]:
        span = f"{floors[0]} or more pieces"
    elif phase == PHASES[-1]:
        span = f"{floors[-1] - 1} or fewer pieces"
    else:
        span = f"{PHASE_FLOORS[phase]}-{floors[PHASES.index(phase) - 1] - 1} pieces"
    return f"{phase.replace('_', ' ')} ({span})"


def bucket_of(score: chess.engine.PovScore) -> str:
    """The evaluation bucket of a score (any point of view): equal, or slight/winning/crushing for a side."""
    cp = white_centipawns(score)
    if abs(cp) <= EQUAL_CP:
        return "equal"
    side = "white" if cp > 0 else "black"
    size = "slight" if abs(cp) <= SLIGHT_CP else "winning" if abs(cp) <= WINNING_CP else "crushing"
    return f"{side}_{size}"


def white_centipawns(score: chess.engine.PovScore) -> int:
    """Centipawns from White's side; a mate in n counts as +-(MATE_CP - n), beyond every real evaluation."""
    return score.white().score(mate_score=MATE_CP)


def largest_remainder(shares: Mapping[_Key, float], total: int) -> dict[_Key, int]:
    """Whole counts proportional to ``shares`` that add up to exactly ``total`` (ties broken by key order)."""
    exact = {key: share * total for key, share in shares.items()}
    counts = {key: int(value) for key, value in exact.items()}
    by_remainder = sorted(exact, key=lambda key: (-(exact[key] - counts[key]), list(shares).index(key)))
    for key in by_remainder[: total - sum(counts.values())]:
        counts[key] += 1
    return counts


def stratum_quotas(total: int) -> dict[tuple[str, str], int]:
    """How many positions each (phase, bucket) stratum holds in a set of ``total`` positions."""
    shares = {(phase, bucket): PHASE_SHARES[phase] * BUCKET_SHARES[bucket] for phase in PHASES for bucket in BUCKETS}
    return largest_remainder(shares, total)


@dataclass(frozen=True)
class Position:
    """One benchmark position with where it came from and how it was classified.

    ``white_cp`` is the generator's evaluation from White's side (mates as +-(MATE_CP - distance)).
    """

    id: str
    fen: str
    phase: str
    bucket: str
    white_cp: int
    source: str
    split: str

    def board(self) -> chess.Board:
        return chess.Board(self.fen)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))


def default_data_path() -> Path:
    return Path(str(resources.files("otbench.envs.chess") / "data" / DATA_FILE))


def load_positions(path: Path | None = None) -> list[Position]:
    """The committed positions (or those of ``path``), validated: a broken file is a user-facing error."""
    source = path or default_data_path()
    if not source.is_file():
        raise DataError(f"no chess positions at {source}: generate them with python -m otbench.envs.chess.generate")
    positions = []
    for number, line in enumerate(source.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            position = Position(**json.loads(line))
            chess.Board(position.fen)
        except (ValueError, TypeError) as exc:
            raise DataError(f"{source}:{number}: not a valid position record ({exc})") from None
        positions.append(position)
    return positions


def write_positions(positions: Iterable[Position], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(position.to_json() + "\n" for position in positions))
