"""The MLflow store a command logs to, opened: a sqlite store under ``./mlruns`` unless told otherwise.

MLflow's file store refuses to start without a flag and sqlite is MLflow's default, so the
store is ``mlruns/mlflow.db`` with artefacts in ``mlruns/artifacts``. ``--tracking-uri`` (or
``MLFLOW_TRACKING_URI``) points at any other MLflow server instead.

A new sqlite store is created (its tables migrated) by the first process that opens it; several
commands started together on a new store each began that migration and all but one failed
(``table _alembic_tmp_params already exists``). Opening a sqlite store therefore holds an
exclusive file lock next to its database (:func:`store_lock`) until the store and the experiment
exist: the first process creates them, the others wait for it, then find them made.

Where the store is, and whether a server answers, is :mod:`otbench.store`'s to say. MLflow is imported when a store
is opened, not with this module, so any layer may open the store.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from filelock import FileLock

import otbench  # noqa: F401  (offline-safe environment before mlflow loads)
from otbench.paths import mlruns_dir
from otbench.store import SQLITE_PREFIX, require_store, sqlite_path, store_database, tracking_uri_in_use

EXPERIMENT = "otbench"


def store_uris(directory: Path | None = None) -> tuple[str, str]:
    """``(backend_store_uri, artifact_root)`` of the local store."""
    root = (directory or mlruns_dir()).resolve()
    root.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{root / 'mlflow.db'}", str(root / "artifacts")


@contextmanager
def store_lock(database: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``database``'s lock file (``mlflow.db.lock``) for the block.

    An operating-system lock (:class:`filelock.FileLock`: ``flock`` on POSIX, ``LockFileEx`` on Windows): every
    otbench process that opens the store takes it, and the kernel releases it when the holder dies, so a killed
    command never leaves the store locked.
    """
    database.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(database.with_name(f"{database.name}.lock")):
        yield


def _first_use_lock(uri: str) -> AbstractContextManager[None]:
    """The lock that serialises the creation of a sqlite store; none for a server or another database."""
    database = sqlite_path(uri)
    return store_lock(database) if database is not None else nullcontext()


def configure(tracking_uri: str | None = None, *, directory: Path | None = None, experiment: str = EXPERIMENT,
              existing: str | None = None) -> str:
    """Point MLflow at the chosen store and experiment; returns the tracking URI in use.

    The store and the experiment are created here, under :func:`store_lock` for a sqlite store, so
    commands started at once on a new store do not race to create its tables; with ``existing``, what only an
    existing store could hold (``--resume ID``), a local store that does not exist yet is refused instead
    (:func:`otbench.store.require_store`).
    """
    if existing is not None:
        require_store(tracking_uri, directory, existing)
    import mlflow

    for noisy in ("mlflow", "alembic"):  # schema-migration chatter would break one-line errors
        logging.getLogger(noisy).setLevel(logging.WARNING)
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # a bar per artefact read is noise
    uri = tracking_uri_in_use(tracking_uri, directory)
    artifact_root = None
    if not uri:
        uri, artifact_root = store_uris(directory)
    database = sqlite_path(uri)
    if database is not None:
        check_store_file(database)
    mlflow.set_tracking_uri(uri)
    try:
        with _first_use_lock(uri):
            if database is not None and (not database.exists() or database.stat().st_size == 0):
                create_sqlite_store(database, artifact_root)
            if mlflow.get_experiment_by_name(experiment) is None:  # the first call creates (migrates) a new store
                location = f"{artifact_root}/{experiment}" if artifact_root else None
                try:
                    mlflow.create_experiment(experiment, artifact_location=location)
                except mlflow.exceptions.MlflowException:
                    if mlflow.get_experiment_by_name(experiment) is None:  # else another worker created it just now
                        raise
            mlflow.set_experiment(experiment)
    except mlflow.exceptions.MlflowException as error:  # a store MLflow cannot use: its reason, on one line
        from otbench.errors import SetupError

        raise SetupError(f"MLflow store {uri}: {' '.join(str(error.message).split())[:300]}") from None
    except Exception as error:  # noqa: BLE001 - the database driver's own errors (a damaged file), named on one line
        from otbench.errors import SetupError

        reason = " ".join(str(error).split("[SQL:")[0].split())[:160]
        raise SetupError(f"MLflow store {database or uri} cannot be read: {reason}; move it aside "
                         f"({_aside(database)}) to start a new one") from None
    return uri


def open_existing(tracking_uri: str | None = None, *, directory: Path | None = None) -> bool:
    """Point MLflow at the chosen store only if it already holds otbench's runs, creating and writing nothing (a
    status that "runs nothing" must not make a store either); returns whether there is one to read."""
    import mlflow

    for noisy in ("mlflow", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    database = store_database(tracking_uri, directory)
    if database is not None:
        if not database.is_file() or database.stat().st_size == 0:
            return False
        check_store_file(database)
    uri = tracking_uri_in_use(tracking_uri, directory) or f"{SQLITE_PREFIX}{database}"
    mlflow.set_tracking_uri(uri)
    try:
        return mlflow.get_experiment_by_name(EXPERIMENT) is not None
    except mlflow.exceptions.MlflowException as error:
        from otbench.errors import SetupError

        raise SetupError(f"MLflow store {uri}: {' '.join(str(error.message).split())[:300]}") from None


def create_sqlite_store(database: Path, artifact_root: str | None) -> None:
    """Create a new sqlite store whole or not at all: MLflow's migrations (about 9 s of them) run on a file beside
    ``database``, which is renamed into place once they are done. A store created where it is used and stopped half
    way (Ctrl-C during the migrations) kept some of its tables and was refused by every command after ("table ...
    already exists"); stopped now, it leaves no store, and the next command creates it again. Called under
    :func:`store_lock`, so a leftover file beside it is no other process's."""
    from mlflow.store.tracking import DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    building = database.with_name(f"{database.name}.new")
    for leftover in (building, building.with_name(f"{building.name}-journal")):
        leftover.unlink(missing_ok=True)
    uri = f"{SQLITE_PREFIX}{building}"
    try:
        SqlAlchemyStore(uri, artifact_root or DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH)
    finally:
        engine = SqlAlchemyStore._engine_map.pop(uri, None)
        if engine is not None:
            engine.dispose()
    os.replace(building, database)


SQLITE_HEADER = b"SQLite format 3\x00"


def _aside(database: Path | None) -> str:
    return f"mv {database} {database}.damaged" if database is not None else "point --mlruns at another folder"


def check_store_file(database: Path) -> None:
    """Refuse, on one line naming the file and the way out, a local store MLflow would fail on or silently replace:
    a file that is not an SQLite database, or an empty one beside artefacts (a new store would orphan them)."""
    from otbench.errors import SetupError

    if not database.exists():
        return
    if database.is_dir():
        raise SetupError(f"MLflow store {database}: a folder where the database file should be; move it aside")
    size = database.stat().st_size
    artefacts = database.parent / "artifacts"
    if size == 0:
        if artefacts.is_dir() and any(artefacts.iterdir()):
            raise SetupError(f"MLflow store {database} is empty while artefacts are kept beside it ({artefacts}): "
                             f"restore the database from a copy, or move the folder aside "
                             f"(mv {database.parent} {database.parent}.damaged) to start a new store")
        return
    with database.open("rb") as handle:
        if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise SetupError(f"MLflow store {database} is not an SQLite database (damaged?); move it aside "
                             f"({_aside(database)}) to start a new one")
