"""The real Stockfish: finding it, deterministic tools across processes, processes always closed."""

import os
import subprocess
import sys

import chess
import pytest

from otbench.envs.chess import engine as engine_module
from otbench.envs.chess.engine import Engine, EnginePool, find_stockfish, seeded_random_move
from otbench.envs.chess.players import SPECIALIST_DEPTH
from otbench.envs.chess.settings import SETTINGS
from otbench.envs.chess.tools import chess_tools
from otbench.errors import SetupError

FENS = (
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",           # opening
    "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - 0 10",           # middlegame
    "8/5pk1/6p1/3R4/5P2/6K1/r5P1/8 b - - 0 40",                                  # late endgame
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _all_moves() -> dict[str, str]:
    with Engine(find_stockfish()) as engine:
        return {f"{setting}/{tool.name}/{fen}": tool.player.choose(chess.Board(fen), engine).uci()
                for setting in SETTINGS for tool in chess_tools(setting) for fen in FENS}


def test_every_tool_gives_the_same_move_in_another_process():
    script = ("import json; from tests.test_chess_engine import _all_moves; print(json.dumps(_all_moves()))")
    here = _all_moves()
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           cwd=os.path.dirname(os.path.dirname(__file__)), env={**os.environ, "PYTHONHASHSEED": "123"})
    assert __import__("json").loads(other.stdout) == here


def test_phase_specialists_search_in_their_phase_and_play_seeded_random_moves_elsewhere():
    opening = chess.Board(FENS[0])
    specialists = {tool.player.specialty: tool.player for tool in chess_tools("phase")}
    with Engine(find_stockfish()) as engine:
        assert specialists["opening"].choose(opening, engine) == engine.best_move(opening, SPECIALIST_DEPTH)
        for phase in ("middlegame", "endgame", "late_endgame"):
            assert specialists[phase].choose(opening, engine) == seeded_random_move(specialists[phase].label, opening)
    moves = {seeded_random_move(f"salt-{i}", opening) for i in range(40)}
    assert len(moves) > 5 and moves <= set(opening.legal_moves)


def test_stockfish_is_found_from_the_variable_and_a_bad_one_is_a_user_error(monkeypatch, tmp_path):
    real = find_stockfish()
    monkeypatch.setenv("OTBENCH_STOCKFISH", real)
    assert find_stockfish() == real
    monkeypatch.setenv("OTBENCH_STOCKFISH", str(tmp_path / "nope"))
    with pytest.raises(SetupError, match="OTBENCH_STOCKFISH names"):
        find_stockfish()


def test_missing_stockfish_is_a_one_line_user_error(monkeypatch, tmp_path):
    monkeypatch.delenv("OTBENCH_STOCKFISH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(engine_module, "DEBIAN_STOCKFISH", tmp_path / "stockfish")
    with pytest.raises(SetupError, match="Stockfish not found") as caught:
        find_stockfish()
    assert "\n" not in str(caught.value)


def test_engine_processes_are_closed_after_an_error():
    pool = EnginePool(find_stockfish(), size=2)
    with pytest.raises(RuntimeError, match="boom"), pool, pool.engine() as first, pool.engine() as second:
        first.best_move(chess.Board(), 2)
        second.best_move(chess.Board(), 2)
        pids = pool.pids()
        raise RuntimeError("boom")
    assert len(pids) == 2 and not any(_alive(pid) for pid in pids)
    with pytest.raises(RuntimeError, match="closed"), pool.engine():
        pass


def test_an_engine_that_fails_to_start_is_a_user_error(tmp_path):
    fake = tmp_path / "fake-engine"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(SetupError, match="could not start Stockfish"):
        Engine(str(fake))
