"""ToolObserver (OpaqueToolsBench): learn tool docs by watching the agent use the tools.

Online mode (tools unseen before test time, one toolset per task): run the agent, let the editor
read the attempt (question, calls, outputs or errors) and rewrite only the docs that need it,
repeat until the editor changes nothing or ``max_iterations``. A task whose docs did not change
is not run again: its last result stands.

Offline mode (one toolset shared by all tasks): run the agent on the whole train set, have the
editor analyse mini-batches of attempts with their outcome signal, merge the batch proposals by
consensus, and repeat ``max_iterations`` (K) times. Improved, the editor instead writes each
tool's doc from usage counts that code kept over all attempts so far.

The paper's method is :data:`~otbench.optimizers.toolobserver.knobs.PAPER`. What makes it work with a small editor
is a set of named knobs, each an ablation of its own (:class:`~otbench.optimizers.toolobserver.knobs.Improvements`),
all on in :data:`~otbench.optimizers.toolobserver.knobs.IMPROVED` but the opt-in ones: tools are probed so they
state their interface, facts are read from their answers by code, a learned parameter schema is shown where the setting
hides one, the editor documents one tool at a time from that tool's facts, and an edit that makes
the next attempt fail more often is undone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import Any

import dspy

from otbench.core.parallel import parallel_map
from otbench.core.trajectory import Trajectory
from otbench.envs.base import Environment, task_key
from otbench.errors import ConfigError
from otbench.evals.invented import not_for_sentence, supported_text
from otbench.modules.editor import COMPARE_TASK, DocEditor, EditorExchange
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import DocumentedTool, Toolbox, tool_key
from otbench.optimizers.base import (
    DocOptimizer,
    IterationRecord,
    IterationTracker,
    apply_exchange,
    apply_updates,
    checkpoint_trajectory,
    restore_trajectory,
)
from otbench.optimizers.evidence import EvidenceBook, ToolEvidence, render_call
from otbench.optimizers.experiments import Experiments, state_experiments
from otbench.optimizers.knobs import MODES, check
from otbench.optimizers.repairs import Contrasts, Repairs, state_repairs
from otbench.optimizers.request_values import OffRequest, calls_off_request, refused_off_request
from otbench.optimizers.rivals import Replays, rivals
from otbench.optimizers.toolobserver.knobs import IMPROVED, ITERATIONS, Improvements, ToolObserverKnobs
from otbench.optimizers.toolobserver.spread import SpreadCalls
from otbench.optimizers.toolobserver.usage import UsageBook
from otbench.optimizers.toolobserver.varied import FailedCalls, VariedAgent


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
        token_budget: int | None = None, coverage: bool = False, worded_errors: bool = True,
        request_scales: bool = False, gate: bool = True, keep_evidence: bool = True,
    ) -> None:
        super().__init__(env=env, num_threads=num_threads, tracker=tracker, progress=progress,
                         token_budget=token_budget, coverage=coverage, worded_errors=worded_errors,
                         request_scales=request_scales, gate=gate, keep_evidence=keep_evidence)
        mode = mode or env.learning
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {MODES}, got {mode!r}")
        self.improvements = IMPROVED if improvements is None else improvements
        self.editor = editor or DocEditor()
        if editor_lm is not None:
            self.editor.lm = editor_lm
        self.mode = mode
        check(ToolObserverKnobs(max_iterations, batch_size))
        self.max_iterations = max_iterations if max_iterations is not None else ITERATIONS[mode]
        self.batch_size = batch_size
        self.oracle_feedback = oracle_feedback
        self._covered: dict[str, int] = {}
        self.start_changed: bool | None = None
        """Whether probing changed the starting docs before the first step (None: no compile yet)."""

    @property
    def evaluates_start_docs(self) -> bool:  # type: ignore[override]
        """The first step scores the starting docs, unless probing changed them (a learned schema shown): known once
        a compile has run; before, as the knobs let it be."""
        if self.coverage:
            return False  # its first steps are the coverage pass's
        if self.start_changed is not None:
            return not self.start_changed
        return not (self.improvements.probe and self.improvements.learned_schema) or self._start_docs_first

    def _optimize(self, program: ToolAgentProgram, trainset: list[Any], resume: dict[str, Any]) -> None:
        # the learned program's agent reads its docs as they were learned
        online = self.mode == "online"
        if self.improvements.compact_tools and online and hasattr(program.agent, "tool_format"):
            program.agent.tool_format = "terse" if self.improvements.terse_tools else "signature"
        if self.improvements.request_first and online and hasattr(program.agent, "request_first"):
            program.agent.request_first = True
        if self.mode == "online":
            self._online(program, trainset, resume)
        else:
            self._offline(program, trainset, resume)

    def _lms(self, program: ToolAgentProgram) -> dict[str, Any]:
        return {**super()._lms(program), "editor": self.editor.lm or dspy.settings.lm}

    # -- what the run may know ------------------------------------------------------------------------
    @property
    def _outcome_known(self) -> bool:
        """Whether attempts' outcomes may be read: offline on train tasks (their metric is the learning signal),
        online only with ``oracle_feedback`` (test-time learning has no gold)."""
        return self.mode == "offline" or self.oracle_feedback

    @property
    def _judges(self) -> bool:
        """Whether repeats on rivals are played as attempts and judged by the task's metric."""
        return self.improvements.judge_replays and bool(getattr(self.env, "one_reply", False)) and self._outcome_known

    @property
    def _start_docs_first(self) -> bool:
        """Whether the first attempts are made with the starting docs, what probing found shown only after them
        (``start_docs_first``, online)."""
        return self.improvements.start_docs_first and self.mode == "online"

    def _probe_first(self, toolbox: Toolbox, tasks: list[Any], book: EvidenceBook, *, resumed: bool) -> None:
        """Probe the tools before the first attempt (``probe``; a resumed run's evidence already holds it) and record
        whether that changed the starting docs (a learned schema shown), which says who scores them. With
        ``start_docs_first`` what the probes taught stays in the evidence until the first attempts are made."""
        self.start_changed = False
        if self.improvements.probe and not resumed:
            start = toolbox.to_json()
            teach = self.improvements.learned_schema and not self._start_docs_first
            self._learn_interfaces(toolbox, tasks, book, teach=teach)
            self.start_changed = toolbox.to_json() != start

    def _settled(self, trajectory: Trajectory, toolbox: Toolbox, replays: Replays) -> bool:
        """Nothing to learn from this attempt: it succeeded (outcome known); or every call it made worked, took its
        values from the request (``request_values``), and no tool sharing a called tool's interface answered the same
        arguments otherwise (the choice was not open)."""
        if self._outcome_known:
            return trajectory.success
        worked = bool(trajectory.steps) and all(step.ok for step in trajectory.steps)
        return (worked and not self._off_request(trajectory, toolbox)
                and not replays.ambiguous(trajectory.toolset, toolbox, trajectory.steps))

    def _off_request(self, trajectory: Trajectory, toolbox: Toolbox) -> list[OffRequest]:
        """The attempt's working calls that do not fit its request (``request_values``, online with no success bit:
        where the outcome is known, it says more)."""
        if not self.improvements.request_values or self._outcome_known:
            return []
        return calls_off_request(trajectory, _required_names(toolbox.toolset(trajectory.toolset)))

    def _refused_off_request(self, trajectory: Trajectory, toolbox: Toolbox) -> list[OffRequest]:
        """The attempt's refused calls that do not fit its request, where other tools could have served it
        (``refused_requests``, online with no success bit)."""
        tools = toolbox.toolset(trajectory.toolset)
        if not self.improvements.refused_requests or self._outcome_known or len(tools) < 2:
            return []
        return refused_off_request(trajectory, _required_names(tools))

    def _failures(self, trajectory: Trajectory, toolbox: Toolbox) -> int:
        """Failed calls of an attempt, a working call that did not fit its request counted as failed
        (``request_values``); a reply with no call at all counts as one."""
        if not trajectory.steps:
            return 1
        return sum(not step.ok for step in trajectory.steps) + len(self._off_request(trajectory, toolbox))

    def _repeat(self, toolbox: Toolbox, trajectory: Trajectory, task: Any, book: EvidenceBook, replays: Replays) -> int:
        """Repeat the attempt's working calls on their tools' rivals (judged where possible); returns how many."""
        names = {tool.name for tool in toolbox.toolset(trajectory.toolset)}
        if self._judges:
            judged = replays.judged(self.env, toolbox, task, trajectory)
            book.add_judged(trajectory.toolset, judged, names)
            return sum(item.repeat for item in judged)
        repeats = replays.outside(self.env, trajectory.toolset, toolbox, trajectory.steps)
        book.add(trajectory.toolset, repeats, names)
        return len(repeats)

    def _facts(self, evidence: ToolEvidence) -> list[str]:
        """What the editor is told of one tool from its calls: read by code (``facts``), or the calls as made."""
        if not self.improvements.facts:
            return evidence.call_lines()
        return evidence.facts() + evidence.outcome_lines()

    def _grounded(self, exchange: EditorExchange, tool: DocumentedTool, evidence: ToolEvidence,
                  tools: Iterable[str] = ()) -> EditorExchange:
        """The exchange without the sentences the tool's observed calls contradict (``grounded``)."""
        if not self.improvements.grounded:
            return exchange
        observed = evidence.observed(tool, tools)
        updates = {name: supported_text(text, observed) for name, text in exchange.updates.items()}
        meanings = {name: {parameter: kept for parameter, text in texts.items()
                           if (kept := supported_text(text, observed, parameter=parameter))}
                    for name, texts in exchange.parameter_updates.items()}
        return replace(exchange, updates={name: text for name, text in updates.items() if text},
                       parameter_updates={name: texts for name, texts in meanings.items() if texts})

    # -- online ----------------------------------------------------------------------------------
    def _online(self, student: ToolAgentProgram, tasks: list[Any], resume: dict[str, Any]) -> None:
        knobs = self.improvements
        by_id = {task_key(task): task for task in tasks}
        latest: dict[str, Trajectory] = {t["task_id"]: restore_trajectory(t) for t in resume.get("latest", [])}
        converged: set[str] = set(resume.get("converged", []))
        self.editor_rounds = dict(resume.get("editor_rounds", {}))
        to_run = list(resume.get("to_run", by_id))
        book = EvidenceBook.from_dict(resume.get("evidence", {}), runtime_errors=knobs.runtime_errors)
        replays = Replays.from_dict(resume.get("replays", {}))
        experiments = Experiments.from_dict(resume.get("experiments", {}))
        described: dict[str, str] = dict(resume.get("described", {}))  # tool key -> the facts its doc was written from
        undo: dict[str, list[dict[str, Any]]] = dict(resume.get("undo", {}))  # task -> toolset docs before its edit
        tried = FailedCalls.from_dict(resume.get("tried", {}))
        self._probe_first(student.toolbox, [by_id[i] for i in to_run], book, resumed=bool(resume))
        for step in range(resume.get("next_step", 0), self.max_iterations + 1):
            one_reply = bool(getattr(self.env, "one_reply", False))
            varies, asides = knobs.vary_repeats and one_reply, knobs.set_aside_misfits and one_reply
            aside = self._set_aside(student, [latest[i] for i in to_run if i in latest], tried) if asides else None
            ran = self._rollouts(student, [by_id[i] for i in to_run], f"step {step}: agent", agent=aside)
            if varies:
                ran = self._vary_repeats(student, ran, tried, by_id, step)
            docs_evaluated = student.toolbox.deepcopy()
            repeated = 0
            for trajectory in ran:
                tools = {tool.name: tool for tool in student.toolbox.toolset(trajectory.toolset)}
                book.add(trajectory.toolset, trajectory.steps, set(tools))
                if varies or asides:  # what only vary_repeats and set_aside_misfits read
                    off_request = {off.step for off in self._off_request(trajectory, student.toolbox)}
                    refused = {off.step for off in self._refused_off_request(trajectory, student.toolbox)}
                    tried.note(trajectory, off_request, {index for index in off_request | refused
                                                         if _well_formed(trajectory.steps[index], tools)})
                previous = latest.get(trajectory.task_id)
                if (knobs.accept_check and previous is not None and trajectory.task_id in undo
                        and self._failures(trajectory, student.toolbox) > self._failures(previous, student.toolbox)):
                    _restore(student.toolbox, trajectory.toolset, undo.pop(trajectory.task_id))
                    converged.add(trajectory.task_id)  # the edit made things worse: the earlier docs and result stand
                    continue
                latest[trajectory.task_id] = trajectory
                if knobs.replay_calls:
                    repeated += self._repeat(student.toolbox, trajectory, by_id[trajectory.task_id], book, replays)
            if knobs.experiment:
                tried_here = experiments.run(self.env, student.toolbox, [(by_id[t.task_id], t) for t in ran], book,
                                             judge=self._judges)
            metrics = dict(self.env.summarise([latest[i] for i in by_id]))
            learning = step < self.max_iterations and not self.learning_budget.exhausted()
            editable = [latest[i] for i in by_id if i not in converged] if learning else []
            if knobs.settle:
                settled = [t for t in editable if self._settled(t, student.toolbox, replays)]
                if step == 0 and self._start_docs_first and not self._outcome_known:  # probing's news was withheld
                    settled = [t for t in settled if not self._news_for(student.toolbox, t, book)]
                converged.update(t.task_id for t in settled)
                editable = [t for t in editable if t.task_id not in converged]
            # code_first: what code states from the attempts is written first; the editor is asked only where it
            # had nothing new (a task whose toolset code rewrote is attempted again with that alone)
            written: dict[str, list[dict[str, Any]]] = {}
            if knobs.code_first:
                starting = {t.task_id: (t.toolset, _docs_of(student.toolbox, t.toolset)) for t in editable}
                for trajectory in editable:
                    self._write_by_code(student.toolbox, trajectory, book)
                written = {task: docs for task, (toolset, docs) in starting.items()
                           if _docs_of(student.toolbox, toolset) != docs}
            asking = [trajectory for trajectory in editable if trajectory.task_id not in written]
            asked_of = dict(zip([trajectory.task_id for trajectory in asking], parallel_map(
                lambda trajectory: self._edit(student.toolbox, trajectory, book, described),
                asking, num_threads=self.num_threads, description=f"step {step}: editor", progress=self.progress,
            ), strict=True))
            exchanges = [asked_of.get(trajectory.task_id, []) for trajectory in editable]
            to_run = []
            for trajectory, asked in zip(editable, exchanges, strict=True):
                self.editor_rounds[trajectory.task_id] = self.editor_rounds.get(trajectory.task_id, 0) + 1
                if trajectory.task_id in written:
                    to_run.append(trajectory.task_id)
                    undo[trajectory.task_id] = written[trajectory.task_id]
                    continue
                before = _docs_of(student.toolbox, trajectory.toolset)
                changed = sum(apply_exchange(student.toolbox, trajectory.toolset, exchange) for exchange in asked)
                changed += self._write_by_code(student.toolbox, trajectory, book)
                if changed:
                    to_run.append(trajectory.task_id)
                    undo[trajectory.task_id] = before
                else:
                    converged.add(trajectory.task_id)
            metrics.update({"docs_changed": float(len(to_run)), "converged": float(len(converged)),
                            "tasks_run": float(len(ran))})
            if knobs.replay_calls:
                metrics["replayed_calls"] = float(repeated)
            if knobs.experiment:
                metrics["experiment_calls"] = float(len(tried_here))
            checkpoint = {"mode": "online", "next_step": step + 1, "to_run": to_run, "converged": sorted(converged),
                          "editor_rounds": self.editor_rounds, "docs": student.toolbox.to_json(),
                          "latest": [checkpoint_trajectory(latest[i]) for i in by_id],
                          "evidence": book.to_dict(), "described": described, "undo": undo,
                          "replays": replays.to_dict(), "tried": tried.to_dict(), "experiments": experiments.to_dict()}
            flat = [exchange for asked in exchanges for exchange in asked]
            self.tracker.log_iteration(IterationRecord(step, metrics, docs_evaluated, ran, flat, checkpoint))
            if not to_run:
                break
        self.final_trajectories = [latest[i] for i in by_id]

    def _news_for(self, toolbox: Toolbox, trajectory: Trajectory, book: EvidenceBook) -> bool:
        """Whether code would write something into the attempt's docs (what probing found, above all): an attempt
        made with the starting docs settles its task only where they are all there is to show, so a task whose
        first attempt worked is still attempted with what was learned. The docs are left as they were."""
        before = _docs_of(toolbox, trajectory.toolset)
        news = self._write_by_code(toolbox, trajectory, book) > 0
        _restore(toolbox, trajectory.toolset, before)
        return news

    def _write_by_code(self, toolbox: Toolbox, trajectory: Trajectory, book: EvidenceBook) -> int:
        """Write into the attempt's toolset what code states from the evidence: the learned schema, the errors' rules,
        the experiments' working calls and, for calls that did not fit the request, a not-for sentence; returns how
        many docs changed."""
        knobs = self.improvements
        changed = 0
        if knobs.learned_schema:
            changed += book.teach(toolbox, trajectory.toolset)
        if knobs.error_rules:
            changed += book.state_rules(toolbox, trajectory.toolset)
        if knobs.experiment:
            changed += state_experiments(toolbox, trajectory.toolset, book)
        return changed + _state_not_for(toolbox, trajectory, self._off_request(trajectory, toolbox)
                                        + self._refused_off_request(trajectory, toolbox))

    @staticmethod
    def _set_aside(student: ToolAgentProgram, previous: list[Trajectory], tried: FailedCalls) -> VariedAgent | None:
        """The agent for attempts after the first (``previous``: each task's latest attempt), each task shown its
        toolset without the tools whose latest calls on it were made to the wrong tool, where others remain
        (``set_aside_misfits``); None when no task has one."""
        left_out = {}
        for trajectory in previous:
            hidden = tried.set_aside(trajectory.task_id)
            names = {tool.name for tool in student.toolbox.toolset(trajectory.toolset)}
            if hidden & names and names - hidden:
                left_out[trajectory.question] = hidden
        return VariedAgent(student.agent, left_out) if left_out else None

    def _vary_repeats(self, student: ToolAgentProgram, ran: list[Trajectory], tried: FailedCalls,
                      by_id: Mapping[str, Any], step: int) -> list[Trajectory]:
        """The attempts, each one that only repeated calls that failed before on its task made again without the
        tools whose calls only ever failed there (``vary_repeats``), where its toolset has others."""
        left_out = {}
        for trajectory in ran:
            hidden = tried.left_out(trajectory)
            if hidden and len(student.toolbox.toolset(trajectory.toolset)) > len(hidden):
                left_out[trajectory.task_id] = hidden
        if not left_out:
            return ran
        agent = VariedAgent(student.agent, {trajectory.question: left_out[trajectory.task_id]
                                            for trajectory in ran if trajectory.task_id in left_out})
        varied = self._rollouts(student, [by_id[i] for i in left_out], f"step {step}: agent, varied", agent=agent)
        again = {trajectory.task_id: trajectory for trajectory in varied}
        return [again.get(trajectory.task_id, trajectory) for trajectory in ran]

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
        # a tool whose call did not fit the request was not serving it: the request would lend it a purpose
        unsourced = {trajectory.steps[off.step].call.name
                     for off in self._off_request(trajectory, toolbox) + self._refused_off_request(trajectory, toolbox)}
        exchanges = []
        for tool in tools:
            evidence, key = book.of(trajectory.toolset, tool.name), tool_key(trajectory.toolset, tool.name)
            facts = self._facts(evidence)
            first = tool.name in called and key not in described
            news = tool.name in failed and described.get(key) != "\n".join(facts)
            if not (not tool.description or first or news):
                continue  # a doc is rewritten only when blank, first used, or when it failed on new evidence
            if self.improvements.grounded and not _known_to_work(evidence):
                continue  # nothing is known of what it does: the learned schema and its errors say the rest
            described[key] = "\n".join(facts)
            requests = [trajectory.question] if tool.name in called and tool.name not in unsourced else []
            asked = self._grounded(self.editor.describe(tool, facts, requests, short=self.improvements.short_replies),
                                   tool, evidence, [other.name for other in tools])
            exchanges.append(_with_example(asked, tool.name, evidence) if self.improvements.cite_requests else asked)
        return exchanges

    # -- offline ---------------------------------------------------------------------------------
    def _offline(self, student: ToolAgentProgram, tasks: list[Any], resume: dict[str, Any]) -> None:
        knobs = self.improvements
        usage = {toolset: UsageBook.from_dict(data) for toolset, data in resume.get("usage", {}).items()}
        covered = self.coverage_evidence.to_dict() if self.coverage_evidence is not None else {}
        seen = EvidenceBook.from_dict(resume.get("evidence", covered), runtime_errors=knobs.runtime_errors)
        replays = Replays.from_dict(resume.get("replays", {}))
        experiments = Experiments.from_dict(resume.get("experiments", {}))
        repairs = Repairs.from_dict(resume.get("repairs", {}))
        contrasts = Contrasts.from_dict(resume.get("contrasts", {}))
        corrected = knobs.repair_calls or knobs.contrast_attempts  # docs close with the corrections recorded
        described: dict[str, str] = dict(resume.get("described", {}))
        pending = {key: _Edit.from_dict(data) for key, data in resume.get("edits", {}).items()}
        rejected: dict[str, list[str]] = dict(resume.get("rejected", {}))  # tool key -> descriptions undone
        self._probe_first(student.toolbox, tasks, seen, resumed=bool(resume))
        # tool key -> its calls when the coverage pass described it: no editor call again until it has new evidence
        self._covered = dict(resume.get("covered", {tool_key(toolset, name): evidence.calls
                                                     for toolset, tools in seen.tools.items()
                                                     for name, evidence in tools.items() if covered}))
        explorer = student.agent
        if knobs.spread_calls and not self._judges:  # judged repeats already give every rival the agent's calls
            explorer = SpreadCalls(student.agent)
        for step in range(resume.get("next_step", 0), self.max_iterations):
            if self.learning_budget.exhausted():
                break  # the learning budget is spent: the docs stand as the last iteration left them
            trajectories = self._rollouts(student, tasks, f"iteration {step + 1}: explore", agent=explorer,
                                          budgeted=True)
            if not trajectories:
                break
            ran_ids = {trajectory.task_id for trajectory in trajectories}
            tasks_run = [task for task in tasks if task_key(task) in ran_ids]
            metrics = dict(self.env.summarise(trajectories))
            docs_explored = student.toolbox.deepcopy()
            exchanges: list[EditorExchange] = []
            changed = replayed = experimented = repaired = 0
            if knobs.accept_check:  # while calls are spread, the agent's own choices (and so its outcomes) are not seen
                answers = self._outcome_known and explorer is student.agent
                undone = _undo_worse(student.toolbox, pending, trajectories, answers)
                for key, edit in undone.items():
                    rejected.setdefault(key, []).append(edit)
                metrics["edits_undone"] = float(len(undone))
            pending = {}
            # the docs at hand are judged by the agent's own attempts: not while its calls are spread
            settled = knobs.settle and explorer is student.agent and all(t.success for t in trajectories)
            attempts = list(zip(tasks_run, trajectories, strict=True))
            by_toolset: dict[str, list[tuple[Any, Trajectory]]] = defaultdict(list)
            for task, trajectory in attempts:
                by_toolset[trajectory.toolset].append((task, trajectory))
            contrasted = contrasts.add(attempts, seen) if knobs.contrast_attempts and self._outcome_known else 0
            for toolset, pairs in ([] if settled else by_toolset.items()):
                members = [trajectory for _, trajectory in pairs]
                tools = student.toolbox.toolset(toolset)
                names = {tool.name for tool in tools}
                book = usage.setdefault(toolset, UsageBook())
                book.add(members, names)
                for trajectory in members:
                    seen.add(toolset, trajectory.steps, names)
                if knobs.experiment:
                    made = experiments.run(self.env, student.toolbox, pairs, seen, judge=self._judges)
                    book.add_calls([item.result for item in made], names)
                    experimented += len(made)
                if knobs.repair_calls and self._judges:
                    fixes, asked = repairs.run(self.env, self.editor, student.toolbox, pairs, seen,
                                               exhausted=self.learning_budget.exhausted)
                    book.add_calls([fix.result for fix in fixes if fix.result is not None], names)
                    exchanges.extend(asked)
                    repaired += sum(fix.answered for fix in fixes)
                if knobs.replay_calls:
                    replayed += self._replay_offline(student.toolbox, toolset, pairs, book, seen, replays)
                if knobs.per_tool:
                    before = {tool.name: tool.to_dict() for tool in tools}
                    asked = self._describe_offline(toolset, tools, book, seen, described, f"iteration {step + 1}")
                    exchanges.extend(asked)
                    asked = [_without_rejected(exchange, toolset, rejected) for exchange in asked]
                    applied = sum(apply_exchange(student.toolbox, toolset, exchange) for exchange in asked)
                    if knobs.learned_schema:
                        applied += seen.teach(student.toolbox, toolset)
                    if knobs.error_rules:
                        applied += seen.state_rules(student.toolbox, toolset)
                    if knobs.experiment:
                        applied += state_experiments(student.toolbox, toolset, seen)
                    if corrected:
                        applied += state_repairs(student.toolbox, toolset, seen)
                    changed += applied
                    pending.update(_edits(student.toolbox, toolset, before, members))
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
                if corrected:
                    changed += state_repairs(student.toolbox, toolset, seen)
            if settled and knobs.cite_requests:
                changed += _cite_settled(student.toolbox, trajectories, seen)
            if settled and contrasted:  # the last attempts answered what earlier ones failed: their docs say how
                changed += sum(state_repairs(student.toolbox, toolset, seen) for toolset in by_toolset)
            metrics["docs_changed"] = float(changed)
            if knobs.replay_calls:
                metrics["replayed_calls"] = float(replayed)
            if knobs.experiment:
                metrics["experiment_calls"] = float(experimented)
            if knobs.repair_calls and self._judges:
                metrics["calls_repaired"] = float(repaired)
            if knobs.contrast_attempts:
                metrics["attempts_contrasted"] = float(contrasted)
            checkpoint = {"mode": "offline", "next_step": step + 1, "docs": student.toolbox.to_json(),
                          "usage": {toolset: book.to_dict() for toolset, book in usage.items()},
                          "evidence": seen.to_dict(), "replays": replays.to_dict(), "described": described,
                          "edits": {key: edit.to_dict() for key, edit in pending.items()}, "rejected": rejected,
                          "experiments": experiments.to_dict(), "repairs": repairs.to_dict(), "contrasts": contrasts.to_dict(),
                          "covered": self._covered}
            self.tracker.log_iteration(IterationRecord(step, metrics, docs_explored, trajectories, exchanges, checkpoint))
            self.final_trajectories = trajectories
            if settled:
                break  # every train attempt succeeded with the docs at hand: nothing to learn, nothing more to spend

    def _replay_offline(self, toolbox: Toolbox, toolset: str, pairs: list[tuple[Any, Trajectory]], book: UsageBook,
                        seen: EvidenceBook, replays: Replays) -> int:
        """Repeat the attempts' working calls on their tools' rivals: judged where attempts are one reply, else
        outside any task, counted per interface so every rival is compared on the very inputs the others met."""
        names = {tool.name for tool in toolbox.toolset(toolset)}
        if self._judges:
            repeated = 0
            for task, trajectory in pairs:
                judged = replays.judged(self.env, toolbox, task, trajectory)
                seen.add_judged(toolset, judged, names)
                book.add_calls([item.result for item in judged if item.repeat], names)
                repeated += sum(item.repeat for item in judged)
            return repeated
        steps = [step for _, trajectory in pairs for step in trajectory.steps]
        repeats: list[Any] = []
        for tool, others in rivals(toolbox.toolset(toolset)).items():
            repeats += book.replay(partial(self.env.execute, toolset), steps, {tool, *others}, of=tool)
        seen.add(toolset, repeats, names)
        return len(repeats)

    def _describe_offline(self, toolset: str, tools: list[DocumentedTool], book: UsageBook, seen: EvidenceBook,
                          described: dict[str, str], label: str) -> list[EditorExchange]:
        """One editor call per tool with new evidence. What it is told follows what is hidden and what is judged:
        where its parameters are not shown, what its calls showed of its interface; where the environment judges
        single calls (an outcome value: engines, searches), its usage counts, with its calls unless it is one of a
        set of alike tools (``describe_from_calls``: counts say nothing of what a tool of its own does); where it
        does not, its calls and the requests they answered. One of a set of alike tools is written as such (from
        its counts, its current description not shown: a small editor copies it)."""
        knobs = self.improvements
        valued = any(usage.valued for usage in book.tools.values())
        shared = rivals(tools)
        jobs = []
        for tool in tools:
            usage, evidence = book.tools.get(tool.name), seen.of(toolset, tool.name)
            if usage is None and not evidence.calls:
                continue
            if usage is None and self._covered.get(tool_key(toolset, tool.name)) == evidence.calls:
                continue  # described by the coverage pass, and nothing new since
            if knobs.grounded and not _known_to_work(evidence):
                continue  # nothing is known of what it does
            hidden = tool.parameters is None or tool.parameters_learned
            alone = knobs.describe_from_calls and not _answers_like_its_rivals(tool.name, shared, seen, toolset)
            if not knobs.facts:
                facts = evidence.call_lines()
            else:
                facts = self._facts(evidence) if hidden or not valued or alone else []
                facts += book.facts(tool.name) if valued else []
            key = tool_key(toolset, tool.name)
            if described.get(key) == "\n".join(facts):
                continue  # nothing new since its doc was written
            described[key] = "\n".join(facts)
            jobs.append((tool, facts, valued and tool.name in shared and not alone))
        # under a learning budget the editor may not reach every tool: those the evidence says most about go first
        jobs.sort(key=lambda job: (-seen.of(toolset, job[0].name).requests_answered,
                                   -seen.of(toolset, job[0].name).working))

        def describe(job: tuple[DocumentedTool, list[str], bool]) -> EditorExchange | None:
            tool, facts, among_similar = job
            if self.learning_budget.exhausted():
                described.pop(tool_key(toolset, tool.name), None)  # not written: its evidence is still new
                return None
            if among_similar:
                asked = self.editor.describe(tool, facts, None, task=COMPARE_TASK, show_current=False)
            else:
                asked = self.editor.describe(tool, facts, None)
            asked = self._grounded(asked, tool, seen.of(toolset, tool.name), [other.name for other in tools])
            if knobs.drop_contradicted or knobs.cite_facts:
                asked = _checked_against_counts(asked, book, knobs)
            if knobs.cite_requests:
                asked = _with_example(asked, tool.name, seen.of(toolset, tool.name))
            return asked

        asked = parallel_map(describe, jobs, num_threads=self.num_threads, description=f"{label}: editor",
                             progress=self.progress)
        return [exchange for exchange in asked if exchange is not None]


def _answers_like_its_rivals(name: str, shared: Mapping[str, tuple[str, ...]], seen: EvidenceBook,
                             toolset: str) -> bool:
    """Whether a tool is one of a set of alike tools: it shares its parameters with others and every one of them
    that answered returned the same kinds of value (engines all return moves, searches all return result lists).
    Tools that take the same parameters yet answer in different kinds (an object of coordinates, a zip code as
    text) do different things, which only their calls show."""
    if name not in shared:
        return False
    kinds = set(seen.of(toolset, name).output_kinds)
    answered = [set(seen.of(toolset, other).output_kinds) for other in shared[name]]
    return all(other == kinds for other in answered if other and kinds)


def _known_to_work(evidence: ToolEvidence) -> bool:
    """Whether what a tool does is known: a call to it worked and, where requests were judged, it answered one (a
    tool that only returned numbers for requests it did not answer has no purpose the evidence shows)."""
    return evidence.working > 0 and (evidence.requests_answered > 0 or not evidence.requests_tried)


def _well_formed(step: Any, tools: Mapping[str, DocumentedTool]) -> bool:
    """Whether a call named only parameters its tool is known to take: one that did not fit its request was then made
    to the wrong tool, where a guess at an undocumented tool's parameters may have been the right tool called wrong."""
    tool = tools.get(step.call.name)
    return (tool is not None and tool.parameters is not None
            and set(step.call.arguments) <= {parameter.name for parameter in tool.parameters})


def _required_names(tools: list[DocumentedTool]) -> dict[str, list[str]]:
    """Each tool's required parameter names, as shown or learned (a tool with no known schema is left out)."""
    return {tool.name: [p.name for p in tool.parameters if p.required] for tool in tools if tool.parameters is not None}


@dataclass(frozen=True)
class _Edit:
    """One tool's doc changed in an offline iteration, kept until the next exploration checks it."""

    toolset: str
    before: dict[str, Any]
    """The tool's docs before the edit (``DocumentedTool.to_dict``)."""
    calls: int
    failed: int
    attempts: int
    """Attempts that called the tool, in the exploration the edit was written from."""
    answered: int
    """Of those, the ones that succeeded."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> _Edit:
        return cls(**data)


def _usage_of(trajectories: list[Trajectory]) -> dict[str, list[int]]:
    """Per tool name: [calls, failed calls, attempts calling it, of those the successful ones]."""
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for trajectory in trajectories:
        for name in {step.call.name for step in trajectory.steps}:
            stats[name][2] += 1
            stats[name][3] += trajectory.success
        for step in trajectory.steps:
            stats[step.call.name][0] += 1
            stats[step.call.name][1] += not step.ok
    return stats


def _edits(toolbox: Toolbox, toolset: str, before: dict[str, dict[str, Any]],
           trajectories: list[Trajectory]) -> dict[str, _Edit]:
    """The tools of ``toolset`` whose docs differ from ``before``, with how their calls fared until then."""
    stats = _usage_of(trajectories)
    edits = {}
    for tool in toolbox.toolset(toolset):
        if tool.to_dict() != before.get(tool.name, tool.to_dict()):
            calls, failed, attempts, answered = stats.get(tool.name, [0, 0, 0, 0])
            edits[tool_key(toolset, tool.name)] = _Edit(toolset, before[tool.name], calls, failed, attempts, answered)
    return edits


def _undo_worse(toolbox: Toolbox, edits: dict[str, _Edit], trajectories: list[Trajectory],
                answers: bool) -> dict[str, str]:
    """Put back each edited doc whose tool fared worse in the exploration that followed the edit: a higher share
    of failed calls, or (with ``answers``: outcomes known, and the agent's own choices) a lower share of answered
    attempts. Returns the descriptions undone, by tool key."""
    stats = _usage_of(trajectories)
    undone = {}
    for key, edit in edits.items():
        name = edit.before["name"]
        calls, failed, attempts, answered = stats.get(name, [0, 0, 0, 0])
        more_failures = calls and edit.calls and failed / calls > edit.failed / edit.calls
        fewer_answers = answers and attempts and edit.attempts and answered / attempts < edit.answered / edit.attempts
        if more_failures or fewer_answers:
            undone[key] = toolbox.tools[key].description
            toolbox.tools[key] = DocumentedTool.from_dict(edit.before)
    return undone


def _without_rejected(exchange: EditorExchange, toolset: str, rejected: dict[str, list[str]]) -> EditorExchange:
    """The exchange without descriptions that were undone before: the editor, reading much the same facts, often
    proposes the very text that made its tool's calls worse."""
    updates = {name: text for name, text in exchange.updates.items()
               if text not in rejected.get(tool_key(toolset, name), [])}
    return replace(exchange, updates=updates)


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


def _with_example(exchange: EditorExchange, name: str, evidence: ToolEvidence) -> EditorExchange:
    """The exchange with ``name``'s description closed by requests the tool answered (``cite_requests``)."""
    example = evidence.example()
    if not example:
        return exchange
    text = " ".join(part for part in (exchange.updates.get(name, ""), example) if part)
    return replace(exchange, updates={**exchange.updates, name: text})


def _cite_settled(toolbox: Toolbox, trajectories: list[Trajectory], seen: EvidenceBook) -> int:
    """Settled docs still carry what the attempts showed (``cite_requests``): every blank description gets, by code
    and at no token cost, the requests its tool answered, so docs exported for other agents show a working call.
    A call is credited with its attempt's answer only when it was the attempt's one working call. Returns how
    many tools' docs changed."""
    for trajectory in trajectories:
        working = [step for step in trajectory.steps if step.ok]
        names = {tool.name for tool in toolbox.toolset(trajectory.toolset)}
        if trajectory.success and len(working) == 1 and working[0].call.name in names:
            seen.of(trajectory.toolset, working[0].call.name).add_outcome(trajectory.question, working[0], True)
    changed = 0
    for toolset in dict.fromkeys(trajectory.toolset for trajectory in trajectories):
        blank = {tool.name: example for tool in toolbox.toolset(toolset)
                 if not tool.description and (example := seen.of(toolset, tool.name).example())}
        changed += apply_updates(toolbox, toolset, blank)
    return changed


def _state_not_for(toolbox: Toolbox, trajectory: Trajectory, off_request: list[OffRequest]) -> int:
    """Close the doc of each tool whose call did not fit the attempt's request with a sentence saying so, written by
    code (``request_values``, ``refused_requests``); returns how many docs changed."""
    updates: dict[str, str] = {}
    for off in off_request:
        call = trajectory.steps[off.step].call
        tool = toolbox.get(trajectory.toolset, call.name)
        if tool is None:
            continue
        sentence = not_for_sentence(trajectory.question, render_call(call), off.reason)
        current = updates.get(call.name, tool.description)  # one sentence per call: a second call adds its own
        if sentence not in current:
            updates[call.name] = " ".join(part for part in (current, sentence) if part)
    return apply_updates(toolbox, trajectory.toolset, updates)


def _docs_of(toolbox: Toolbox, toolset: str) -> list[dict[str, Any]]:
    """A toolset's docs as plain records (``DocumentedTool.to_dict``): what an undo puts back."""
    return [tool.to_dict() for tool in toolbox.toolset(toolset)]


def _restore(toolbox: Toolbox, toolset: str, docs: list[dict[str, Any]]) -> None:
    """Put a toolset's docs back as they were (``DocumentedTool.to_dict`` records)."""
    for data in docs:
        toolbox.tools[tool_key(toolset, data["name"])] = DocumentedTool.from_dict(data)
