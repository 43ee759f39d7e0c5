"""The embedded model servers running on this machine, so that a second one is not started beside the first.

Two embedded servers on the same cores both slow to a crawl (a 3-test optimize took 15 minutes beside
another embedded run), where one server with two slots serves both commands. Every embedded server
records itself here while it runs (``servers/PID.json`` in the otbench cache, readable by its user
only): its address, slots and threads, and the key it answers. Before a server loads,
:func:`crowding_warning` names one already running whose threads and the new one's together exceed
the cores, with the fix: ``--api-base`` to the running one. A command that names a recorded server
with ``--api-base`` and gives no key of its own is given that server's key (:func:`key_for`): the same
user could read it from the server's environment anyway.

Records of processes that are gone (killed before they could clean up) are dropped whenever the
records are read; a process is known by its pid and its start time, so a reused pid is not taken for
the server.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from otbench.core.parallel import usable_cores
from otbench.paths import cache_root


@dataclass(frozen=True)
class RunningServer:
    """One embedded server, as it records itself."""

    pid: int
    """The server's process."""
    started: str
    """The process's start time as the system counts it (a reused pid has another)."""
    url: str
    """Where it answers: ``http://HOST:PORT``."""
    slots: int
    """Requests it answers at a time."""
    threads: int
    """CPU threads it computes with."""
    model: str
    """The GGUF file it serves, by name."""
    shared: bool
    """Started by ``otbench serve`` for other commands; else a command's own, which stops with that command."""
    api_key: str
    """The key it answers."""


def registry_dir() -> Path:
    return cache_root() / "servers"


def start_time(pid: int) -> str | None:
    """When process ``pid`` started (field 22 of ``/proc/PID/stat``), or None when there is no such process.

    Without ``/proc`` a living pid gives ``""``: it is then known by its pid alone.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return ""
    return stat.rsplit(")", 1)[1].split()[19]  # the fields after the command's name start at field 3


def record(server: RunningServer) -> None:
    """Add ``server`` to the record (written whole, readable by this user only)."""
    directory = registry_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = directory / f".{server.pid}.json.partial"
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(asdict(server), handle)
    os.replace(partial, directory / f"{server.pid}.json")


def forget(pid: int) -> None:
    (registry_dir() / f"{pid}.json").unlink(missing_ok=True)


def running_servers() -> list[RunningServer]:
    """The recorded servers still running, shared ones first; records of gone or unreadable ones are removed."""
    found = []
    directory = registry_dir()
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            server = RunningServer(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            path.unlink(missing_ok=True)
            continue
        if start_time(server.pid) != server.started:
            path.unlink(missing_ok=True)
            continue
        found.append(server)
    return sorted(found, key=lambda server: (not server.shared, server.pid))


def crowding_warning(threads: int) -> str | None:
    """One line for a server about to load with ``threads`` threads when the servers already running here use
    the cores it would need: which one runs, and how to use it instead. None when the cores suffice."""
    servers = running_servers()
    cores = usable_cores()
    if not servers or sum(server.threads for server in servers) + threads <= cores:
        return None
    best = servers[0]
    where = (f"{best.url}, {best.slots} slot{'s' if best.slots != 1 else ''}, {best.threads} thread"
             f"{'s' if best.threads != 1 else ''}, pid {best.pid}")
    slowed = f"a second one on the same {cores} core{'s' if cores != 1 else ''} would slow both to a crawl"
    if best.shared:
        return f"the embedded model already runs on this machine ({where}); {slowed}: pass --api-base {best.url} instead"
    return (f"another command's embedded model runs on this machine ({where}); {slowed}: pass --api-base {best.url} "
            "to use it while that command runs, or serve one for all (python -m otbench.serve --slots 2)")


def key_for(url: str) -> str | None:
    """The key of the recorded server answering at ``url`` (a base URL, with or without ``/v1``), if any."""
    wanted = url.rstrip("/").removesuffix("/v1")
    for server in running_servers():
        if server.url.rstrip("/") == wanted:
            return server.api_key
    return None
