"""Map a function over items on worker threads with a progress bar, keeping finished results.

LLM calls dominate every loop here and release the GIL, so threads are the right tool; the
embedded server gets one slot per thread.

The workers are daemon threads that take no new item once the map has failed or been
interrupted. A ``ThreadPoolExecutor`` would not do: the interpreter joins its workers at exit,
so Ctrl-C waited for the item in flight (a whole tool's play in Play2Prompt), or for ever when
that item was waiting on the embedded server that the interrupt had just stopped.
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tqdm import tqdm

Item = TypeVar("Item")
Result = TypeVar("Result")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, which a container or ``taskset`` narrows)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class MapInterrupted(Exception):
    """The map stopped early; ``finished`` maps item index -> result for what completed."""

    def __init__(self, finished: dict[int, Any], cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.finished = finished
        self.cause = cause


def parallel_map(
    function: Callable[[Item], Result], items: Sequence[Item], *, num_threads: int = 1, description: str = "",
    progress: bool = True, on_result: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Results in item order; :class:`MapInterrupted` (with the finished ones) on any failure. ``on_result`` is
    called with each result as it comes, in the caller's thread (to keep finished work as it goes)."""
    todo: queue.SimpleQueue[tuple[int, Item]] = queue.SimpleQueue()
    for entry in enumerate(items):
        todo.put(entry)
    done: queue.SimpleQueue[tuple[int, bool, object]] = queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            try:
                index, item = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((index, True, function(item)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, which raises it
                stop.set()
                done.put((index, False, exc))

    for number in range(min(max(1, num_threads), len(items))):
        # each worker runs in a copy of the caller's context: settings scoped with dspy.context reach it
        threading.Thread(target=contextvars.copy_context().run, args=(work,), name=f"parallel_map-{number}",
                         daemon=True).start()
    results: dict[int, Result] = {}
    bar = tqdm(total=len(items), desc=description, unit="task", disable=not progress or not items, dynamic_ncols=True)
    try:
        while len(results) < len(items):
            index, ok, value = done.get()
            if not ok:
                raise value  # type: ignore[misc]  # an exception, by the worker's contract
            results[index] = value  # type: ignore[assignment]
            if on_result is not None:
                on_result(value)  # type: ignore[arg-type]
            bar.update(1)
    except BaseException as exc:
        stop.set()
        raise MapInterrupted(dict(results), exc) from exc
    finally:
        bar.close()
    return [results[index] for index in range(len(items))]
