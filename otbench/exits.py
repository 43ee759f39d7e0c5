"""How a command ends: one line and exit 2 for what it cannot do, a clean stop on Ctrl-C or SIGTERM.

What otbench cannot do as asked (an :class:`~otbench.errors.OtbenchError` from the library, a bad
option) prints one line and exits 2; a model call that failed for good (a timeout, a server down) prints one line
and exits 3, its run's finished work kept for ``--resume``; Ctrl-C exits 130 after the command's own cleanup has kept
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

import faulthandler
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

from otbench.errors import OtbenchError

STOP_GRACE_SECONDS = 60.0
"""How long a stopped command may spend keeping its finished work before it is ended regardless."""

RESEND_SECONDS = 0.01
"""How long after a swallowed stop it is sent again: time for the finalizer that swallowed it to return."""

REFUSED_EXIT = 2
"""A command that cannot do as asked (a user's mistake) exits with this code, after one line on stderr."""
STOPPED_EXIT = 128 + signal.SIGINT
"""A command stopped by Ctrl-C or SIGTERM exits as a shell reports one ended by Ctrl-C, once its cleanup is done."""
BROKEN_PIPE_EXIT = 128 + signal.SIGPIPE
"""A command whose output's reader closed the pipe exits as a shell reports a process ended by SIGPIPE."""
MODEL_FAILED_EXIT = 3
"""A command whose model call failed for good (no answer in time, a server down, a key refused) exits with this code,
after one line on stderr: not a user's mistake, and not the command's own bug either."""


def _model_failure(error: Exception) -> bool:
    """Whether ``error`` is an LM call that failed for good once its retries were spent (DSPy's LM errors)."""
    from dspy.utils.exceptions import LMError

    return isinstance(error, LMError)


def _interrupt(signum: int, frame: object) -> NoReturn:
    if sys.__stderr__ is not None:  # a C watchdog: it runs even while a thread holds the GIL
        faulthandler.dump_traceback_later(STOP_GRACE_SECONDS, exit=True, file=sys.__stderr__)
    raise KeyboardInterrupt


def _stop_kept(unraisable: sys.UnraisableHookArgs, default: Callable[[sys.UnraisableHookArgs], object]) -> None:
    """A stop that landed inside a finalizer or a weak reference's callback (MLflow's SQLAlchemy pool has them) is
    swallowed there by Python, which prints a traceback and goes on as if never stopped: it is sent again once this
    hook has returned (from a thread: sent from here, its handler would run, and be swallowed, inside the hook), to
    reach the command's own code; anything else unraisable is printed as Python would."""
    if unraisable.exc_type is KeyboardInterrupt:
        resend = threading.Timer(RESEND_SECONDS, os.kill, (os.getpid(), signal.SIGINT))
        resend.daemon = True
        resend.start()
    else:
        default(unraisable)


def _signals_delivered() -> None:
    """Stops reach the command even when its parent blocked them (a mask is inherited across exec)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGUSR1})
    if sys.__stderr__ is not None:  # the process's own stream: a replaced sys.stderr may have no file behind it
        faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)


@contextmanager
def stops_held() -> Iterator[Callable[[], None]]:
    """Ctrl-C and SIGTERM held back until the ``release`` it yields is called (or the block ends): for a step that
    makes something only the code after it can clean up (a run created in a store), so that a stop between the two
    cannot leave it behind. Release inside the ``try`` whose handler cleans up: a stop that came meanwhile is raised
    there."""
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    try:
        yield release
    finally:
        release()


def run_main(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> NoReturn:
    """Run a command's ``main`` and turn otbench's errors, Ctrl-C and SIGTERM into clean exits: the one place an
    :class:`~otbench.errors.OtbenchError` becomes a one-line message."""
    _signals_delivered()
    previous = {number: signal.signal(number, _interrupt) for number in (signal.SIGTERM, signal.SIGINT)}
    previous_hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: _stop_kept(unraisable, previous_hook)
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
    except Exception as exc:
        if not _model_failure(exc):
            raise
        print(f"error: a model call failed ({type(exc).__name__}: {' '.join(str(exc).split())}); finished work was "
              "kept: a run goes on with --resume and its run id", file=sys.stderr)
        code = MODEL_FAILED_EXIT
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        sys.unraisablehook = previous_hook
    if code == STOPPED_EXIT:  # finished work is kept; what is still running was stopped and has nothing to finish
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
