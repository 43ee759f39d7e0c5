"""Run an agent over tasks of an environment, concurrently, with a progress bar."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from otbench.core.parallel import parallel_map
from otbench.core.trajectory import Trajectory
from otbench.envs.base import Agent, Environment
from otbench.modules.tool_docs import Toolbox
from otbench.run import tracing


def run_rollouts(
    env: Environment, agent: Agent, toolbox: Toolbox, tasks: list[Any], *, num_threads: int = 1,
    description: str = "rollouts", progress: bool = True, on_finished: Callable[[Trajectory], None] | None = None,
) -> list[Trajectory]:
    """Trajectories in task order; raises :class:`~otbench.core.parallel.MapInterrupted` with the finished ones.
    ``on_finished`` sees each trajectory as it finishes (in the caller's thread).

    Each rollout is one MLflow trace of the run being traced (:mod:`otbench.run.tracing`), if any.
    """
    def traced_rollout(task: Any) -> Trajectory:
        with tracing.rollout() as span:
            trajectory = env.rollout(agent, toolbox, task)
            tracing.record_rollout(span, trajectory)
        return trajectory

    return parallel_map(traced_rollout, tasks, num_threads=num_threads, description=description, progress=progress,
                        on_result=on_finished)
