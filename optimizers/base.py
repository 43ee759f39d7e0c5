"""What every documentation optimizer shares: the iteration record, the tracker hook, doc edits.

Optimizers see environments only through :class:`otbench.envs.base.Environment` (tasks,
toolbox, rollout, summarise) and report each iteration to an :class:`IterationTracker`, which the
command line backs with MLflow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from modules.editor import EditorExchange
from modules.tool_docs import Toolbox
from otbench.trajectory import Trajectory


@dataclass
class IterationRecord:
    """One optimizer iteration: its step metrics, the docs it evaluated, what it saw and proposed.

    ``checkpoint`` is everything needed to continue after this iteration (``--resume``).
    """

    step: int
    metrics: dict[str, float]
    toolbox: Toolbox
    trajectories: list[Trajectory] = field(default_factory=list)
    exchanges: list[EditorExchange] = field(default_factory=list)
    checkpoint: dict[str, Any] = field(default_factory=dict)


class IterationTracker(Protocol):
    def log_iteration(self, record: IterationRecord) -> None: ...


class NoTracking:
    """Tracker for library use without MLflow."""

    def log_iteration(self, record: IterationRecord) -> None:
        return None


def apply_updates(toolbox: Toolbox, toolset: str, updates: dict[str, str]) -> int:
    """Set new descriptions; returns how many actually changed (an equal rewrite is no change)."""
    changed = 0
    for name, description in updates.items():
        tool = toolbox.get(toolset, name)
        if tool is not None and tool.description != description:
            tool.with_docs(description=description)
            changed += 1
    return changed


def checkpoint_trajectory(trajectory: Trajectory) -> dict[str, Any]:
    """The part of a trajectory a resumed run needs: which task, its metrics and outcome."""
    return {"task_id": trajectory.task_id, "toolset": trajectory.toolset, "metrics": trajectory.metrics,
            "success": trajectory.success}


def restore_trajectory(data: dict[str, Any]) -> Trajectory:
    return Trajectory(task_id=data["task_id"], toolset=data["toolset"], question="", metrics=data["metrics"],
                      success=data["success"])
