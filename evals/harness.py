"""Run an agent over tasks of an environment, concurrently, with a progress bar."""

from __future__ import annotations

from typing import Any

from modules.tool_docs import Toolbox
from otbench.envs.base import Agent, Environment
from otbench.parallel import parallel_map
from otbench.trajectory import Trajectory


def run_rollouts(
    env: Environment, agent: Agent, toolbox: Toolbox, tasks: list[Any], *, num_threads: int = 1,
    description: str = "rollouts", progress: bool = True,
) -> list[Trajectory]:
    """Trajectories in task order; raises :class:`~otbench.parallel.MapInterrupted` with the finished ones."""
    return parallel_map(lambda task: env.rollout(agent, toolbox, task), tasks, num_threads=num_threads,
                        description=description, progress=progress)
