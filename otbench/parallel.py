"""Map a function over items on a thread pool with a progress bar, keeping finished results.

LLM calls dominate every loop here and release the GIL, so threads are the right tool; the
embedded server gets one slot per thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TypeVar

from tqdm import tqdm

Item = TypeVar("Item")
Result = TypeVar("Result")


class MapInterrupted(Exception):
    """The map stopped early; ``finished`` maps item index -> result for what completed."""

    def __init__(self, finished: dict[int, object], cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.finished = finished
        self.cause = cause


def parallel_map(
    function: Callable[[Item], Result], items: Sequence[Item], *, num_threads: int = 1, description: str = "",
    progress: bool = True,
) -> list[Result]:
    """Results in item order; :class:`MapInterrupted` (with the finished ones) on any failure."""
    results: dict[int, Result] = {}
    bar = tqdm(total=len(items), desc=description, unit="task", disable=not progress or not items, dynamic_ncols=True)
    pool = ThreadPoolExecutor(max_workers=max(1, num_threads))
    try:
        futures = {pool.submit(function, item): index for index, item in enumerate(items)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            bar.update(1)
    except BaseException as exc:
        pool.shutdown(wait=False, cancel_futures=True)
        raise MapInterrupted(dict(results), exc) from exc
    finally:
        bar.close()
    pool.shutdown()
    return [results[index] for index in range(len(items))]
