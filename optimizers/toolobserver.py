"""ToolObserver (OpaqueToolsBench): learn tool docs by watching the agent use the tools.

Online mode (tools unseen before test time, one toolset per task): run the agent, let the editor
read the attempt (question, calls, outputs or errors) and rewrite only the docs that need it,
repeat until the editor changes nothing or ``max_iterations``. A task whose docs did not change
is not run again: its last result stands.

Offline mode (one toolset shared by all tasks): run the agent on the whole train set, have the
editor analyse mini-batches of attempts with their outcome signal, merge the batch proposals by
consensus, and repeat ``max_iterations`` (K) times.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from modules.editor import DocEditor, EditorExchange
from modules.program import ToolAgentProgram
from optimizers.base import (DocOptimizer, IterationRecord, IterationTracker, apply_updates, checkpoint_trajectory,
                             restore_trajectory)
from otbench.envs.base import Environment
from otbench.parallel import parallel_map
from otbench.trajectory import Trajectory

MODES = ("online", "offline")


class ToolObserver(DocOptimizer):
    """Teleprompter that improves a :class:`ToolAgentProgram`'s tool docs from its own attempts.

    ``oracle_feedback`` (online) shows the editor whether each attempt succeeded, as the
    authors' released code did; the paper's online mode gives the editor no gold information.
    """

    evaluates_start_docs = True

    def __init__(
        self, *, env: Environment, editor: DocEditor, mode: str = "online", max_iterations: int | None = None,
        batch_size: int = 10, oracle_feedback: bool = False, num_threads: int = 1,
        tracker: IterationTracker | None = None, progress: bool = True,
    ) -> None:
        super().__init__(env=env, num_threads=num_threads, tracker=tracker, progress=progress)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.editor = editor
        self.mode = mode
        self.max_iterations = max_iterations if max_iterations is not None else (10 if mode == "online" else 3)
        self.batch_size = batch_size
        self.oracle_feedback = oracle_feedback

    def compile(
        self, student: ToolAgentProgram, *, trainset: list[Any], teacher: Any = None, valset: list[Any] | None = None,
        resume: dict[str, Any] | None = None, **kwargs: Any,
    ) -> ToolAgentProgram:
        """Improve ``student.toolbox`` in place and return the student.

        ``resume`` is the checkpoint of the last finished iteration of an interrupted run.
        """
        if self.mode == "online":
            self._online(student, trainset, resume or {})
        else:
            self._offline(student, trainset, resume or {})
        return student

    # -- online ----------------------------------------------------------------------------------
    def _online(self, student: ToolAgentProgram, tasks: list[Any], resume: dict[str, Any]) -> None:
        by_id = {task.id: task for task in tasks}
        latest: dict[str, Trajectory] = {t["task_id"]: restore_trajectory(t) for t in resume.get("latest", [])}
        converged: set[str] = set(resume.get("converged", []))
        self.editor_rounds = dict(resume.get("editor_rounds", {}))
        to_run = list(resume.get("to_run", by_id))
        for step in range(resume.get("next_step", 0), self.max_iterations + 1):
            ran = self._rollouts(student, [by_id[i] for i in to_run], f"step {step}: agent")
            latest.update({t.task_id: t for t in ran})
            metrics = dict(self.env.summarise([latest[i] for i in by_id]))
            editable = [latest[i] for i in by_id if i not in converged] if step < self.max_iterations else []
            exchanges = parallel_map(
                lambda trajectory: self.editor.revise(student.toolbox.toolset(trajectory.toolset), trajectory,
                                                      show_outcome=self.oracle_feedback),
                editable, num_threads=self.num_threads, description=f"step {step}: editor", progress=self.progress,
            )
            docs_evaluated = student.toolbox.deepcopy()
            to_run = []
            for trajectory, exchange in zip(editable, exchanges, strict=True):
                self.editor_rounds[trajectory.task_id] = self.editor_rounds.get(trajectory.task_id, 0) + 1
                if apply_updates(student.toolbox, trajectory.toolset, exchange.updates):
                    to_run.append(trajectory.task_id)
                else:
                    converged.add(trajectory.task_id)
            metrics.update({"docs_changed": float(len(to_run)), "converged": float(len(converged)),
                            "tasks_run": float(len(ran))})
            checkpoint = {"mode": "online", "next_step": step + 1, "to_run": to_run, "converged": sorted(converged),
                          "editor_rounds": self.editor_rounds, "docs": student.toolbox.to_json(),
                          "latest": [checkpoint_trajectory(latest[i]) for i in by_id]}
            self.tracker.log_iteration(IterationRecord(step, metrics, docs_evaluated, ran, exchanges, checkpoint))
            if not to_run:
                break
        self.final_trajectories = [latest[i] for i in by_id]

    # -- offline ---------------------------------------------------------------------------------
    def _offline(self, student: ToolAgentProgram, tasks: list[Any], resume: dict[str, Any]) -> None:
        for step in range(resume.get("next_step", 0), self.max_iterations):
            trajectories = self._rollouts(student, tasks, f"iteration {step + 1}: explore")
            metrics = dict(self.env.summarise(trajectories))
            docs_explored = student.toolbox.deepcopy()
            exchanges: list[EditorExchange] = []
            changed = 0
            by_toolset: dict[str, list[Trajectory]] = defaultdict(list)
            for trajectory in trajectories:
                by_toolset[trajectory.toolset].append(trajectory)
            for toolset, members in by_toolset.items():
                tools = student.toolbox.toolset(toolset)
                batches = [members[i : i + self.batch_size] for i in range(0, len(members), self.batch_size)]
                analyses = parallel_map(lambda batch: self.editor.analyse_batch(tools, batch), batches,
                                        num_threads=self.num_threads, description=f"iteration {step + 1}: batches",
                                        progress=self.progress)
                exchanges.extend(analyses)
                proposals = [analysis.updates for analysis in analyses if analysis.updates]
                if len(proposals) > 1:
                    merged = self.editor.merge(tools, proposals)
                    exchanges.append(merged)
                    consensus = merged.updates
                else:  # one batch: nothing to reconcile, no merge call to pay for
                    consensus = proposals[0] if proposals else {}
                changed += apply_updates(student.toolbox, toolset, consensus)
            metrics["docs_changed"] = float(changed)
            checkpoint = {"mode": "offline", "next_step": step + 1, "docs": student.toolbox.to_json()}
            self.tracker.log_iteration(IterationRecord(step, metrics, docs_explored, trajectories, exchanges, checkpoint))
            self.final_trajectories = trajectories
