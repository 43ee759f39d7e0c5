"""Run environment functions in worker processes, with a time and memory limit per call.

A call like ``math_factorial(n=10**9)`` must not hang a run, and Python cannot interrupt a
running function in its own process, so calls run in long-lived worker processes (started once;
a call costs a pipe round trip, not a process start) that are killed and replaced on a timeout.

Functions execute under the name the agent used: the code object is renamed, so Python's own
errors read ``function_1() missing 1 required positional argument: 'n'`` — the text an editor
learns parameter names from when the docs hide them.
"""

from __future__ import annotations

import importlib
import os
import pickle
import queue
import resource
import select
import struct
import subprocess
import sys
import types
from collections.abc import Callable
from typing import IO, Any

_HEADER = struct.Struct("!Q")


def _renamed(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    if not isinstance(function, types.FunctionType):
        return function
    code = function.__code__.replace(co_name=name, co_qualname=name)
    twin = types.FunctionType(code, function.__globals__, name, function.__defaults__, function.__closure__)
    twin.__kwdefaults__ = function.__kwdefaults__
    return twin


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


def serve(registry: str, memory_limit_bytes: int) -> None:
    """Worker loop on stdin/stdout: ``(function, shown_name, arguments)`` in, ``(ok, value)`` out.

    Frames are pickles exchanged only between this package's own processes; model output
    reaches a worker as plain JSON-derived data (dicts, lists, numbers, strings).
    """
    if memory_limit_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))
    module_name, attribute = registry.split(":")
    functions: dict[str, Callable[..., Any]] = getattr(importlib.import_module(module_name), attribute)
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a function that prints must not corrupt the reply stream
    while True:
        try:
            function_name, shown_name, arguments = _read_frame(requests)
        except EOFError:
            return
        try:
            if not isinstance(arguments, dict):
                raise TypeError(f"{shown_name}() arguments must be an object of named arguments, "
                                f"got {type(arguments).__name__}")
            result: tuple[bool, Any] = (True, _renamed(functions[function_name], shown_name)(**arguments))
        except MemoryError:
            result = (False, "MemoryError: the call ran out of memory")
        except Exception as exc:  # noqa: BLE001 - any failure of the function is the call's result
            result = (False, _one_line(exc))
        try:
            payload = pickle.dumps(result)
        except Exception as exc:  # noqa: BLE001 - an output that cannot be sent back is a failed call
            payload = pickle.dumps((False, f"the output could not be returned: {_one_line(exc)}"))
        replies.write(_HEADER.pack(len(payload)) + payload)
        replies.flush()


class _Worker:
    """A ``python -m otbench.sandbox`` child: independent of the caller's ``__main__``."""

    def __init__(self, registry: str, memory_limit_bytes: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "otbench.sandbox", registry, str(memory_limit_bytes)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        )

    def request(self, message: Any, timeout: float) -> Any:
        """Send one call; the reply, or None when none came within ``timeout`` seconds."""
        assert self.process.stdin is not None and self.process.stdout is not None
        _write_frame(self.process.stdin, message)
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        return _read_frame(self.process.stdout) if ready else None

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class CallSandbox:
    """A pool of worker processes executing ``registry``'s functions (``"package.module:DICT"``).

    Thread-safe: each thread borrows a worker for one call. Close it (or use ``with``) to stop
    the workers.
    """

    def __init__(self, registry: str, *, timeout: float = 5.0, workers: int = 1, memory_limit_mb: int = 2048) -> None:
        self.registry = registry
        self.timeout = timeout
        self._memory = memory_limit_mb * 1024 * 1024
        self._size = max(1, workers)
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._all: list[_Worker] = []
        self._started = False

    def _start(self) -> None:
        for _ in range(self._size):
            self._spawn()
        self._started = True

    def _spawn(self) -> None:
        worker = _Worker(self.registry, self._memory)
        self._all.append(worker)
        self._idle.put(worker)

    def call(self, function: str, shown_name: str, arguments: Any) -> tuple[bool, Any]:
        """Execute one call; returns ``(True, output)`` or ``(False, one-line error)``."""
        if not self._started:
            self._start()
        worker = self._idle.get()
        try:
            result = worker.request((function, shown_name, arguments), self.timeout)
            if result is not None:
                self._idle.put(worker)
                return result
            outcome = (False, f"TimeoutError: {shown_name}() did not return within {self.timeout:g} s")
        except (EOFError, OSError):
            outcome = (False, f"RuntimeError: {shown_name}() crashed its worker process")
        worker.kill()
        self._all.remove(worker)
        self._spawn()
        return outcome

    def close(self) -> None:
        for worker in self._all:
            worker.kill()
        self._all.clear()
        self._started = False
        self._idle = queue.Queue()

    def __enter__(self) -> CallSandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
