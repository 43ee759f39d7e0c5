"""The four third-party MCP servers otbench ships tasks for, each installed from PyPI in a virtual environment
of its own.

A server pins the ``mcp`` SDK it was written for (the sqlite server wants 1.x, otbench 2.x), so each lives in
``$OTBENCH_CACHE/mcp-servers/NAME`` and is reached over stdio, as a user runs it. :func:`install` makes the
environment once (``python -m otbench.prepare`` runs it; ``scripts/setup.sh`` runs that) through the machine's
own pip configuration, and does nothing when it is there with the same requirements.

- ``time`` (``mcp-server-time``): current time and conversions between IANA time zones, told the local zone is
  UTC; its tasks use zones without daylight saving time, so their answers hold on any date;
- ``sqlite`` (``mcp-server-sqlite``): SQL over a shop database (:func:`~.fixtures.build_shop`);
- ``git`` (``mcp-server-git``): a repository's history, branches and changes (:func:`~.fixtures.build_repository`);
- ``calculator`` (``mcp-calculate-server``): one tool that evaluates an arithmetic expression, advertised in Chinese
  with an example but no word of what it refuses, and answering an expression it cannot evaluate with an error
  message (``❌ ...``) rather than an MCP error, as many servers do.

Each has a task file (``data/NAME.jsonl``) whose answers come from its fixture, and gold docs
(``data/NAME.gold.json``) written from the server's source.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from otbench.envs.mcp import fixtures
from otbench.envs.mcp.launch import ServerLaunch
from otbench.errors import SetupError
from otbench.paths import cache_root

REQUIREMENTS_FILE = "otbench-requirements.txt"
"""Written into a server's environment once its requirements are installed: what :func:`install` compares."""


@dataclass(frozen=True)
class ShippedServer:
    """A third-party server: what to install, how to start it, and what it works on."""

    name: str
    requirements: tuple[str, ...]
    """pip requirements of its environment, pinned: the server's answers must not drift."""
    program: str
    """Its console script in the environment."""
    arguments: tuple[str, ...] = ()
    """Its arguments; ``{fixture}`` names the folder of its files."""
    fixture: Callable[[Path], None] | None = None
    """Builds the files it works on (None: it works on none)."""

    @property
    def environment(self) -> Path:
        return cache_root() / "mcp-servers" / self.name

    @property
    def tasks(self) -> Path:
        return fixtures.DATA / f"{self.name}.jsonl"

    @property
    def gold_docs(self) -> Path:
        return fixtures.DATA / f"{self.name}.gold.json"

    def installed(self) -> bool:
        """Whether its environment holds its requirements as pinned here."""
        marker = self.environment / REQUIREMENTS_FILE
        return marker.is_file() and marker.read_text() == "\n".join(self.requirements)

    def launch(self) -> ServerLaunch:
        """How to start it; refused on one line when it is not installed."""
        if not self.installed():
            raise SetupError(f"the {self.name} MCP server is not installed: run python -m otbench.prepare (or bash "
                             "scripts/setup.sh)")
        return ServerLaunch(command=(str(self.environment / "bin" / self.program), *self.arguments))


SERVERS = {server.name: server for server in (
    ShippedServer("time", ("mcp-server-time==2026.10.19",), "mcp-server-time", ("--local-timezone", "UTC")),
    ShippedServer("sqlite", ("mcp-server-sqlite==2025.4.25", "mcp[cli]<2"), "mcp-server-sqlite",
                  ("--db-path", "{fixture}/shop.db"), fixtures.build_shop),
    ShippedServer("git", ("mcp-server-git==2026.10.19",), "mcp-server-git",
                  ("--repository", f"{{fixture}}/{fixtures.REPOSITORY}"), fixtures.build_repository),
    ShippedServer("calculator", ("mcp-calculate-server==1.0.0", "mcp<2"), "mcp-calculate-server"),
)}


def install(server: ShippedServer) -> str:
    """Make ``server``'s environment unless it is there; returns what was done (``installed``, ``present``)."""
    if server.installed():
        return "present"
    folder = server.environment
    steps = ([sys.executable, "-m", "venv", "--clear", str(folder)],
             [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet", *server.requirements])
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise SetupError(f"installing the {server.name} MCP server failed ({' '.join(step[2:4])}): {last}")
    (folder / REQUIREMENTS_FILE).write_text("\n".join(server.requirements))
    return "installed"
