"""Where a command writes, checked before it does any work.

A store in a read-only directory, an ``--out`` that names a file where a directory is expected,
or a full disk used to surface after the data and the model had loaded, often minutes in, as a
traceback. Every command's output options are declared with :data:`OUTPUT_DIRECTORY`,
:data:`OUTPUT_FILE` or :data:`STORE_DIRECTORY` as their argparse ``type``, and the command calls
:func:`check_outputs` right after parsing: each place it will write (those options, the MLflow
store it will open, the otbench cache) is refused on one line when it has the wrong type, cannot
be written or has less than :data:`MIN_FREE_BYTES` free.

Writability is tried, not inferred from permission bits: a temporary file is created and removed
in the nearest directory that exists, which also catches read-only mounts (and grants what the
kernel grants, root included).
"""

from __future__ import annotations

import argparse
import errno
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from otbench.errors import ConfigError
from otbench.paths import cache_root
from otbench.store import SQLITE_PREFIX, check_reachable, store_database, tracking_uri_in_use

Kind = Literal["directory", "file"]

_MB = 1024 * 1024
MIN_FREE_MB = 64
MIN_FREE_BYTES = MIN_FREE_MB * _MB
"""Free space an output needs: room for a run's artefacts, checkpoints and learned docs."""


@dataclass(frozen=True)
class OutputType:
    """The argparse ``type`` of an option naming a place a command writes: its value becomes a
    :class:`~pathlib.Path` (``off``, a word that turns the output off, stays as written), and
    :func:`check_outputs` knows the option by this type.

    ``store``: the option is the MLflow store directory, whose default is the store the command
    would open (see :func:`otbench.store.store_database`). ``database``: the value is a database
    URL and stays text; a ``sqlite:///PATH`` one writes the file PATH.
    """

    kind: Kind
    off: str | None = None
    store: bool = False
    database: bool = False

    def __call__(self, text: str) -> Path | str:
        if self.database or (self.off is not None and text == self.off):
            return text
        if not text.strip():
            raise argparse.ArgumentTypeError("expected a path, got an empty one")
        return Path(text)


OUTPUT_DIRECTORY = OutputType("directory")
OUTPUT_FILE = OutputType("file")
STORE_DIRECTORY = OutputType("directory", store=True)
DATABASE_URL = OutputType("file", database=True)


def problem(path: Path, kind: Kind) -> str | None:
    """Why nothing can be written at ``path`` as a ``kind``, or None when it can."""
    try:
        if path.exists():
            if kind == "directory" and not path.is_dir():
                return "is a file, not a directory"
            if kind == "file" and path.is_dir():
                return "is a directory, not a file"
            if kind == "file" and not os.access(path, os.W_OK):
                return "cannot be written (permission denied)"
        directory = path if kind == "directory" and path.is_dir() else path.parent
        existing = _nearest_existing(directory)
        if not existing.is_dir():
            return f"{existing} is a file, not a directory"
        return _write_problem(existing) or _space_problem(existing)
    except OSError as error:
        return error.strerror or str(error)


def _nearest_existing(directory: Path) -> Path:
    """``directory`` itself when it exists, else its closest ancestor that does (what ``mkdir -p`` would start from)."""
    current = directory.absolute()
    while not current.exists() and current != current.parent:
        current = current.parent
    return current


def _write_problem(directory: Path) -> str | None:
    try:
        handle, name = tempfile.mkstemp(dir=directory, prefix=".otbench-write-check-")
    except OSError as error:
        if error.errno == errno.EROFS:
            return f"{directory} is on a read-only file system"
        if error.errno == errno.ENOSPC:
            return f"no space left on the file system of {directory}"
        return f"cannot write in {directory} ({error.strerror or error})"
    os.close(handle)
    os.unlink(name)
    return None


def _space_problem(directory: Path) -> str | None:
    stats = os.statvfs(directory)
    free = stats.f_bavail * stats.f_frsize
    if free < MIN_FREE_BYTES:
        return (f"only {free / _MB:.0f} MB free on the file system of {directory} "
                f"(at least {MIN_FREE_BYTES // _MB} MB needed)")
    return None


def refuse(label: str, path: Path, kind: Kind) -> None:
    """A :class:`~otbench.errors.ConfigError` naming ``label`` (an option, or what the place is) when ``path`` cannot take a ``kind``."""
    found = problem(path, kind)
    if found is not None:
        raise ConfigError(f"{label} {path}: {found}")


def check_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace, *, store: bool = True,
                  cache: bool = True) -> None:
    """Refuse, on one line, any place this command would write and cannot: every option typed with an
    :class:`OutputType`, the MLflow store it would open (unless ``store`` is False: the command will not
    open it; a tracking server or database must answer, see :func:`otbench.store.check_reachable`),
    and the otbench cache (``cache``)."""
    for action in _actions(parser, args):
        kind = action.type
        if not isinstance(kind, OutputType):
            continue
        value = getattr(args, action.dest, None)
        label = action.option_strings[-1] if action.option_strings else action.dest
        if kind.store:
            if not store:
                continue
            tracking_uri = getattr(args, "tracking_uri", None)
            uri = tracking_uri_in_use(tracking_uri, value)
            named = ("--tracking-uri" if tracking_uri else "$MLFLOW_TRACKING_URI" if uri
                     else label if value is not None else "the MLflow store")
            database = store_database(tracking_uri, value)
            if uri is not None and _in_memory(uri):
                raise ConfigError(f"{named} {uri}: a store in memory keeps nothing once the command ends; give a file "
                                  "(sqlite:///PATH) or --mlruns DIR")
            if database is not None:
                refuse(named, database.parent, "directory")
                if database.exists():
                    refuse(named, database, "file")
            elif uri is not None:
                check_reachable(uri, named)
        elif kind.database and isinstance(value, str):
            if value.startswith(SQLITE_PREFIX):
                refuse(label, Path(value.removeprefix(SQLITE_PREFIX).split("?", 1)[0]), "file")
            else:
                check_reachable(value, label)
        elif isinstance(value, Path):
            refuse(label, value, kind.kind)
    if cache:
        refuse("the otbench cache ($OTBENCH_CACHE)", cache_root(), "directory")


def _in_memory(uri: str) -> bool:
    """Whether an SQLAlchemy URI names a database in memory (``sqlite://``, ``sqlite:///:memory:``)."""
    scheme, _, rest = uri.partition("://")
    return scheme.split("+", 1)[0] == "sqlite" and rest.split("?", 1)[0] in ("", "/", "/:memory:")


def _actions(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[argparse.Action]:
    """The options of ``parser`` and of the sub-command ``args`` chose (``results load --mlruns DIR``): a verb's
    store is checked like any command's."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            found += _actions(chosen, args) if chosen is not None else []
        else:
            found.append(action)
    return found
