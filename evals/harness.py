"""Run an agent over tasks of an environment, concurrently, with a progress bar.

Finished trajectories are handed to ``on_done`` as they complete, so a caller can persist them
and a run that fails half way keeps every finished task.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from tqdm import tqdm

from modules.tool_docs import Toolbox
from otbench.envs.base import Agent, Environment
from otbench.trajectory import Trajectory


class RolloutsInterrupted(Exception):
    """Rollouts stopped early; ``finished`` holds the trajectories completed before the failure."""

    def __init__(self, finished: list[Trajectory], cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.finished = finished
        self.cause = cause


def run_rollouts(
    env: Environment, agent: Agent, toolbox: Toolbox, tasks: list[Any], *, num_threads: int = 1,
    description: str = "rollouts", on_done: Callable[[Trajectory], None] | None = None, progress: bool = True,
) -> list[Trajectory]:
    """Trajectories in task order. Raises :class:`RolloutsInterrupted` with the finished ones on failure."""
    results: dict[int, Trajectory] = {}
    bar = tqdm(total=len(tasks), desc=description, unit="task", disable=not progress, dynamic_ncols=True)
    pool = ThreadPoolExecutor(max_workers=max(1, num_threads))
    try:
        futures = {pool.submit(env.rollout, agent, toolbox, task): index for index, task in enumerate(tasks)}
        for future in as_completed(futures):
            trajectory = future.result()
            results[futures[future]] = trajectory
            if on_done is not None:
                on_done(trajectory)
            bar.update(1)
    except BaseException as exc:
        pool.shutdown(wait=False, cancel_futures=True)
        raise RolloutsInterrupted([results[i] for i in sorted(results)], exc) from exc
    finally:
        bar.close()
    pool.shutdown()
    return [results[i] for i in sorted(results)]
