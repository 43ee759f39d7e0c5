"""Engine results kept for reuse: the same search on the same position always gives the same answer.

Every search here is deterministic (see :mod:`otbench.envs.chess.engine`), so a result can be kept
for the life of the environment and, in a small SQLite file, across runs: evaluations of the same
task sample, comparison rows that start from the same positions, and a resumed run all repeat
searches the engine already made. A key holds everything that can change an answer: the engine
binary and its settings, the kind of search and its depth, the position with its move counters,
and the moves played since the last irreversible one (the engine sees them to detect
repetitions). Values are JSON, never pickles: a cache file is data. A file that cannot be read
is set aside and started again, so a damaged cache costs time, never a run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import chess
import chess.engine

_log = logging.getLogger(__name__)
Result = TypeVar("Result")


def search_key(board: chess.Board) -> str:
    """The position and the moves since its last irreversible move: all a search result depends on."""
    probe, tail = board.copy(), []
    while probe.move_stack:
        move = probe.pop()
        if probe.is_irreversible(move):
            break
        tail.append(move.uci())
    return f"{board.fen()}|{' '.join(reversed(tail))}"


def score_to_json(score: chess.engine.PovScore) -> dict[str, Any]:
    relative = score.relative
    if relative is chess.engine.MateGiven:
        return {"turn": score.turn, "mate_given": True}
    mate = relative.mate()
    return {"turn": score.turn, "mate": mate} if mate is not None else {"turn": score.turn, "cp": relative.score()}


def score_from_json(data: dict[str, Any]) -> chess.engine.PovScore:
    if data.get("mate_given"):
        relative: chess.engine.Score = chess.engine.MateGiven
    elif "mate" in data:
        relative = chess.engine.Mate(int(data["mate"]))
    else:
        relative = chess.engine.Cp(int(data["cp"]))
    return chess.engine.PovScore(relative, bool(data["turn"]))


class EngineCache:
    """Thread-safe map from a search to its JSON result, in memory and optionally in ``path``.

    ``identity`` names the engine binary and settings; it is part of every key, so one file can
    serve several engines without mixing their answers.
    """

    def __init__(self, identity: str, path: Path | None = None) -> None:
        self.identity = identity
        self.path = path
        self._memory: dict[str, str] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = self._open(path) if path is not None else None
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=OFF")  # a cache: a lost write is only a search done again
        db.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("SELECT count(*) FROM results").fetchone()  # reads the file: damage shows here
        return db

    def _open(self, path: Path) -> sqlite3.Connection | None:
        try:
            return self._connect(path)
        except (sqlite3.DatabaseError, OSError) as first:
            _log.warning("chess engine cache %s is unreadable (%s); starting a new one", path, first)
            try:
                path.replace(path.with_suffix(".damaged"))
                return self._connect(path)
            except (sqlite3.DatabaseError, OSError) as second:
                _log.warning("chess engine cache disabled on disk: %s", second)
                return None

    def key(self, kind: str, depth: int, board: chess.Board, extra: str = "") -> str:
        text = f"{self.identity}|{kind}|{depth}|{search_key(board)}|{extra}"
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> Any | None:
        with self._lock:
            text = self._memory.get(key)
            if text is None and self._db is not None:
                try:
                    row = self._db.execute("SELECT value FROM results WHERE key = ?", (key,)).fetchone()
                except sqlite3.DatabaseError as exc:
                    _log.warning("chess engine cache read failed (%s); searching instead", exc)
                    row = None
                if row is not None:
                    text = self._memory[key] = row[0]
            if text is None:
                self.misses += 1
                return None
            self.hits += 1
        try:
            return json.loads(text)
        except ValueError:
            return None

    def through(self, key: str, search: Callable[[], Result], encode: Callable[[Result], Any],
                decode: Callable[[Any], Result]) -> Result:
        """The result stored under ``key``, else ``search()``'s, stored. A value that does not decode is a miss."""
        known = self.get(key)
        if known is not None:
            try:
                return decode(known)
            except (ValueError, KeyError, TypeError, AttributeError):
                _log.warning("chess engine cache entry %s is unreadable; searching again", key[:12])
        result = search()
        self.put(key, encode(result))
        return result

    def put(self, key: str, value: Any) -> None:
        text = json.dumps(value, separators=(",", ":"))
        with self._lock:
            self._memory[key] = text
            if self._db is not None:
                try:
                    self._db.execute("INSERT OR REPLACE INTO results VALUES (?, ?)", (key, text))
                except sqlite3.DatabaseError as exc:
                    _log.warning("chess engine cache write failed (%s); keeping results in memory only", exc)
                    self._db = None

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
