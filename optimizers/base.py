"""What every documentation optimizer shares: the iteration record, the tracker hook, doc edits.

Optimizers see environments only through :class:`otbench.envs.base.Environment` (tasks,
toolbox, rollout, summarise) and report each iteration to an :class:`IterationTracker`, which the
command line backs with MLflow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dspy.teleprompt import Teleprompter

from evals.harness import run_rollouts
from modules.program import ToolAgentProgram
from modules.tool_docs import Toolbox
from optimizers.evidence import EvidenceBook, probe_toolset
from otbench.envs.base import Environment
from otbench.trajectory import Trajectory


class Exchange(Protocol):
    """One LLM exchange of an optimizer (editor, writer, explorer), kept as a run artefact."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass
class IterationRecord:
    """One optimizer iteration: its step metrics, the docs it evaluated, what it saw and proposed.

    ``checkpoint`` is everything needed to continue after this iteration (``--resume``).
    """

    step: int
    metrics: dict[str, float]
    toolbox: Toolbox
    trajectories: list[Trajectory] = field(default_factory=list)
    exchanges: Sequence[Exchange] = field(default_factory=list)
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


def apply_exchange(toolbox: Toolbox, toolset: str, exchange: Any) -> int:
    """Apply an editor exchange's descriptions and parameter meanings; returns how many tools changed."""
    meanings: dict[str, dict[str, str]] = getattr(exchange, "parameter_updates", {})
    changed = 0
    for name in dict.fromkeys([*exchange.updates, *meanings]):
        tool = toolbox.get(toolset, name)
        if tool is None:
            continue
        before = tool.to_dict()
        tool.with_docs(description=exchange.updates.get(name), parameter_descriptions=meanings.get(name))
        changed += tool.to_dict() != before
    return changed


def checkpoint_trajectory(trajectory: Trajectory) -> dict[str, Any]:
    """The part of a trajectory a resumed run needs: which task, its metrics and outcome."""
    return {"task_id": trajectory.task_id, "toolset": trajectory.toolset, "metrics": trajectory.metrics,
            "success": trajectory.success}


def restore_trajectory(data: dict[str, Any]) -> Trajectory:
    return Trajectory(task_id=data["task_id"], toolset=data["toolset"], question="", metrics=data["metrics"],
                      success=data["success"])


class DocOptimizer(Teleprompter):
    """What the documentation teleprompters share: the environment, the tracker, concurrency.

    ``compile(student, trainset=..., resume=...)`` improves ``student.toolbox`` in place and
    returns the student. Afterwards ``final_trajectories`` are the train tasks run with the final
    docs (for online environments, the result), and ``editor_rounds`` counts editor rounds per
    task when the optimizer works per task. ``evaluates_start_docs`` says whether its first
    logged step scores the starting docs (a "before" figure comes free) or already new ones.
    """

    evaluates_start_docs = False

    def __init__(self, *, env: Environment, num_threads: int = 1, tracker: IterationTracker | None = None,
                 progress: bool = True, probe: bool = False) -> None:
        super().__init__()
        self.env = env
        self.probe = probe
        self.num_threads = num_threads
        self.tracker = tracker or NoTracking()
        self.progress = progress
        self.final_trajectories: list[Trajectory] = []
        self.editor_rounds: dict[str, int] = {}

    def _rollouts(self, student: ToolAgentProgram, tasks: list[Any], description: str) -> list[Trajectory]:
        return run_rollouts(self.env, student.agent, student.toolbox, tasks, num_threads=self.num_threads,
                            description=description, progress=self.progress)

    def _learn_interfaces(self, toolbox: Toolbox, tasks: list[Any], book: EvidenceBook | None = None, *,
                          teach: bool = True) -> EvidenceBook:
        """Probe the tools of the tasks' toolsets whose parameters are not shown (they name the required
        ones when called with none) and, with ``teach``, show the schema that taught as learned docs.

        Not specific to one optimizer: ToolObserver's ``probe`` knob, and ``probe=True`` for the others.
        """
        book = book if book is not None else EvidenceBook()
        for toolset in self._toolsets(tasks):
            names = {tool.name for tool in toolbox.toolset(toolset)}
            book.add(toolset, probe_toolset(self.env, toolbox, toolset), names)
            if teach:
                book.teach(toolbox, toolset)
        return book

    def _toolsets(self, tasks: list[Any]) -> list[str]:
        """The toolsets the tasks use, each once, in task order."""
        return list(dict.fromkeys(self.env.toolset_of(task) for task in tasks))
