"""ToolObserver (OpaqueToolsBench): learn tool docs by watching the agent use the tools.

Online mode (tools unseen before test time, one toolset per task): run the agent, let the editor
read the attempt (question, calls, outputs or errors) and rewrite only the docs that need it,
repeat until the editor changes nothing or ``max_iterations``. A task whose docs did not change
is not run again: its last result stands.

Offline mode (one toolset shared by all tasks): run the agent on the whole train set, have the
editor analyse mini-batches of attempts with their outcome signal, merge the batch proposals by
consensus, and repeat ``max_iterations`` (K) times. Improved, the editor instead writes each
tool's doc from usage counts that code kept over all attempts so far. Where the shared tools take
arguments of their own (the environment's ``interchangeable_tools`` is False: Wild's BFCL functions,
unlike Chess's engines or BrowseComp's searches), a call cannot be sent to another tool, so calls are
neither spread nor replayed; tools are probed and their learned schemas shown as online, and the
editor reads each tool's own calls (what they took and returned) beside its usage counts.

The paper's method is :data:`~optimizers.settings.PAPER`. What makes it work with a small editor
is a set of named knobs, each an ablation of its own (:class:`~optimizers.settings.Improvements`),
all on in :data:`~optimizers.settings.IMPROVED`: tools are probed so they state their interface,
facts are read from their answers by code, a learned parameter schema is shown where the setting
hides one, the editor documents one tool at a time from that tool's facts, and an edit that makes
the next attempt fail more often is undone.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from functools import partial
from typing import Any

import dspy

from modules.editor import COMPARE_TASK, DocEditor, EditorExchange
from modules.program import ToolAgentProgram
from modules.tool_docs import DocumentedTool, Toolbox, tool_key
from optimizers.base import (
    DocOptimizer,
    IterationRecord,
    IterationTracker,
    apply_exchange,
    apply_updates,
    checkpoint_trajectory,
    restore_trajectory,
)
from optimizers.evidence import EvidenceBook, ToolEvidence
from optimizers.knobs import check
from optimizers.settings import IMPROVED, MODES, Improvements, ToolObserverKnobs
from optimizers.spread import SpreadCalls
from optimizers.usage import UsageBook
from otbench.envs.base import Environment
from otbench.errors import ConfigError
from otbench.parallel import parallel_map
from otbench.trajectory import Trajectory


def _failures(trajectory: Trajectory) -> int:
    """Failed calls of an attempt; a reply with no call at all counts as one."""
    return sum(not step.ok for step in trajectory.steps) if trajectory.steps else 1


class ToolObserver(DocOptimizer):
    """Teleprompter that improves a :class:`ToolAgentProgram`'s tool docs from its own attempts.

    ``oracle_feedback`` (online) shows the editor whether each attempt succeeded, as the
    authors' released code did; the paper's online mode gives the editor no gold information.
    ``mode`` defaults to how the environment learns; ``editor_lm`` is the editor's LM (default:
    ``dspy.settings.lm`` when it is called).
    """

    def __init__(
        self, *, env: Environment, editor: DocEditor | None = None, editor_lm: dspy.LM | None = None,
        mode: str | None = None, max_iterations: int | None = ToolObserverKnobs.iterations,
        batch_size: int = ToolObserverKnobs.batch_size, oracle_feedback: bool = False, improvements: Improvements | None = None,
        num_threads: int = 1, tracker: IterationTracker | None = None, progress: bool = True,
    ) -> None:
        super().__init__(env=env, num_threads=num_threads, tracker=tracker, progress=progress)
        mode = mode or env.learning
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {MODES}, got {mode!r}")
        self.improvements = IMPROVED if improvements is None else improvements
        self.editor = editor or DocEditor()
        if editor_lm is not None:
            self.editor.lm = editor_lm
        self.mode = mode
        check(ToolObserverKnobs(max_iterations, batch_size))
        self.max_iterations = max_iterations if max_iterations is not None else (10 if mode == "online" else 3)
        self.batch_size = batch_size
        self.oracle_feedback = oracle_feedback

    @property
    def evaluates_start_docs(self) -> bool:  # type: ignore[override]
        """The first step scores the starting docs, unless probing already showed a learned schema."""
        return not (self.improvements.probe and self.improvements.learned_schema)

    def _optimize(self, program: ToolAgentProgram, trainset: list[Any], resume: dict[str, Any]) -> None:
        if self.mode == "online":
            self._online(program, trainset, resume)
        else:
            self._offline(program, trainset, resume)

    def _lms(self, program: ToolAgentProgram) -> dict[str, Any]:
        return {**super()._lms(program), "editor": self.editor.lm or dspy.settings.lm}

    # -- online ----------------------------------------------------------------------------------
    def _online(self, student: ToolAgentProgram, tasks: list[Any], resume: dict[str, Any]) -> None:
        knobs = self.improvements
        by_id = {task.id: task for task in tasks}
        latest: dict[str, Trajectory] = {t["task_id"]: restore_trajectory(t) for t in resume.get("latest", [])}
        converged: set[str] = set(resume.get("converged", []))
        self.editor_rounds = dict(resume.get("editor_rounds", {}))
        to_run = list(resume.get("to_run", by_id))
        book = EvidenceBook.from_dict(resume.get("evidence", {}))
        described: dict[str, str] = dict(resume.get("described", {}))  # tool key -> the facts its doc was written from
        undo: dict[str, list[dict[str, Any]]] = dict(resume.get("undo", {}))  # task -> toolset docs before its edit
        if knobs.probe and not resume:
            self._learn_interfaces(student.toolbox, [by_id[i] for i in to_run], book, teach=knobs.learned_schema)
        for step in range(resume.get("next_step", 0), self.max_iterations + 1):
            ran = self._rollouts(student, [by_id[i] for i in to_run], f"step {step}: agent")
            docs_evaluated = student.toolbox.deepcopy()
            for trajectory in ran:
                names = {tool.name for tool in student.toolbox.toolset(trajectory.toolset)}
                book.add(trajectory.toolset, trajectory.steps, names)
                previous = latest.get(trajectory.task_id)
                if (knobs.accept_check and previous is not None and trajectory.task_id in undo
                        and _failures(trajectory) > _failures(previous)):
                    _restore(student.toolbox, trajectory.toolset, undo.pop(trajectory.task_id))
                    converged.add(trajectory.task_id)  # the edit made things worse: the earlier docs and result stand
                    continue
                latest[trajectory.task_id] = trajectory
            metrics = dict(self.env.summarise([latest[i] for i in by_id]))
            editable = [latest[i] for i in by_id if i not in converged] if step < self.max_iterations else []
            exchanges = parallel_map(
                lambda trajectory: self._edit(student.toolbox, trajectory, book, described),
                editable, num_threads=self.num_threads, description=f"step {step}: editor", progress=self.progress,
            )
            to_run = []
            for trajectory, asked in zip(editable, exchanges, strict=True):
                self.editor_rounds[trajectory.task_id] = self.editor_rounds.get(trajectory.task_id, 0) + 1
                before = [tool.to_dict() for tool in student.toolbox.toolset(trajectory.toolset)]
                changed = sum(apply_exchange(student.toolbox, trajectory.toolset, exchange) for exchange in asked)
                if knobs.learned_schema:
                    changed += book.teach(student.toolbox, trajectory.toolset)
                if changed:
                    to_run.append(trajectory.task_id)
                    undo[trajectory.task_id] = before
                else:
                    converged.add(trajectory.task_id)
            metrics.update({"docs_changed": float(len(to_run)), "converged": float(len(converged)),
                            "tasks_run": float(len(ran))})
            checkpoint = {"mode": "online", "next_step": step + 1, "to_run": to_run, "converged": sorted(converged),
                          "editor_rounds": self.editor_rounds, "docs": student.toolbox.to_json(),
                          "latest": [checkpoint_trajectory(latest[i]) for i in by_id],
                          "evidence": book.to_dict(), "described": described, "undo": undo}
            flat = [exchange for asked in exchanges for exchange in asked]
            self.tracker.log_iteration(IterationRecord(step, metrics, docs_evaluated, ran, flat, checkpoint))
            if not to_run:
                break
        self.final_trajectories = [latest[i] for i in by_id]

    def _edit(self, toolbox: Toolbox, trajectory: Trajectory, book: EvidenceBook,
              described: dict[str, str]) -> list[EditorExchange]:
        """The editor's proposals for one attempt: one call for the toolset (paper), or one per tool."""
        tools = toolbox.toolset(trajectory.toolset)
        if not self.improvements.per_tool:
            toolset_facts = ({tool.name: book.of(trajectory.toolset, tool.name).facts() for tool in tools}
                             if self.improvements.facts else None)
            return [self.editor.revise(tools, trajectory, show_outcome=self.oracle_feedback, facts=toolset_facts)]
        called = {step.call.name for step in trajectory.steps}
        failed = {step.call.name for step in trajectory.steps if not step.ok}
        exchanges = []
        for tool in tools:
            evidence, key = book.of(trajectory.toolset, tool.name), tool_key(trajectory.toolset, tool.name)
            facts = evidence.facts()
            first = tool.name in called and key not in described
            news = tool.name in failed and described.get(key) != "\n".join(facts)
            if not (not tool.description or first or news):
                continue  # a doc is rewritten only when blank, first used, or when it failed on new evidence
            described[key] = "\n".join(facts)
            requests = [trajectory.question] if tool.name in called else []
            # without the facts knob the editor gets the calls as they happened, not what code read from them
            lines = facts if self.improvements.facts else evidence.call_lines()
            exchanges.append(self.editor.describe(tool, lines, requests))
        return exchanges

    # -- offline ---------------------------------------------------------------------------------
    def _offline(self, student: ToolAgentProgram, tasks: list[Any], resume: dict[str, Any]) -> None:
        knobs = self.improvements
        usage = {toolset: UsageBook.from_dict(data) for toolset, data in resume.get("usage", {}).items()}
        seen = EvidenceBook.from_dict(resume.get("evidence", {}))
        shared = getattr(self.env, "interchangeable_tools", True)
        if knobs.probe and not shared and not resume:
            self._learn_interfaces(student.toolbox, tasks, seen, teach=knobs.learned_schema)
        explorer = student.agent
        if knobs.spread_calls and shared:
            explorer = SpreadCalls(student.agent, {tool.name for toolset in self._toolsets(tasks)
                                                   for tool in student.toolbox.toolset(toolset)})
        for step in range(resume.get("next_step", 0), self.max_iterations):
            trajectories = self._rollouts(student, tasks, f"iteration {step + 1}: explore", agent=explorer)
            metrics = dict(self.env.summarise(trajectories))
            docs_explored = student.toolbox.deepcopy()
            exchanges: list[EditorExchange] = []
            changed = replayed = 0
            by_toolset: dict[str, list[Trajectory]] = defaultdict(list)
            for trajectory in trajectories:
                by_toolset[trajectory.toolset].append(trajectory)
            for toolset, members in by_toolset.items():
                tools = student.toolbox.toolset(toolset)
                names = {tool.name for tool in tools}
                book = usage.setdefault(toolset, UsageBook())
                book.add(members, names)
                for trajectory in members:
                    seen.add(toolset, trajectory.steps, names)
                if knobs.replay_calls and shared:
                    repeats = book.replay(partial(self.env.execute, toolset),
                                          (step for trajectory in members for step in trajectory.steps), names)
                    seen.add(toolset, repeats, names)
                    replayed += len(repeats)
                if knobs.per_tool:
                    asked = self._describe_used(tools, book, seen.tools.get(toolset, {}), f"iteration {step + 1}",
                                                own_arguments=not shared)
                    exchanges.extend(asked)
                    if knobs.drop_contradicted or knobs.cite_facts:
                        asked = [_checked_against_counts(exchange, book, knobs) for exchange in asked]
                    changed += sum(apply_exchange(student.toolbox, toolset, exchange) for exchange in asked)
                    if knobs.learned_schema and not shared:
                        changed += seen.teach(student.toolbox, toolset)
                    continue
                facts = {tool.name: book.facts(tool.name) for tool in tools} if knobs.facts else None
                batches = [members[i : i + self.batch_size] for i in range(0, len(members), self.batch_size)]
                analyses = parallel_map(partial(self.editor.analyse_batch, tools, facts=facts), batches,
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
            if knobs.replay_calls and shared:
                metrics["replayed_calls"] = float(replayed)
            checkpoint = {"mode": "offline", "next_step": step + 1, "docs": student.toolbox.to_json(),
                          "usage": {toolset: book.to_dict() for toolset, book in usage.items()},
                          "evidence": seen.to_dict()}
            self.tracker.log_iteration(IterationRecord(step, metrics, docs_explored, trajectories, exchanges, checkpoint))
            self.final_trajectories = trajectories


    def _describe_used(self, tools: list[DocumentedTool], book: UsageBook, calls: dict[str, ToolEvidence],
                       label: str, *, own_arguments: bool = False) -> list[EditorExchange]:
        """One editor call per tool the agent used: from its usage counts, or (without the facts knob)
        from its calls as they happened. Tools that take ``own_arguments`` are described as one tool
        (what its calls showed of its interface and results, then its usage counts), not among similar ones."""
        def describe(tool: DocumentedTool) -> EditorExchange:
            if own_arguments:
                evidence = calls[tool.name]
                lines = [*(evidence.facts() if self.improvements.facts else evidence.call_lines()),
                         *book.facts(tool.name)]
                return self.editor.describe(tool, lines, None)
            lines = book.facts(tool.name) if self.improvements.facts else calls[tool.name].call_lines()
            return self.editor.describe(tool, lines, None, task=COMPARE_TASK, show_current=False)

        return parallel_map(describe, [tool for tool in tools if tool.name in book.tools],
                            num_threads=self.num_threads, description=f"{label}: editor", progress=self.progress)


def _checked_against_counts(exchange: EditorExchange, book: UsageBook, knobs: Improvements) -> EditorExchange:
    """The exchange with each proposed description checked against the usage counts. With ``drop_contradicted``
    the sentences the counts contradict go; with ``cite_facts`` the description opens with where its tool is
    the best or worst choice and closes with where its results come from: what decides the agent's choice
    comes first, where a small model reading a list of tools attends most, and the editor's prose cannot
    bury it. A description left empty is not proposed (the tool keeps its current one)."""
    updates = {}
    for name, text in exchange.updates.items():
        if knobs.drop_contradicted:
            text = book.without_contradictions(name, text)
        if knobs.cite_facts:
            text = " ".join(part for part in (book.standing(name), text, book.sources(name)) if part)
        if text:
            updates[name] = text
    return replace(exchange, updates=updates)


def _restore(toolbox: Toolbox, toolset: str, docs: list[dict[str, Any]]) -> None:
    """Put a toolset's docs back as they were (``DocumentedTool.to_dict`` records)."""
    for data in docs:
        toolbox.tools[tool_key(toolset, data["name"])] = DocumentedTool.from_dict(data)
