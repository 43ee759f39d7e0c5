"""Where an MCP server is reached: a command line otbench starts (stdio), or a URL it connects to (HTTP).

The command line is split as a POSIX shell splits it (quotes keep spaces), and never run through a
shell: ``--mcp "uvx mcp-server-time; rm -rf ~"`` starts a program named ``uvx`` with odd arguments,
nothing else. A server started here is otbench's own, so it may be stopped and started again when it
hangs or dies; a server behind a URL is not, so only the session with it is opened again.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from otbench.errors import ConfigError


@dataclass(frozen=True)
class ServerLaunch:
    """A stdio server's program, arguments, environment and working folder; or a streamable HTTP URL."""

    command: tuple[str, ...] = ()
    """The program and its arguments (empty for a URL)."""
    url: str | None = None
    env: tuple[tuple[str, str], ...] = field(default=())
    """Variables set for the program, beside the few the SDK passes on (``PATH``, ``HOME``...)."""
    cwd: Path | None = None

    @property
    def owned(self) -> bool:
        """Whether otbench started the server (and so may stop and restart it)."""
        return self.url is None

    def describe(self) -> str:
        """One line naming the server, for errors."""
        return self.url if self.url is not None else shlex.join(self.command)


def stdio(command_line: str, *, cwd: Path | None = None, env: dict[str, str] | None = None) -> ServerLaunch:
    """The server ``command_line`` starts (``"mcp-server-time --local-timezone UTC"``)."""
    try:
        command = tuple(shlex.split(command_line))
    except ValueError as error:
        raise ConfigError(f"--mcp {command_line!r}: {error}") from None
    if not command:
        raise ConfigError("--mcp: expected a command line that starts an MCP server, got an empty one")
    return ServerLaunch(command=command, env=tuple(sorted((env or {}).items())), cwd=cwd)


def http(url: str) -> ServerLaunch:
    """The streamable HTTP server at ``url`` (``http://127.0.0.1:8000/mcp``)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - read for its check: a port that is not a number raises
    except ValueError as error:
        raise ConfigError(f"--mcp-url {url!r}: not a URL ({error})") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"--mcp-url {url!r}: expected an http:// or https:// URL of an MCP endpoint")
    return ServerLaunch(url=url)
