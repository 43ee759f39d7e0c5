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
import multiprocessing
import queue
import resource
import types
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

_SPAWN = multiprocessing.get_context("spawn")


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


def _worker(registry: str, memory_limit_bytes: int, conn: Connection) -> None:
    """Child loop: receive ``(function, shown_name, arguments)``, answer ``(ok, output_or_error)``."""
    if memory_limit_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))
    module_name, attribute = registry.split(":")
    functions: dict[str, Callable[..., Any]] = getattr(importlib.import_module(module_name), attribute)
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        function_name, shown_name, arguments = request
        try:
            if not isinstance(arguments, dict):
                raise TypeError(f"{shown_name}() arguments must be an object of named arguments, got {type(arguments).__name__}")
            result: tuple[bool, Any] = (True, _renamed(functions[function_name], shown_name)(**arguments))
        except MemoryError:
            result = (False, "MemoryError: the call ran out of memory")
        except Exception as exc:  # noqa: BLE001 - any failure of the function is the call's result
            result = (False, _one_line(exc))
        try:
            conn.send(result)
        except Exception as exc:  # noqa: BLE001 - an output that cannot be sent back is a failed call
            conn.send((False, f"the output could not be returned: {_one_line(exc)}"))


class _Worker:
    def __init__(self, registry: str, memory_limit_bytes: int) -> None:
        self.conn, child = _SPAWN.Pipe()
        self.process = _SPAWN.Process(target=_worker, args=(registry, memory_limit_bytes, child), daemon=True)
        self.process.start()
        child.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


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
            worker.conn.send((function, shown_name, arguments))
            if worker.conn.poll(self.timeout):
                result = worker.conn.recv()
                self._idle.put(worker)
                return result
            outcome = (False, f"TimeoutError: {shown_name}() did not return within {self.timeout:g} s")
        except (EOFError, OSError, BrokenPipeError):
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
