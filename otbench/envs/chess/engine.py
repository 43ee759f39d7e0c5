"""Stockfish, driven so that the same position always gets the same answer.

Scores and tool behaviour must be reproducible across runs and processes, so every search runs
on one thread with a fixed hash size, a depth limit (never a clock limit), and a cleared hash
(a fresh ``game`` identifier makes python-chess send ``ucinewgame``); without the clearing,
leftover hash entries change 12-28% of moves. Stockfish's own ``Skill Level`` randomness is
clock-seeded, so weaker play is made here instead, with random choices seeded from the
position through SHA-256 (Python's ``hash()`` differs between processes).

Engine processes are always closed: :class:`Engine` and :class:`EnginePool` are context
managers, and a failure while starting one closes what was already started. Being deterministic,
every search result can be reused: engines share an :class:`~otbench.envs.chess.engine_cache.EngineCache`.
"""

from __future__ import annotations

import hashlib
import os
import queue
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

import chess
import chess.engine

from otbench.envs.chess.engine_cache import EngineCache, score_from_json, score_to_json
from otbench.errors import SetupError

STOCKFISH_VARIABLE = "OTBENCH_STOCKFISH"
DEBIAN_STOCKFISH = Path("/usr/games/stockfish")  # Debian installs it off PATH
HASH_MB = 16


def find_stockfish(explicit: str | None = None) -> str:
    """The Stockfish binary: ``explicit``, else ``$OTBENCH_STOCKFISH``, else PATH, else Debian's location."""
    for candidate, origin in ((explicit, "--stockfish"), (os.environ.get(STOCKFISH_VARIABLE), STOCKFISH_VARIABLE)):
        if candidate:
            if not (Path(candidate).is_file() and os.access(candidate, os.X_OK)):
                raise SetupError(f"{origin} names {candidate!r}, which is not an executable file")
            return candidate
    found = shutil.which("stockfish")
    if found:
        return found
    if DEBIAN_STOCKFISH.is_file():
        return str(DEBIAN_STOCKFISH)
    raise SetupError(f"Stockfish not found: install it (apt-get install stockfish) or set {STOCKFISH_VARIABLE}")


def position_key(board: chess.Board) -> str:
    """The position without move counters: what seeds and caches key on (counters never change a move)."""
    return board.epd()


def seeded_fraction(salt: str, board: chess.Board) -> float:
    """A number in [0, 1) fixed by ``salt`` and the position, identical in every process."""
    digest = hashlib.sha256(f"{salt}|{position_key(board)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def seeded_random_move(salt: str, board: chess.Board) -> chess.Move:
    """A legal move picked uniformly but reproducibly (moves in UCI order, index from SHA-256)."""
    moves = sorted(board.legal_moves, key=lambda move: move.uci())
    if not moves:
        raise ValueError("no legal move: the game is over")
    return moves[int(seeded_fraction(salt, board) * len(moves))]


def engine_identity(path: str) -> str:
    """What makes two engines answer alike: the binary (path, size, modification time) and the settings."""
    stat = os.stat(path)
    return f"{Path(path).resolve()}:{stat.st_size}:{stat.st_mtime_ns}:threads=1:hash={HASH_MB}"


class Engine:
    """One Stockfish process configured for reproducible searches; results are reused through ``cache``."""

    def __init__(self, path: str, cache: EngineCache | None = None) -> None:
        self.cache = cache if cache is not None else EngineCache(engine_identity(path))
        try:
            self._engine = chess.engine.SimpleEngine.popen_uci(path)
        except (OSError, chess.engine.EngineError) as exc:
            raise SetupError(f"could not start Stockfish at {path}: {exc}") from exc
        try:
            self._engine.configure({"Threads": 1, "Hash": HASH_MB})
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int:
        return self._engine.transport.get_pid()

    def best_move(self, board: chess.Board, depth: int) -> chess.Move:
        return self.cache.through(self.cache.key("play", depth, board), lambda: self._play(board, depth),
                                  chess.Move.uci, chess.Move.from_uci)

    def _play(self, board: chess.Board, depth: int) -> chess.Move:
        result = self._engine.play(board, chess.engine.Limit(depth=depth), game=object())
        if result.move is None:
            raise ValueError(f"Stockfish returned no move for {board.fen()}")
        return result.move

    def evaluate(self, board: chess.Board, depth: int) -> chess.engine.PovScore:
        """The position's score (a game-over position is scored by its result, no search)."""
        if board.is_game_over(claim_draw=False):
            return _result_score(board)
        return self.cache.through(
            self.cache.key("analyse", depth, board),
            lambda: self._engine.analyse(board, chess.engine.Limit(depth=depth), game=object())["score"],
            score_to_json, score_from_json)

    def evaluate_moves(self, board: chess.Board, moves: list[chess.Move], depth: int) -> dict[chess.Move, chess.engine.PovScore]:
        """Scores of the positions after each of ``moves``, from one multi-PV search restricted to them."""
        return self.cache.through(
            self.cache.key("multipv", depth, board, ",".join(move.uci() for move in moves)),
            lambda: self._search_moves(board, moves, depth),
            lambda scores: {move.uci(): score_to_json(score) for move, score in scores.items()},
            lambda known: {chess.Move.from_uci(uci): score_from_json(score) for uci, score in known.items()})

    def _search_moves(self, board: chess.Board, moves: list[chess.Move],
                      depth: int) -> dict[chess.Move, chess.engine.PovScore]:
        infos = self._engine.analyse(board, chess.engine.Limit(depth=depth), multipv=len(moves), root_moves=moves,
                                     game=object())
        scores = {info["pv"][0]: info["score"] for info in infos if info.get("pv") and "score" in info}
        for move in moves:  # a move the multi-PV search did not report is searched on its own
            if move not in scores:
                board.push(move)
                try:
                    scores[move] = self.evaluate(board, depth - 1 if depth > 1 else 1)
                finally:
                    board.pop()
        return scores

    def close(self) -> None:
        try:
            self._engine.quit()  # a polite exit first; an engine that already died cannot answer
        except (chess.engine.EngineError, TimeoutError, RuntimeError):
            pass
        finally:
            self._engine.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _result_score(board: chess.Board) -> chess.engine.PovScore:
    outcome = board.outcome(claim_draw=False)
    if outcome is None or outcome.winner is None:
        return chess.engine.PovScore(chess.engine.Cp(0), board.turn)
    return chess.engine.PovScore(chess.engine.Mate(0), board.turn)  # the side to move is mated


class EnginePool:
    """Up to ``size`` engines shared by concurrent rollouts; each search borrows one for its duration.

    Engines start on first use, so building an environment costs nothing until it plays. They
    share one result cache, kept in ``cache_path`` across runs when given (in memory otherwise).
    """

    def __init__(self, path: str, size: int = 1, cache_path: Path | None = None) -> None:
        self.path = path
        self.size = max(1, size)
        self.cache = EngineCache(engine_identity(path), cache_path)
        self._idle: queue.LifoQueue[Engine] = queue.LifoQueue()
        self._started: list[Engine] = []
        self._lock = threading.Lock()
        self._closed = False

    @contextmanager
    def engine(self) -> Iterator[Engine]:
        engine = self._borrow()
        try:
            yield engine
        finally:
            self._idle.put(engine)

    def _borrow(self) -> Engine:
        with self._lock:
            if self._closed:
                raise RuntimeError("the engine pool is closed")
            try:
                return self._idle.get_nowait()
            except queue.Empty:
                pass
            if len(self._started) < self.size:
                engine = Engine(self.path, self.cache)
                self._started.append(engine)
                return engine
        return self._idle.get()

    def pids(self) -> list[int]:
        return [engine.pid for engine in self._started]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            started, self._started = self._started, []
            self._idle = queue.LifoQueue()
        for engine in started:
            engine.close()
        self.cache.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
