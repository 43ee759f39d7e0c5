"""Command-line options of an MCP server as an environment (see :mod:`otbench.envs.registry`); its settings are
how the server's tools are shown.

``--env mcp --mcp "COMMAND ARGS" --tasks FILE.jsonl`` learns on the task file's train tasks and scores on its test
tasks; ``--mcp-url URL`` reaches a server over streamable HTTP instead; ``--mcp-server NAME`` runs one of the
shipped third-party servers with its fixture, tasks and gold docs (each may still be given). Runs of a shipped
server are filed under ``mcp-NAME``, the others under ``mcp``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from otbench.arguments import positive_float
from otbench.envs.mcp import DEFAULT_TIMEOUT, SETTINGS
from otbench.envs.mcp.launch import http, stdio
from otbench.envs.mcp.metrics import BUILT_IN
from otbench.envs.mcp.servers import SERVERS
from otbench.errors import ConfigError

if TYPE_CHECKING:
    from otbench.envs.registry import ArgumentGroup, EnvironmentOptions

LEARNING = "offline"
"""Its docs are learned on a train split and scored on a test split (its environment's ``learning``)."""
DEFAULT_SETTING = "base"


def add_arguments(group: ArgumentGroup) -> None:
    group.add_argument("--mcp", default=None, metavar='"COMMAND ARGS"',
                       help="MCP: the command line that starts the server (stdio)")
    group.add_argument("--mcp-url", default=None, metavar="URL", help="MCP: the server's streamable HTTP endpoint")
    group.add_argument("--mcp-server", default=None, metavar="NAME",
                       help=f"MCP: a shipped third-party server with its tasks and gold docs: {', '.join(SERVERS)}")
    group.add_argument("--tasks", default=None, metavar="FILE.jsonl",
                       help='MCP: the tasks, one JSON object a line: {"question": ..., "answer": ...}, optionally '
                            '"calls", "metric", "split"')
    group.add_argument("--metric", default=BUILT_IN[0],
                       help=f"MCP: how an attempt is scored: {', '.join(BUILT_IN)} or module:function of your own "
                            f"(default {BUILT_IN[0]})")
    group.add_argument("--tolerance", type=float, default=1e-6,
                       help="MCP: the numeric metric's tolerance, relative (absolute below 1) (default 1e-6)")
    group.add_argument("--gold-docs", default=None, metavar="FILE",
                       help="MCP: the tools' true docs, for the gold setting and --docs gold")
    group.add_argument("--mcp-timeout", type=positive_float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                       help=f"MCP: seconds a tool call may take before it fails and the server is restarted "
                            f"(default {DEFAULT_TIMEOUT:g})")


def settings() -> str:
    """The settings ``--setting`` chooses from, for its help."""
    return f"{', '.join(SETTINGS)} (default {DEFAULT_SETTING}): how the server's tools are shown"


def _chosen(own: dict[str, Any]) -> dict[str, Any]:
    """The server, tasks and gold docs the options name, a shipped server's filling what is not given."""
    shipped = SERVERS.get(own["mcp_server"]) if own["mcp_server"] else None
    return {"tasks": own["tasks"] or (shipped.tasks if shipped else None),
            "gold_docs": own["gold_docs"] or (shipped.gold_docs if shipped else None), "shipped": shipped}


def check(options: EnvironmentOptions) -> None:
    """Refuse what the options give that cannot be right. With no server nor tasks they are the defaults, which
    runs read back from MLflow are completed with (:mod:`otbench.run.lookup`): those are refused where the
    environment is built (:func:`build`), still on one line and before any model loads."""
    own = dict(options.own)
    if options.setting not in SETTINGS:
        raise ConfigError(f"unknown MCP setting {options.setting!r}; choose from {', '.join(SETTINGS)}")
    given = _servers_given(own)
    if len(given) > 1:
        raise ConfigError(f"an MCP environment needs one server, got {len(given)}: {', '.join(given)}")
    if own["mcp_server"] and own["mcp_server"] not in SERVERS:
        raise ConfigError(f"unknown --mcp-server {own['mcp_server']!r}; choose from {', '.join(SERVERS)}")
    if own["mcp_url"]:
        http(own["mcp_url"])  # a URL that does not parse is refused here, not where the server is reached
    if own["mcp"]:
        program = stdio(own["mcp"]).command[0]
        if shutil.which(program) is None:
            raise ConfigError(f"--mcp {own['mcp']!r}: no program {program!r} here (not on PATH, nor an executable "
                              "file)")
    chosen = _chosen(own)
    if chosen["tasks"] is not None and not Path(chosen["tasks"]).is_file():
        raise ConfigError(f"--tasks {chosen['tasks']}: no such file")
    if chosen["gold_docs"] is not None and not Path(chosen["gold_docs"]).is_file():
        raise ConfigError(f"--gold-docs {chosen['gold_docs']}: no such file")
    if options.setting == "gold" and given and chosen["gold_docs"] is None:
        raise ConfigError("the gold setting shows the true docs: give them (--gold-docs FILE)")
    metric = own["metric"]
    if metric not in BUILT_IN:
        from otbench.envs.mcp.metrics import user_metric

        user_metric(metric)
    if not own["tolerance"] >= 0:
        raise ConfigError(f"--tolerance must be a number >= 0, got {own['tolerance']}")
    if chosen["shipped"] is not None:
        chosen["shipped"].launch()  # refused at once when it is not installed


def _servers_given(own: dict[str, Any]) -> list[str]:
    return [flag for flag, name in (("--mcp", "mcp"), ("--mcp-url", "mcp_url"), ("--mcp-server", "mcp_server"))
            if own[name]]


def build(options: EnvironmentOptions, *, workers: int = 1):  # an MCPEnvironment
    from otbench.envs.mcp.env import Fixture, MCPEnvironment
    from otbench.envs.mcp.metrics import user_metric

    own = dict(options.own)
    if not _servers_given(own):
        raise ConfigError('an MCP environment needs a server: --mcp "COMMAND ARGS", --mcp-url URL or --mcp-server NAME')
    chosen = _chosen(own)
    if chosen["tasks"] is None:
        raise ConfigError("--tasks FILE.jsonl: the tasks to learn and score on, one JSON object a line")
    shipped = chosen["shipped"]
    server = shipped.launch() if shipped else http(own["mcp_url"]) if own["mcp_url"] else stdio(own["mcp"])
    metric = own["metric"] if own["metric"] in BUILT_IN else user_metric(own["metric"])
    name = f"mcp-{shipped.name}" if shipped else "mcp"
    return MCPEnvironment(server, Path(chosen["tasks"]), setting=str(options.setting), metric=metric,
                          tolerance=own["tolerance"], gold_docs=chosen["gold_docs"], timeout=own["mcp_timeout"],
                          fixture=Fixture(shipped.fixture) if shipped and shipped.fixture else None, name=name,
                          toolset=name)
