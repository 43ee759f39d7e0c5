"""Claims on the cells of a grid, so that workers on one or several machines never run the same cell at once.

A claim is a lock the operating system or the database holds for the worker and drops when the worker
dies, so a cell whose worker died is free for the next worker that asks, with nothing to clean up:

- :class:`PostgresClaims`: a PostgreSQL advisory lock per cell, held by one connection of the worker
  for as long as the cell runs, on the database the sweeps already share (``--storage``). A worker
  whose process ends drops its connection and its locks at once; one whose machine vanishes is
  noticed by the server's TCP keepalives (set per connection: about a minute).
- :class:`FileClaims`: an exclusive operating-system lock (:class:`filelock.FileLock`) on a file per cell next
  to a local store: workers on one machine.

Nothing is scheduled here: each worker walks the grid in order and runs the first cell it can claim.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from filelock import FileLock, Timeout

from otbench.errors import SetupError

KEEPALIVE = {"tcp_keepalives_idle": 30, "tcp_keepalives_interval": 10, "tcp_keepalives_count": 3}
"""The server's keepalives on a claim's connection: a worker machine that vanished loses its claims in about a
minute instead of the system default of hours."""


class Claims(Protocol):
    """Where a worker claims cells."""

    def claim(self, key: str) -> Any:
        """A context manager yielding True when this worker holds ``key`` for the block, False when another does."""


class FileClaims:
    """Claims as exclusive file locks in ``directory`` (one machine; the kernel drops them with the process)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @contextmanager
    def claim(self, key: str) -> Iterator[bool]:
        self.directory.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.directory / f"{key}.lock")
        try:
            lock.acquire(blocking=False)
        except Timeout:
            yield False
            return
        try:
            yield True
        finally:
            lock.release()


def lock_number(key: str) -> int:
    """A cell key as the signed 64-bit number PostgreSQL's advisory locks take."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


class PostgresClaims:
    """Claims as PostgreSQL advisory locks (``url``: the database sweep workers share, ``postgresql://...``)."""

    def __init__(self, url: str) -> None:
        scheme, _, rest = url.partition("://")
        self.url = f"{scheme.split('+', 1)[0]}://{rest}"  # SQLAlchemy's driver suffix is not libpq's
        with self._connection():  # refused now, on one line, rather than at the first cell
            pass

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        import psycopg

        try:
            connection = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as error:
            raise SetupError(f"--storage {self.url}: {' '.join(str(error).split())[:300]}") from None
        try:
            for name, value in KEEPALIVE.items():
                connection.execute(f"SET {name} = {int(value)}")
            yield connection
        finally:
            connection.close()

    @contextmanager
    def claim(self, key: str) -> Iterator[bool]:
        number = lock_number(key)
        with self._connection() as connection:
            held = bool(connection.execute("SELECT pg_try_advisory_lock(%s)", (number,)).fetchone()[0])
            try:
                yield held
            finally:
                if held and not connection.closed:
                    connection.execute("SELECT pg_advisory_unlock(%s)", (number,))


def claims_for(storage: str | None, store_directory: Path) -> Claims:
    """PostgreSQL claims when a ``storage`` database is given, else file claims beside the local store."""
    if storage:
        if not storage.split("://", 1)[0].split("+", 1)[0] in ("postgresql", "postgres"):
            raise SetupError(f"--storage {storage}: claims need PostgreSQL (postgresql://USER@HOST/DB)")
        return PostgresClaims(storage)
    return FileClaims(store_directory / "claims")
