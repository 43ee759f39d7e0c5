"""What the commands share beyond their arguments: the tracking options, which options a command line gave, and a
check that a server can listen where it is asked to."""

from __future__ import annotations

import argparse
import socket

from otbench.errors import ConfigError, SetupError
from otbench.outputs import STORE_DIRECTORY


def add_tracking_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("tracking")
    group.add_argument("--mlruns", type=STORE_DIRECTORY, default=None, help="local MLflow store directory (default ./mlruns)")
    group.add_argument("--tracking-uri", default=None,
                       help="an MLflow tracking server to log to instead (default: the local store, or $MLFLOW_TRACKING_URI)")


def given_options(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The options (by destination) a command line gives, spelled in full as :class:`~otbench.arguments.OneLineParser`
    takes them:
    what a user asked for, which a default equal to it cannot tell."""
    flags = {flag: action.dest for action in parser._actions for flag in action.option_strings}
    given = set()
    for token in argv:
        if token == "--":
            break
        name = token.split("=", 1)[0]
        if name in flags:
            given.add(flags[name])
    return given


def refuse_unusable_address(host: str, port: int, label: str) -> None:
    """Bind ``host:port`` once and let go, so that a port another process holds, or an address this machine
    does not have, is refused on one line before a server (and what it loads) starts, not after."""
    if not host.strip():
        raise ConfigError(f"{label}: expected an address to listen on, such as 127.0.0.1 or 0.0.0.0")
    try:
        family, kind, protocol, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                                flags=socket.AI_PASSIVE)[0]
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers do: a closing port is free
            probe.bind(address)
    except OSError as error:  # socket.gaierror (no such host) is an OSError too
        raise SetupError(f"{label}: cannot listen on {host}:{port} ({error.strerror or error})") from None
