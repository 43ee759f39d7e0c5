"""Run environment functions in worker processes, with a CPU-time and memory limit per call.

A call like ``math_factorial(n=10**9)`` must not hang a run, and Python cannot interrupt a
running function in its own process, so calls run in long-lived worker processes (started once;
a call costs a pipe round trip, not a process start) that are killed and replaced on a timeout.

The limit counts the CPU time the call itself uses (the kernel's ``RLIMIT_CPU``, in whole
seconds), not wall-clock time: whether a call "times out" must not depend on what else the
machine is doing, or a benchmark's scores would change with the load (an embedded LLM sharing
the cores made correct calls time out). A generous wall-clock backstop still catches calls that
block without using the CPU.

Functions execute under the name the agent used: the code object is renamed, so Python's own
errors read ``function_1() missing 1 required positional argument: 'n'`` — the text an editor
learns parameter names from when the docs hide them.

An output is sent back only when it is small (``max_output_bytes``, measured in the worker):
a few cheap calls can build outputs of gigabytes, and a run keeps every output it scores.
Whatever happens to one call (arguments that cannot be sent, a worker that dies or stalls),
the caller gets ``(False, reason)`` and the pool keeps its size.
"""

from __future__ import annotations

import importlib
import math
import os
import pickle
import resource
import select
import signal
import struct
import subprocess
import sys
import threading
import types
from collections.abc import Callable
from typing import IO, Any, Self

from otbench.core.calls import CallResult, ToolCall
from otbench.core.opaque import renamed

_HEADER = struct.Struct("!Q")
_READY = "ready"
_STARTUP_SECONDS = 300.0  # a worker importing its functions on a starved machine; not a call's time
DEFAULT_MAX_OUTPUT_BYTES = 65_536
"""A call's output above this (pickled) fails the call; BFCL's gold outputs are all far smaller."""


def _renamed(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    if not isinstance(function, types.FunctionType):
        return function
    return renamed(function, name, doc=function.__doc__)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:500]}" if text else type(exc).__name__


def _write_frame(stream: IO[bytes], value: Any) -> None:
    payload = pickle.dumps(value)
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            raise EOFError("worker closed its pipe")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _read_frame(stream: IO[bytes]) -> Any:
    (size,) = _HEADER.unpack(_read_exact(stream, _HEADER.size))
    return pickle.loads(_read_exact(stream, size))


def _cpu_seconds_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _limit_cpu(seconds: float) -> None:
    """Let the process use ``seconds`` more CPU time (rounded up to whole seconds), then be killed.

    Past the soft limit the kernel sends SIGXCPU, whose default action ends the process; the
    hard limit is left as it is (an unprivileged process could not raise it again).
    """
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(_cpu_seconds_used() + seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _reply_payload(result: tuple[bool, Any], shown_name: str, max_output_bytes: int) -> bytes:
    """The pickled ``result``, or a failed call's when the output cannot be sent or is too large."""
    try:
        payload = pickle.dumps(result)
    except Exception as exc:  # noqa: BLE001 - an output that cannot be sent back is a failed call
        return pickle.dumps((False, f"the output could not be returned: {_one_line(exc)}"))
    if result[0] and len(payload) > max_output_bytes:
        error = (f"OverflowError: the output of {shown_name}() takes {len(payload)} bytes, "
                 f"more than the {max_output_bytes} allowed for one call")
        return pickle.dumps((False, error))
    return payload


def serve(registry: str, memory_limit_bytes: int, cpu_seconds: float, max_output_bytes: int) -> None:
    """Worker loop on stdin/stdout: ``(function, shown_name, arguments)`` in, ``(ok, value)`` out.

    Frames are pickles exchanged only between this package's own processes; model output
    reaches a worker as plain JSON-derived data (dicts, lists, numbers, strings). A ``ready``
    frame says the functions are imported, so start-up never counts against a call.
    """
    if memory_limit_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a call killed for its CPU time leaves no core file
    module_name, attribute = registry.split(":")
    functions: dict[str, Callable[..., Any]] = getattr(importlib.import_module(module_name), attribute)
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a function that prints must not corrupt the reply stream
    _write_frame(replies, _READY)
    while True:
        try:
            function_name, shown_name, arguments = _read_frame(requests)
        except EOFError:
            return
        _limit_cpu(cpu_seconds)
        try:
            if not isinstance(arguments, dict):
                raise TypeError(f"{shown_name}() arguments must be an object of named arguments, "
                                f"got {type(arguments).__name__}")
            result: tuple[bool, Any] = (True, _renamed(functions[function_name], shown_name)(**arguments))
        except MemoryError:
            result = (False, "MemoryError: the call ran out of memory")
        except Exception as exc:  # noqa: BLE001 - any failure of the function is the call's result
            result = (False, _one_line(exc))
        payload = _reply_payload(result, shown_name, max_output_bytes)
        del result  # a refused output must not stay alive while the next call runs
        replies.write(_HEADER.pack(len(payload)) + payload)
        replies.flush()


class _Worker:
    """A ``python -m otbench.core.sandbox`` child: independent of the caller's ``__main__``."""

    def __init__(self, registry: str, memory_limit_bytes: int, cpu_seconds: float, max_output_bytes: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "otbench.core.sandbox", registry, str(memory_limit_bytes), repr(cpu_seconds),
             str(max_output_bytes)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        )
        self.started = False

    def _reply(self, timeout: float) -> Any:
        """The next frame, or None when none came within ``timeout`` seconds (EOFError if it died)."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        return _read_frame(self.process.stdout) if ready else None

    def request(self, payload: bytes, timeout: float) -> Any:
        """Send one pickled call; the reply, or None when none came within ``timeout`` wall-clock seconds."""
        assert self.process.stdin is not None
        if not self.started:
            if self._reply(_STARTUP_SECONDS) != _READY:
                raise EOFError("worker did not start")
            self.started = True
        self.process.stdin.write(_HEADER.pack(len(payload)) + payload)
        self.process.stdin.flush()
        return self._reply(timeout)

    def killed_for_cpu_time(self) -> bool:
        """Whether the worker ended because the kernel stopped it at its CPU-time limit."""
        try:
            return self.process.wait(timeout=5) == -signal.SIGXCPU
        except subprocess.TimeoutExpired:
            return False

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class CallSandbox:
    """A pool of worker processes executing ``registry``'s functions (``"package.module:DICT"``).

    ``timeout`` is the CPU time a call may use; ``wall_timeout`` (default the larger of 60 s and
    ten times ``timeout``) only catches calls that block; an output larger than
    ``max_output_bytes`` (pickled) fails the call. Thread-safe: each thread borrows a worker for
    one call. Close it (or use ``with``) to stop the workers; a closed sandbox starts afresh at its next call.

    ``workers`` is the most worker processes it runs. A worker starts only when a call finds none
    idle, so there are never more workers than calls made at once: a command's thread count bounds
    them, whatever ``workers`` allows. The choice to start one is made under the pool's lock, with
    its place taken before the process starts: threads that arrive together (every rollout's first
    call, at once) share the workers, never start a pool each.
    """

    def __init__(self, registry: str, *, timeout: float = 5.0, wall_timeout: float | None = None, workers: int = 1,
                 memory_limit_mb: int = 2048, max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES) -> None:
        if not (math.isfinite(timeout) and timeout > 0):  # the kernel's CPU limit is a whole number of seconds
            raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout}")
        if max_output_bytes < 1:
            raise ValueError(f"max_output_bytes must be at least 1, got {max_output_bytes}")
        self.max_output_bytes = max_output_bytes
        self.registry = registry
        self.timeout = timeout
        self.wall_timeout = wall_timeout if wall_timeout is not None else max(60.0, 10 * timeout)
        self._memory = memory_limit_mb * 1024 * 1024
        self.size = max(1, workers)
        self._changed = threading.Condition()  # guards the lists and the count below; signalled when a worker frees
        self._idle: list[_Worker] = []  # last in, first out: a lightly used pool keeps reusing its warmest worker
        self._all: list[_Worker] = []
        self._starting = 0

    @property
    def running(self) -> int:
        """Worker processes started (or starting) and not yet stopped."""
        with self._changed:
            return len(self._all) + self._starting

    @property
    def in_use(self) -> int:
        """Workers lent to calls that have not handed them back (none between calls)."""
        with self._changed:
            return len(self._all) + self._starting - len(self._idle)

    def _borrow(self) -> _Worker:
        """An idle worker; else a new one while fewer than ``size`` run; else the next one handed back."""
        with self._changed:
            while not self._idle and len(self._all) + self._starting >= self.size:
                self._changed.wait()
            if self._idle:
                return self._idle.pop()
            self._starting += 1
        worker = None
        try:
            worker = _Worker(self.registry, self._memory, self.timeout, self.max_output_bytes)
        finally:
            with self._changed:
                self._starting -= 1
                if worker is not None:
                    self._all.append(worker)
                else:  # the process could not start: its place is free again
                    self._changed.notify()
        return worker

    def _hand_back(self, worker: _Worker, healthy: bool) -> None:
        """Back to the idle list after a reply; stopped (its place freed) after anything else, or when the
        sandbox was closed while the call ran."""
        with self._changed:
            keep = healthy and worker in self._all
            if keep:
                self._idle.append(worker)
            elif worker in self._all:
                self._all.remove(worker)
            self._changed.notify()
        if not keep:
            worker.kill()

    def call(self, function: str, shown_name: str, arguments: Any) -> tuple[bool, Any]:
        """Execute one call; returns ``(True, output)`` or ``(False, one-line error)``.

        The borrowed worker goes back to the pool after a reply; after anything else (a timeout, a
        crash, an interrupted exchange) it is stopped, and the next call that needs one starts another.
        """
        try:
            payload = pickle.dumps((function, shown_name, arguments))
        except Exception as exc:  # noqa: BLE001 - arguments that cannot be sent are the call's failure
            return False, f"TypeError: {shown_name}() arguments could not be sent: {_one_line(exc)}"
        worker = self._borrow()
        healthy = False
        try:
            reply = worker.request(payload, self.wall_timeout)
            if reply is None:
                return False, f"TimeoutError: {shown_name}() did not return within {self.wall_timeout:g} s"
            healthy = True
            return reply
        except (EOFError, OSError, pickle.UnpicklingError):
            return (False, f"TimeoutError: {shown_name}() used more than {self.timeout:g} s of CPU time"
                    if worker.killed_for_cpu_time() else f"RuntimeError: {shown_name}() crashed its worker process")
        finally:
            self._hand_back(worker, healthy)

    def run(self, call: ToolCall, real: str | None) -> CallResult:
        """One call under its shown name, of the function ``real`` names (None: a name no tool has), as a result:
        a call whose shape did not fit is refused with its reason, one to an unknown name fails as Python would."""
        if call.problem is not None:
            return CallResult.refused(call)
        if real is None:
            return CallResult(call, False, error=f"NameError: no tool named {call.name!r}")
        ok, value = self.call(real, call.name, call.arguments)
        return CallResult(call, True, output=value) if ok else CallResult(call, False, error=value)

    def close(self) -> None:
        """Stop every worker; a call still running gets a failed call and its worker is not reused."""
        with self._changed:
            workers, self._all, self._idle = self._all, [], []
            self._changed.notify_all()
        for worker in workers:
            worker.kill()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]))
