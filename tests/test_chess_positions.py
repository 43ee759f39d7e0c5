"""Phases, evaluation buckets, strata, and the committed position data."""

from collections import Counter

import chess
import chess.engine
import pytest

from otbench.envs.chess.generate import StrataFiller, split_and_number
from otbench.envs.chess.positions import (
    BUCKETS,
    PHASES,
    bucket_of,
    largest_remainder,
    load_positions,
    phase_of,
    stratum_quotas,
)
from otbench.errors import DataError


def _board_with(pieces: int) -> chess.Board:
    """Kings plus pawns/knights filling squares until ``pieces`` pieces stand on the board."""
    board = chess.Board(None)
    board.set_piece_at(chess.E1, chess.Piece(chess.KING, chess.WHITE))
    board.set_piece_at(chess.E8, chess.Piece(chess.KING, chess.BLACK))
    free = [s for s in chess.SQUARES if board.piece_at(s) is None and chess.square_rank(s) not in (0, 7)]
    for index, square in enumerate(free[: pieces - 2]):
        board.set_piece_at(square, chess.Piece(chess.KNIGHT, chess.WHITE if index % 2 else chess.BLACK))
    return board


@pytest.mark.parametrize("pieces, phase", [(32, "opening"), (28, "opening"), (27, "middlegame"), (16, "middlegame"),
                                           (15, "endgame"), (10, "endgame"), (9, "late_endgame"), (3, "late_endgame")])
def test_phase_follows_the_piece_count(pieces, phase):
    assert phase_of(_board_with(pieces)) == phase


@pytest.mark.parametrize("score, bucket", [
    (chess.engine.PovScore(chess.engine.Cp(30), chess.WHITE), "equal"),
    (chess.engine.PovScore(chess.engine.Cp(-120), chess.WHITE), "black_slight"),
    (chess.engine.PovScore(chess.engine.Cp(-120), chess.BLACK), "white_slight"),  # Black's view
    (chess.engine.PovScore(chess.engine.Cp(300), chess.WHITE), "white_winning"),
    (chess.engine.PovScore(chess.engine.Cp(900), chess.BLACK), "black_crushing"),
    (chess.engine.PovScore(chess.engine.Mate(3), chess.WHITE), "white_crushing"),
    (chess.engine.PovScore(chess.engine.Mate(-2), chess.WHITE), "black_crushing"),
])
def test_buckets_are_from_whites_side(score, bucket):
    assert bucket_of(score) == bucket


def test_quotas_add_up_and_follow_the_shares():
    quotas = stratum_quotas(2000)
    assert sum(quotas.values()) == 2000 and set(quotas) == {(p, b) for p in PHASES for b in BUCKETS}
    by_phase = Counter()
    for (phase, _), count in quotas.items():
        by_phase[phase] += count
    # each of the 28 strata is rounded on its own, so a phase may be one position off its exact share
    for phase, share in {"opening": 500, "middlegame": 800, "endgame": 500, "late_endgame": 200}.items():
        assert abs(by_phase[phase] - share) <= 1
    equal = sum(count for (_, bucket), count in quotas.items() if bucket == "equal")
    assert equal == pytest.approx(2000 * 40 / 88, abs=2)
    assert largest_remainder({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}, 10) == {"a": 4, "b": 3, "c": 3}


def test_filler_respects_quotas_puzzle_caps_and_duplicates_and_splits_by_stratum():
    quotas = {("opening", "equal"): 10, ("endgame", "white_crushing"): 2}
    filler = StrataFiller(quotas, puzzle_share=0.5)
    start = chess.Board()
    fens = []
    for move in list(start.legal_moves)[:12]:
        start.push(move)
        fens.append(start.fen())
        start.pop()
    for index, fen in enumerate(fens):
        filler.offer((fen, "opening", "equal", 0, f"gnuchess-book+self-play:game-{index}"))
    assert not filler.offer((fens[0], "opening", "equal", 0, "duplicate"))
    assert filler.offer(("8/8/8/8/8/5k2/8/R3K3 w - - 0 1", "endgame", "white_crushing", 900, "lichess-puzzle:a"))
    assert not filler.offer(("8/8/8/8/8/4k3/8/R3K3 w - - 0 1", "endgame", "white_crushing", 900, "lichess-puzzle:b"))
    assert filler.missing() == {("endgame", "white_crushing"): 1}
    filler.offer(("8/8/8/8/8/4k3/8/R3K3 w - - 0 1", "endgame", "white_crushing", 900, "self-play"))
    positions = split_and_number(filler, seed=1)
    assert len(positions) == 12 and [p.id for p in positions] == [f"pos-{i:04d}" for i in range(12)]
    assert Counter(p.split for p in positions) == {"train": 1, "test": 11}
    assert split_and_number(filler, seed=1) == positions


def test_committed_positions_fill_every_stratum_and_split_10_90():
    positions = load_positions()
    quotas = stratum_quotas(2000)
    assert len(positions) == 2000 and len({p.id for p in positions}) == 2000
    assert Counter((p.phase, p.bucket) for p in positions) == {k: v for k, v in quotas.items() if v}
    assert Counter(p.split for p in positions) == {"train": 200, "test": 1800}
    train_phases = Counter(p.phase for p in positions if p.split == "train")
    for phase, share in {"opening": 50, "middlegame": 80, "endgame": 50, "late_endgame": 20}.items():
        assert abs(train_phases[phase] - share) <= 2
    for position in positions:
        board = position.board()
        assert board.is_valid() and not board.is_game_over(claim_draw=True)
        assert phase_of(board) == position.phase
    sources = Counter(p.source.split(":")[0] for p in positions)
    assert set(sources) == {"lichess-puzzle", "gnuchess-book+self-play"}
    assert len({chess.Board(p.fen).epd() for p in positions}) == 2000


def test_a_broken_positions_file_is_a_user_error(tmp_path):
    path = tmp_path / "positions.jsonl"
    path.write_text('{"id": "x", "fen": "not a fen", "phase": "opening", "bucket": "equal", "white_cp": 0, '
                    '"source": "s", "split": "test"}\n')
    with pytest.raises(DataError, match="not a valid position record"):
        load_positions(path)
    with pytest.raises(DataError, match="no chess positions"):
        load_positions(tmp_path / "missing.jsonl")
