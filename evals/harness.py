"""Run an agent over tasks of an environment, concurrently, with a progress bar.

The harness asks of an environment only that it roll an agent out on a task (:class:`RollsOut`): every
:class:`otbench.envs.base.Environment` does, and metrics and statistics stay below the environments they score.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from otbench.core.parallel import parallel_map
from otbench.core.trajectory import Trajectory
from otbench.llm import tracing
from otbench.llm.metering import task_usage
from otbench.modules.tool_docs import Toolbox


class RollsOut(Protocol):
    """What the harness needs of an environment: one task played by ``agent`` with ``toolbox``'s docs, scored."""

    def rollout(self, agent: Any, toolbox: Toolbox, task: Any) -> Trajectory: ...


def run_rollouts(
    env: RollsOut, agent: Any, toolbox: Toolbox, tasks: list[Any], *, num_threads: int = 1,
    description: str = "rollouts", progress: bool = True, on_finished: Callable[[Trajectory], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> list[Trajectory]:
    """Trajectories in task order; raises :class:`~otbench.core.parallel.MapInterrupted` with the finished ones.
    Each trajectory carries what its task cost (``usage``: tokens, paid and cache-served, seconds and
    tool calls).
    ``on_finished`` sees each trajectory as it finishes (in the caller's thread). With ``stop``, a task not yet
    started when it returns True is not run: the trajectories are those of the tasks run (a budget spent).

    Each rollout is one MLflow trace of the run being traced (:mod:`otbench.llm.tracing`), if any.
    """
    def traced_rollout(task: Any) -> Trajectory | None:
        if stop is not None and stop():
            return None
        started = time.perf_counter()
        with tracing.rollout() as span, task_usage() as usage:
            trajectory = env.rollout(agent, toolbox, task)
            tracing.record_rollout(span, trajectory)
        trajectory.usage = {"tokens": float(usage.tokens + usage.cached), "paid_tokens": float(usage.tokens),
                            "seconds": round(time.perf_counter() - started, 3),
                            "tool_calls": float(len(trajectory.steps))}
        return trajectory

    def finished(trajectory: Trajectory | None) -> None:
        if trajectory is not None and on_finished is not None:
            on_finished(trajectory)

    ran = parallel_map(traced_rollout, tasks, num_threads=num_threads, description=description, progress=progress,
                       on_result=finished)
    return [trajectory for trajectory in ran if trajectory is not None]
