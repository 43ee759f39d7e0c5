"""Where runs are stored, found before anything opens the store: the local sqlite file a command's options name,
the tracking URI in use, and whether a tracking server or database answers at all.

A tracking server or database that does not answer is refused before any work, within :data:`PROBE_SECONDS`
(:func:`check_reachable`): MLflow's own client retries for minutes, then prints a traceback. Nothing here imports
MLflow, so a command's output checks (:mod:`otbench.outputs`) and any layer can ask where the store is.
"""

from __future__ import annotations

import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from otbench.errors import ConfigError, DataError, SetupError
from otbench.paths import mlruns_dir

SQLITE_PREFIX = "sqlite:///"
PROBE_SECONDS = 5.0
"""How long a tracking server or database may take to answer the probe made before any work."""
_DATABASE_PORTS = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///PATH`` URI; None for any other URI."""
    if uri.startswith(SQLITE_PREFIX) and uri != f"{SQLITE_PREFIX}:memory:":
        return Path(uri.removeprefix(SQLITE_PREFIX).split("?", 1)[0])
    return None


def tracking_uri_in_use(tracking_uri: str | None, directory: Path | None) -> str | None:
    """The URI :func:`configure` points MLflow at for these arguments; None for the local store (``directory``,
    else ``$OTBENCH_MLRUNS`` or ``./mlruns``). A directory given wins over ``MLFLOW_TRACKING_URI``, which
    MLflow itself sets to the last URI in use."""
    return tracking_uri or (None if directory else os.environ.get("MLFLOW_TRACKING_URI")) or None


def require_store(tracking_uri: str | None, directory: Path | None, asking: str) -> None:
    """Refuse, without creating it, a local store that does not exist yet, where ``asking`` (``--resume ID``,
    ``--docs runs:/ID``) names something only an existing store could hold."""
    database = store_database(tracking_uri, directory)
    if database is not None and not database.exists():
        raise DataError(f"{asking}: there is no MLflow store at {database.parent} yet (give --mlruns or --tracking-uri "
                        "where the run is)")


def store_database(tracking_uri: str | None, directory: Path | None) -> Path | None:
    """The sqlite file :func:`configure` opens for these arguments; None when it logs to a server."""
    uri = tracking_uri_in_use(tracking_uri, directory)
    if uri is None:
        return (directory or mlruns_dir()).absolute() / "mlflow.db"
    return sqlite_path(uri)


def check_reachable(uri: str, label: str, *, timeout: float = PROBE_SECONDS) -> None:
    """Refuse, on one line, a tracking or database URI that cannot work: an MLflow server (http, https)
    that gives no HTTP answer, a database server (postgresql, mysql, mssql) that accepts no connection, or
    a URI of no kind MLflow and optuna take. A sqlite file is checked as an output
    (:mod:`otbench.outputs`); what answers is not judged further (MLflow reports its own errors)."""
    parsed = urllib.parse.urlparse(uri)
    scheme = parsed.scheme.split("+", 1)[0]
    try:
        if scheme in ("http", "https"):
            if not parsed.hostname:
                raise ConfigError(f"{label} {uri}: no host in the URL")
            try:
                with urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=timeout):
                    pass
            except urllib.error.HTTPError:
                pass  # an HTTP answer, even an error: something serves there, MLflow speaks for itself
            return
        if scheme in _DATABASE_PORTS:
            if parsed.hostname:  # no host: a local socket, which the driver finds
                socket.create_connection((parsed.hostname, parsed.port or _DATABASE_PORTS[scheme]), timeout).close()
            return
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise SetupError(f"{label} {uri}: nothing answers there within {timeout:.0f} s ({reason})") from None
    if scheme not in ("sqlite", "databricks", "file"):
        raise ConfigError(f"{label} {uri}: expected an MLflow server (http://HOST:PORT), sqlite:///PATH or a database "
                        "URL (postgresql://...); for a local store directory use --mlruns DIR")
