"""The one small interface through which optimizers and the evaluation harness see environments."""

from __future__ import annotations

from typing import Any, Protocol

from modules.tool_docs import Toolbox
from otbench.trajectory import Trajectory


class Agent(Protocol):
    """Anything an environment can run on a task (the LLM agent or a reference agent)."""

    def __call__(self, **kwargs: Any) -> Any: ...


class Environment(Protocol):
    """An environment: tasks, their initial and gold docs, and a way to run an agent on a task."""

    name: str
    primary_metric: str

    def tasks(self, split: str = "test") -> list[Any]:
        """Tasks of a split (BFCL has only ``test``: it learns per test, at test time)."""

    def toolbox(self, setting: str | None = None) -> Toolbox:
        """Fresh docs for every task's toolset under ``setting`` (default: the env's own)."""

    def rollout(self, agent: Agent, toolbox: Toolbox, task: Any) -> Trajectory:
        """Run ``agent`` on ``task`` with ``toolbox``'s current docs, execute its calls, score it."""

    def summarise(self, trajectories: list[Trajectory]) -> dict[str, float]:
        """Aggregate metrics (means) over trajectories, with ``n``."""


def sample_tasks(tasks: list[Any], limit: int | None, seed: int) -> list[Any]:
    """A seeded subset of ``limit`` tasks in their original order (all of them without a limit).

    A seeded sample instead of the first N keeps small runs representative (BFCL's file order
    puts every simple test before every multiple-function test); every command uses this
    function, so runs with equal ``--limit`` and ``--seed`` compare on the same tasks.
    """
    import random

    if limit is None or limit >= len(tasks):
        return list(tasks)
    chosen = set(random.Random(seed).sample(range(len(tasks)), limit))
    return [task for index, task in enumerate(tasks) if index in chosen]
