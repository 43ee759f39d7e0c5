"""Shared command-line plumbing: argument kinds, tracking options, one-line errors, exit codes.

What otbench cannot do as asked (an :class:`~otbench.errors.OtbenchError` from the library, a bad
option) prints one line and exits 2; Ctrl-C exits 130 after the command's own cleanup has kept
finished work. SIGTERM (``kill``,
``timeout``, a batch scheduler's preemption) is handled like Ctrl-C: without that, Python dies
on the spot and the MLflow run stays RUNNING for ever, with no resume hint.

A stop must end the process even when the cleanup cannot finish (a hung tracking server, a
native call that never returns): once stopped, a command gets ``STOP_GRACE_SECONDS`` to clean
up, then prints every thread's stack and exits. Once the cleanup is done, a stopped command ends
at once, without the interpreter's shutdown: worker threads still inside an LM call may hold an
import lock, and a finalizer that imports then waited on it for ever. ``kill -USR1 PID`` prints
the stacks of a run that seems stuck without stopping it.
"""

from __future__ import annotations

import argparse
import faulthandler
import math
import os
import re
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from otbench.errors import ConfigError, OtbenchError, SetupError
from otbench.outputs import STORE_DIRECTORY

API_BASE_VARIABLE = "OTBENCH_API_BASE"
EDITOR_API_BASE_VARIABLE = "OTBENCH_EDITOR_API_BASE"


def plain_text(text: str) -> str:
    """Docstring text without its reStructuredText markup (``code``, :role:`name`), as a terminal shows it."""
    return re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text).replace("``", "")


THROUGH_CONSOLE = False
"""Whether the command runs as ``otbench COMMAND`` (the console script sets it): its usage line names it so."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (and exit 2), not a usage dump; the
    description (a command's docstring line) is shown without its markup. An option is taken only as
    spelled in full: argparse would read a mistyped ``--no-request-value`` as the one option it begins
    and start an hour-long run."""

    def __init__(self, *, description: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        prog = str(kwargs.get("prog", ""))
        if THROUGH_CONSOLE and prog.startswith("python -m otbench."):  # the usage line names the program as run
            kwargs["prog"] = "otbench " + prog.removeprefix("python -m otbench.")
        super().__init__(description=plain_text(description) if description else description, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def add_refuse_repeats(group: argparse._ArgumentGroup, default: bool) -> None:
    """``--[no-]refuse-repeats``, one option for every environment whose agent loop refuses exact repeats (BrowseComp
    and Wild say it once between them: the environments' options share one group)."""
    group.add_argument("--refuse-repeats", action=argparse.BooleanOptionalAction, default=default,
                       help="BrowseComp, Wild: a call that repeats exactly (same tool, same arguments) one that worked "
                            "earlier (in the question; in the user turn) is not run, and the agent is told its result "
                            f"is above (default {'on' if default else 'off'})")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0: seconds and similar limits, where 0, nan or inf make no sense."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number of at least 0: a sampling temperature, where nan, inf or a negative value make no sense."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text}")
    return value


def port_number(text: str) -> int:
    """A TCP port, 1 to 65535."""
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {value}")
    return value


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


def add_tracking_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("tracking")
    group.add_argument("--mlruns", type=STORE_DIRECTORY, default=None, help="local MLflow store directory (default ./mlruns)")
    group.add_argument("--tracking-uri", default=None,
                       help="an MLflow tracking server to log to instead (default: the local store, or $MLFLOW_TRACKING_URI)")


STOP_GRACE_SECONDS = 60.0
"""How long a stopped command may spend keeping its finished work before it is ended regardless."""


REFUSED_EXIT = 2
"""A command that cannot do as asked (a user's mistake) exits with this code, after one line on stderr."""
STOPPED_EXIT = 128 + signal.SIGINT
"""A command stopped by Ctrl-C or SIGTERM exits as a shell reports one ended by Ctrl-C, once its cleanup is done."""
BROKEN_PIPE_EXIT = 128 + signal.SIGPIPE
"""A command whose output's reader closed the pipe exits as a shell reports a process ended by SIGPIPE."""


def _interrupt(signum: int, frame: object) -> NoReturn:
    if sys.__stderr__ is not None:  # a C watchdog: it runs even while a thread holds the GIL
        faulthandler.dump_traceback_later(STOP_GRACE_SECONDS, exit=True, file=sys.__stderr__)
    raise KeyboardInterrupt


def _signals_delivered() -> None:
    """Stops reach the command even when its parent blocked them (a mask is inherited across exec)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGUSR1})
    if sys.__stderr__ is not None:  # the process's own stream: a replaced sys.stderr may have no file behind it
        faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)


def run_main(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> NoReturn:
    """Run a command's ``main`` and turn otbench's errors, Ctrl-C and SIGTERM into clean exits: the one place an
    :class:`~otbench.errors.OtbenchError` becomes a one-line message."""
    _signals_delivered()
    previous = {number: signal.signal(number, _interrupt) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        code = main(argv)
    except OtbenchError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)  # one line, whatever a library's message held
        code = REFUSED_EXIT
    except KeyboardInterrupt as stop:
        print(f"interrupted: {str(stop) or 'finished work was kept'}", file=sys.stderr)
        code = STOPPED_EXIT
    except BrokenPipeError:  # the output's reader left (``| head``): it has what it wanted, so say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush must not fail again
        code = BROKEN_PIPE_EXIT
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if code == STOPPED_EXIT:  # finished work is kept; what is still running was stopped and has nothing to finish
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def given_options(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The options (by destination) a command line gives, spelled in full as :class:`OneLineParser` takes them:
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


def seed(text: str) -> int:
    """A task sample's seed: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a seed of 0 or more, got {value}")
    return value


def seed_list(text: str) -> tuple[int, ...]:
    """``1,2,3``: the seeds of several task samples (whole numbers, 0 or more, none left empty)."""
    parts = [part.strip() for part in text.split(",")]
    if not all(parts):
        raise argparse.ArgumentTypeError(f"expected seeds separated by commas, with none empty, got {text!r}")
    return tuple(seed(part) for part in parts)
