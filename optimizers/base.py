"""What every documentation optimizer shares: the iteration record, the tracker hook, doc edits.

Optimizers see environments only through :class:`otbench.envs.base.Environment` (tasks,
toolbox, rollout, summarise) and report each iteration to an :class:`IterationTracker`, which the
command line backs with MLflow.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import dspy
from dspy.teleprompt import Teleprompter
from tqdm import tqdm

from otbench.core.calls import CallResult, ToolCall, read_against_request, read_worded_error
from otbench.core.trajectory import Trajectory
from otbench.envs.base import Environment, task_key
from otbench.errors import ConfigError
from otbench.evals.harness import run_rollouts
from otbench.evals.invented import invented_claims
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import Toolbox
from otbench.optimizers.budget import TokenBudget
from otbench.optimizers.coverage import Batch, Coverage, CoverageState, keep_evidence
from otbench.optimizers.evidence import EvidenceBook, probe_toolset
from otbench.optimizers.experiments import Experiments, state_experiments
from otbench.optimizers.gate import GATE_TASKS, GateDecision, changed_tools, decide, gated
from otbench.optimizers.gate import META_KEY as GATE_META
from otbench.optimizers.results import DocOptimizationResult, IterationResult, TokenMarks
from otbench.optimizers.rivals import FixedReply

START_DOCS = "start_docs"
"""Checkpoint entry: the docs a compile started from, which a resumed compile judges its learned sentences against
(the docs it resumes from are partly learned)."""

BUDGET_SPENT = "budget_spent"
"""Checkpoint entry: the tokens the compile had spent when the iteration finished, which a resumed compile counts on
from (its budget is the whole run's, not each start's)."""

COVERAGE = "coverage"
"""Checkpoint entry: the coverage pass's state (:class:`~otbench.optimizers.coverage.CoverageState`) and the steps it
logged, which every later checkpoint carries: a run resumed during the pass goes on with it, one resumed after it
numbers its steps after the pass's."""

COVERAGE_EVIDENCE = "coverage_evidence"
"""Checkpoint entry of the coverage pass's own steps: what its calls showed so far."""

GATE_DECIDED = "gate_decided"
"""Checkpoint entry: the gate's decisions once it has scored both docs (by tool key), so a run stopped after them (while
its test tasks are scored) applies them again on resume instead of paying for the gate's rollouts twice."""

OBSERVED_CALLS = "observed_calls"
"""Resume entry: the calls the interrupted run saw (``{"toolset": ..., **CallResult.to_dict()}`` each), which a
tracker keeps with the iterations (:attr:`IterationRecord.observed`) and reads back for the compile that resumes."""


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
    observed: Sequence[tuple[str, CallResult]] = ()
    """The ``(toolset, call result)`` pairs the optimizer saw since the iteration before, in tasks, probes and
    exploration: the evidence its docs are judged against, kept with the iteration so that a resumed run is
    judged against all of it (set by the compile, not by the optimizer)."""


class IterationTracker(Protocol):
    def log_iteration(self, record: IterationRecord) -> None: ...


class StateKeepingTracker(IterationTracker, Protocol):
    """A tracker that can add entries to the last checkpoint it wrote: what a compile decides after its last
    iteration (the gate's decisions) survives a stop that comes later."""

    def keep_state(self, state: dict[str, Any]) -> None: ...


class _Recording:
    """Keeps the iterations a compile logs (for its results) and passes each on to the user's tracker, with the
    calls the optimizer saw since the iteration before and, in its checkpoint, the docs the compile started from:
    what judging the final docs needs after a resume."""

    def __init__(self, tracker: IterationTracker, watched: _WatchedEnvironment, start_docs: dict[str, Any],
                 budget: TokenBudget) -> None:
        self.tracker = tracker
        self.watched = watched
        self.start_docs = start_docs
        self.budget = budget
        self.passed_on = len(watched.calls)
        self.records: list[IterationRecord] = []
        self.coverage: dict[str, Any] | None = None
        """The coverage pass's state once it finished (every later checkpoint carries it), None without one."""
        self.offset = 0
        """Steps the coverage pass logged: the optimizer's own steps are numbered after them."""

    def log_iteration(self, record: IterationRecord) -> None:
        observed = self.watched.calls_since(self.passed_on)
        self.passed_on += len(observed)
        budget = self.budget.metrics()
        spent = {BUDGET_SPENT: int(budget["budget_spent"])} if budget else {}
        covered = {COVERAGE: self.coverage} if self.coverage is not None else {}
        record = replace(record, step=record.step + self.offset, observed=tuple(observed),
                         metrics={**record.metrics, **budget},
                         checkpoint={**record.checkpoint, START_DOCS: self.start_docs, **spent, **covered})
        self.records.append(record)
        self.tracker.log_iteration(record)

    def keep_state(self, state: dict[str, Any]) -> None:
        """Add ``state`` to the last checkpoint, where the user's tracker can keep it (:class:`StateKeepingTracker`)."""
        keep = getattr(self.tracker, "keep_state", None)
        if keep is not None and self.records:
            keep(state)


class _WatchedEnvironment:
    """The environment an optimizer works with, keeping every call result it sees (in tasks and outside them):
    the evidence its learned docs are judged against (:mod:`otbench.evals.invented`)."""

    def __init__(self, env: Environment, earlier: Sequence[tuple[str, CallResult]] = (), *,
                 worded_errors: bool = False, request_scales: bool = False) -> None:
        self._env = env
        self._lock = threading.Lock()
        self.calls: list[tuple[str, CallResult]] = list(earlier)
        self.worded_errors = worded_errors
        """Whether an answer that is an error in words is read as the failed call it is
        (:func:`~otbench.core.calls.worded_error`)."""
        self.request_scales = request_scales
        """Whether a task's call that passes a number of its request on another scale (0.15 for the request's 15%), or
        returns the whole where the request asks for a part, is read as a failed call whose error says so
        (:func:`~otbench.core.calls.read_against_request`)."""

    def calls_since(self, start: int) -> list[tuple[str, CallResult]]:
        with self._lock:
            return self.calls[start:]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        result = self._read(self._env.execute(toolset, call))
        with self._lock:
            self.calls.append((toolset, result))
        return result

    def _read(self, result: CallResult) -> CallResult:
        return read_worded_error(result) if self.worded_errors else result

    def rollout(self, agent: Any, toolbox: Toolbox, task: Any) -> Trajectory:
        trajectory = self._env.rollout(agent, toolbox, task)
        if self.worded_errors:  # scored as the environment scores it; read for what each call really did
            trajectory = replace(trajectory, steps=[self._read(step) for step in trajectory.steps])
        if self.request_scales:  # and read against what the request asked
            trajectory = replace(trajectory, steps=[read_against_request(trajectory.question, step)
                                                    for step in trajectory.steps])
        with self._lock:
            self.calls.extend((trajectory.toolset, step) for step in trajectory.steps)
        return trajectory


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


def tools_changed(start: Toolbox, final: Toolbox, toolsets: Sequence[str]) -> int:
    """How many tools of ``toolsets`` have other docs in ``final`` than in ``start``."""
    return sum(tool.to_dict() != (before.to_dict() if (before := start.get(toolset, tool.name)) else None)
               for toolset in toolsets for tool in final.toolset(toolset))


def checkpoint_trajectory(trajectory: Trajectory) -> dict[str, Any]:
    """The part of a trajectory a resumed run needs: which task, its metrics and outcome."""
    return {"task_id": trajectory.task_id, "toolset": trajectory.toolset, "metrics": trajectory.metrics,
            "success": trajectory.success}


def restore_trajectory(data: dict[str, Any]) -> Trajectory:
    return Trajectory(task_id=data["task_id"], toolset=data["toolset"], question="", metrics=data["metrics"],
                      success=data["success"])


class DocOptimizer(Teleprompter):
    """What the documentation teleprompters share: the environment, the tracker, concurrency, and DSPy's
    contract for ``compile``.

    ``compile(student, trainset=..., valset=..., resume=...)`` leaves ``student`` untouched and returns
    an improved copy whose ``detailed_results`` (:class:`~otbench.optimizers.results.DocOptimizationResult`)
    hold the iterations, the final attempts and the tokens spent. A subclass implements
    :meth:`_optimize`, which improves the copy's docs in place, and may set ``final_trajectories``
    (the train tasks run with the final docs) and ``editor_rounds`` (editor rounds per task) on the way.
    ``evaluates_start_docs`` says whether its first logged step scores the starting docs (a "before"
    figure comes free) or already new ones.

    LMs: an optimizer's own modules use the LM given to its constructor, else ``dspy.settings.lm``
    when they call (so ``with dspy.context(lm=...)`` around ``compile`` scopes them); the agent's calls
    use the student's agent's LM, with the same fallback.

    ``token_budget`` (tokens, every phase) bounds what a compile spends learning (:mod:`otbench.optimizers.budget`):
    each optimizer checks ``self.learning_budget.exhausted()`` before it starts a piece of learning work, and
    chooses what it spends the budget on.

    The help every optimizer may take alike: ``probe`` and ``experiment`` before it learns; ``coverage`` (offline),
    the tool-by-tool pass of :mod:`otbench.optimizers.coverage` before its own learning, under the same budget, its
    steps logged first; ``worded_errors``, an answer that is an error in words read as the failed call it is,
    wherever the optimizer sees calls (:func:`~otbench.core.calls.worded_error`); ``request_scales`` (offline), a task's call
    that passes a number of its request on another scale (0.15 for 15%), or returns the whole where the request asks
    for a part, read as a doubtful, failed call (:func:`~otbench.core.calls.read_against_request`); ``gate`` (offline, on by default),
    a learned doc kept only where the evidence says it is no worse than the doc its tool started with
    (:mod:`otbench.optimizers.gate`); ``keep_evidence`` (with ``coverage``, on by default), the sentences the pass
    wrote by code from a tool's calls put back where the pass placed them in a doc the optimizer rewrote
    (:func:`~otbench.optimizers.coverage.keep_evidence`), before the gate judges it.
    """

    evaluates_start_docs = False

    def __init__(self, *, env: Environment, num_threads: int = 1, tracker: IterationTracker | None = None,
                 progress: bool = True, probe: bool = False, experiment: bool = False,
                 token_budget: int | None = None, coverage: bool = False, worded_errors: bool = True,
                 request_scales: bool = False, gate: bool = True, keep_evidence: bool = True) -> None:
        super().__init__()
        if token_budget is not None and token_budget < 1:
            raise ConfigError(f"token_budget must be a positive number of tokens, not {token_budget}; leave it None "
                              "for no budget")
        self.env = env
        self.token_budget = token_budget
        self.learning_budget = TokenBudget(None, {})
        self.probe = probe
        self.experiment = experiment
        self.coverage = coverage
        self.worded_errors = worded_errors
        self.request_scales = request_scales
        self.gate = gate
        self.keep_evidence = keep_evidence
        self.coverage_evidence: EvidenceBook | None = None
        """What the coverage pass's calls showed (set by a compile that ran it), for an optimizer that reads evidence."""
        self.num_threads = num_threads
        self.tracker = tracker or NoTracking()
        self.progress = progress
        self.final_trajectories: list[Trajectory] = []
        self.editor_rounds: dict[str, int] = {}

    def compile(self, student: ToolAgentProgram, *, trainset: list[Any], teacher: Any = None,
                valset: list[Any] | None = None, resume: dict[str, Any] | None = None,
                **kwargs: Any) -> ToolAgentProgram:
        """An improved copy of ``student``, learned on ``trainset``, with ``detailed_results`` attached.

        With a ``valset`` (offline environments: docs shared by all tasks), the starting docs, the docs of every
        logged iteration and the final docs are scored on it and the best are returned: by the primary metric, then
        the environment's ``tie_break_metric``, the latest on a tie. An edit that made the agent worse on tasks it
        never learned from is then not kept. ``resume`` is the checkpoint of the last finished iteration of an
        interrupted run; with its :data:`START_DOCS` and :data:`OBSERVED_CALLS`, the final docs' invented claims are judged as if the run
        had never stopped.
        """
        if valset and self.env.learning == "online":
            raise ConfigError(f"{self.env.name} learns docs per task (online): a valset's tasks have tools of "
                             "their own, so no docs learned here apply to them")
        if self.coverage and self._mode() == "online":
            raise ConfigError("coverage learns every tool from the train requests (offline): it does not apply to "
                              "docs learned per task; drop coverage")
        program: ToolAgentProgram = student.deepcopy()
        lms = self._lms(program)
        marks = TokenMarks(lms)
        self.final_trajectories, self.editor_rounds = [], {}
        resume = resume or {}
        self.learning_budget = TokenBudget(self.token_budget, lms, spent_before=int(resume.get(BUDGET_SPENT, 0)))
        start = Toolbox.from_json(resume[START_DOCS]) if START_DOCS in resume else student.toolbox
        watched = _WatchedEnvironment(self.env, [(entry["toolset"], CallResult.from_dict(entry))
                                                 for entry in resume.get(OBSERVED_CALLS, ())],
                                      worded_errors=self.worded_errors or self.coverage,
                                      request_scales=self.request_scales and self._mode() == "offline")
        recording = _Recording(self.tracker, watched, start.to_json(), self.learning_budget)
        self.tracker, outer = recording, self.tracker
        self.env, env = watched, self.env
        try:
            own = (self._cover(program, self._coverage_tasks(list(trainset), valset or []), resume, recording)
                   if self.coverage else resume)
            self._optimize(program, list(trainset), own)
        finally:
            self.tracker, self.env = outer, env
        evidence_kept = self._keep_evidence(program.toolbox) if self.coverage and self.keep_evidence else None
        chosen, val_trajectories, candidates = "final", list[Trajectory](), dict[str, dict[str, float]]()
        if valset:
            chosen, val_trajectories, candidates = self._choose_on_valset(program, start, recording.records,
                                                                          list(valset))
        decisions: dict[str, GateDecision] = {}
        if self.gate and self._mode() == "offline":
            if GATE_DECIDED in resume:  # decided before the stop: the same decisions, no rollouts paid again
                decisions = {key: GateDecision.from_dict(value) for key, value in resume[GATE_DECIDED].items()}
                program.toolbox = gated(start, program.toolbox, decisions)
            else:
                decisions = self._gate(program, start, self._gate_tasks(list(trainset), list(valset or [])))
                recording.keep_state({GATE_DECIDED: {key: decision.to_dict() for key, decision in decisions.items()}})
        invented = invented_claims(program.toolbox, start, watched.calls, self._toolsets(list(trainset)))
        program.detailed_results = DocOptimizationResult(
            iterations=tuple(IterationResult(r.step, dict(r.metrics), r.toolbox.to_json(), tuple(r.trajectories))
                             for r in recording.records),
            final_trajectories=tuple(self.final_trajectories),
            editor_rounds=dict(self.editor_rounds),
            tokens=marks.counts(),
            val_metrics=candidates[chosen] if valset else None,
            val_trajectories=tuple(val_trajectories),
            val_candidates=candidates,
            chosen_docs=chosen,
            invented=invented,
            tools_learned=tools_changed(start, program.toolbox, self._toolsets(list(trainset))),
            gate={key: decision.to_dict() for key, decision in decisions.items()},
            evidence_kept=evidence_kept,
        )
        return program

    def _keep_evidence(self, toolbox: Toolbox) -> int:
        """Put the coverage pass's sentences back into the docs the optimizer rewrote after it (``keep_evidence``);
        returns how many docs that changed."""
        book = self.coverage_evidence or EvidenceBook()
        return sum(keep_evidence(tool, evidence) for toolset, tools in book.tools.items()
                   for name, evidence in tools.items() if (tool := toolbox.get(toolset, name)) is not None)

    def _gate_tasks(self, trainset: list[Any], valset: list[Any]) -> list[Any]:
        """The tasks the gate scores both docs on: the validation sample where one is given, else up to
        :data:`~otbench.optimizers.gate.GATE_TASKS` train tasks not learned on (every train task's toolset is the
        one learned, offline), else the first of those learned on."""
        if valset:
            return valset
        learned_on = {task_key(task) for task in trainset}
        rest = [task for task in self.env.tasks("train") if task_key(task) not in learned_on]
        return (rest or trainset)[:GATE_TASKS]

    def _gate(self, program: ToolAgentProgram, start: Toolbox, tasks: list[Any]) -> dict[str, GateDecision]:
        """Score the starting and the learned docs on ``tasks`` and give each tool whose learned doc is not shown to
        be no worse its starting doc back (:mod:`otbench.optimizers.gate`); returns the decisions."""
        toolsets = self._toolsets(tasks)
        if not changed_tools(start, program.toolbox, toolsets):
            program.toolbox.meta = {**program.toolbox.meta, GATE_META: {}}  # gated: nothing learned to check
            return {}
        tie_break = getattr(self.env, "tie_break_metric", None)

        def score(trajectories: Sequence[Trajectory]) -> tuple[float, ...]:
            summary = self.env.summarise(list(trajectories)) if trajectories else {}
            return tuple(float(summary.get(name, 0.0)) for name in (self.env.primary_metric, tie_break) if name)

        before = run_rollouts(self.env, program.agent, start, tasks, num_threads=self.num_threads,
                              description="gate: starting docs", progress=self.progress)
        after = run_rollouts(self.env, program.agent, program.toolbox, tasks, num_threads=self.num_threads,
                             description="gate: learned docs", progress=self.progress)
        decisions = decide(start, program.toolbox, toolsets, before, after, score)
        program.toolbox = gated(start, program.toolbox, decisions)
        return decisions

    def _optimize(self, program: ToolAgentProgram, trainset: list[Any], resume: dict[str, Any]) -> None:
        """Improve ``program.toolbox`` in place, logging each iteration to ``self.tracker``."""
        raise NotImplementedError

    def _mode(self) -> str:
        """How this compile learns: the environment's way, unless the optimizer was told otherwise."""
        return str(getattr(self, "mode", None) or self.env.learning)

    def _coverage_tasks(self, trainset: list[Any], valset: list[Any]) -> list[Any]:
        """The requests the coverage pass takes values from: every train task of the environment (tool calls cost no
        tokens, so the pass is not bounded by the attempts' sample), the ones docs are chosen on aside; the trainset
        where the environment has no more."""
        chosen_on = {task_key(task) for task in valset}
        learned_on = {task_key(task) for task in trainset}
        every = [task for task in self.env.tasks("train") if task_key(task) not in chosen_on]
        return every if learned_on <= {task_key(task) for task in every} else trainset

    def _cover(self, program: ToolAgentProgram, trainset: list[Any], resume: dict[str, Any],
               recording: _Recording) -> dict[str, Any]:
        """The coverage pass before the optimizer's own learning, one logged step per batch of tools; returns the
        checkpoint the optimizer goes on from: the one given where the pass was over before it, none otherwise (the
        optimizer had not started)."""
        part = dict(resume.get(COVERAGE) or {})
        if part.get("over"):
            recording.coverage, recording.offset = part, int(part.get("steps", 0))
            self.coverage_evidence = EvidenceBook.from_dict(resume.get(COVERAGE_EVIDENCE, {}))
            return resume
        state = CoverageState.from_dict(part)
        steps = int(part.get("steps", 0))
        book = EvidenceBook.from_dict(resume.get(COVERAGE_EVIDENCE, {}))
        editor = DocEditor()
        editor.lm = self._lms(program).get("editor")
        # a call is judged on a train request by playing it as a one-reply attempt, or by the environment's answers
        judge = bool(getattr(self.env, "one_reply", False)) or callable(getattr(self.env, "answers", None))
        pass_ = Coverage(self.env, editor, judge=judge, exhausted=self.learning_budget.exhausted)
        bar = tqdm(total=sum(len(program.toolbox.toolset(toolset)) for toolset in pass_.toolsets(trainset)),
                   initial=len(state.described), desc="coverage: tools", unit="tool", dynamic_ncols=True,
                   disable=not self.progress)  # a pass over a pool's thousand tools takes hours on a small machine

        def report(batch: Batch) -> None:
            nonlocal steps
            bar.update(len(batch.tools))
            metrics = {"coverage_tools_tried": float(len(state.tried)), "coverage_editor_calls": float(state.editor_calls),
                       "docs_changed": float(batch.changed)}
            checkpoint = {COVERAGE: {**state.to_dict(), "steps": steps + 1}, COVERAGE_EVIDENCE: book.to_dict(),
                          "docs": program.toolbox.to_json()}
            recording.log_iteration(IterationRecord(steps, metrics, program.toolbox.deepcopy(),
                                                    exchanges=[batch.exchange] if batch.exchange else [],
                                                    checkpoint=checkpoint))
            steps += 1

        with bar:
            pass_.run(program.toolbox, trainset, book, state, report)
        recording.coverage = {**state.to_dict(), "steps": steps, "over": True}
        recording.offset = steps
        self.coverage_evidence = book
        return {}

    def _lms(self, program: ToolAgentProgram) -> dict[str, Any]:
        """The LM of each role this optimizer's calls are made in (None: ``dspy.settings.lm``), for token counts."""
        return {"agent": getattr(program.agent, "lm", None) or dspy.settings.lm}

    def _choose_on_valset(self, program: ToolAgentProgram, start: Toolbox, records: list[IterationRecord],
                          valset: list[Any]) -> tuple[str, list[Trajectory], dict[str, dict[str, float]]]:
        """Score the final docs, each iteration's and the starting docs on ``valset``, the later first (they win
        a tie); put the best on ``program``. Returns its label, its attempts and every candidate's scores (docs
        equal to the starting ones are labelled ``start``)."""
        candidates = [("final", program.toolbox.deepcopy())]
        candidates += [(f"step {record.step}", record.toolbox) for record in reversed(records)]
        candidates.append(("start", start))
        scores: dict[str, dict[str, float]] = {}
        best: tuple[tuple[float, float], str, Toolbox, list[Trajectory]] | None = None
        seen: list[dict[str, Any]] = []
        starting = start.to_json()
        tie_break = getattr(self.env, "tie_break_metric", None)
        for label, docs in candidates:
            text = docs.to_json()
            if text in seen:  # the same docs score the same: not paid for twice
                continue
            seen.append(text)
            label = "start" if text == starting else label
            trajectories = run_rollouts(self.env, program.agent, docs, valset, num_threads=self.num_threads,
                                        description=f"valset: {label} docs", progress=self.progress)
            summary = self.env.summarise(trajectories)
            scores[label] = dict(summary)
            score = (summary[self.env.primary_metric], summary[tie_break] if tie_break else 0.0)
            if best is None or score > best[0]:
                best = (score, label, docs, trajectories)
        assert best is not None  # the final docs are always a candidate
        _, label, docs, trajectories = best
        program.toolbox = docs.deepcopy()
        return label, trajectories, scores

    def _rollouts(self, student: ToolAgentProgram, tasks: list[Any], description: str, *,
                  agent: Any | None = None, budgeted: bool = False) -> list[Trajectory]:
        """The student's attempts at ``tasks`` with its docs; ``agent`` stands in for its agent (an explorer). With
        ``budgeted`` (attempts made to learn from), a task not started when the learning budget runs out is not run:
        the attempts are those of the tasks run, in task order."""
        return run_rollouts(self.env, agent or student.agent, student.toolbox, tasks, num_threads=self.num_threads,
                            description=description, progress=self.progress,
                            stop=self.learning_budget.exhausted if budgeted else None)

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

    def _shared_help(self, toolbox: Toolbox, tasks: list[Any]) -> None:
        """The help every optimizer may take before it learns: the shared probe (``probe``) and the shared
        experiment (``experiment``)."""
        book = self._learn_interfaces(toolbox, tasks) if self.probe else EvidenceBook()
        if self.experiment:
            self._experiment_first(toolbox, tasks, book)

    def _experiment_first(self, toolbox: Toolbox, tasks: list[Any], book: EvidenceBook) -> None:
        """The shared experiment, for optimizers that do not watch the agent's attempts: where an attempt is one
        reply, each tool no call has worked on is called with each task's values (:mod:`otbench.optimizers.experiments`,
        at most its budget of calls a tool), judged by the task's metric offline; the docs then show the types the
        calls and errors support and close with the call that worked. Costs tool calls, no tokens."""
        if not getattr(self.env, "one_reply", False):
            return
        pairs = [(task, self.env.rollout(FixedReply([]), toolbox, task)) for task in tasks]  # the request, no call
        Experiments().run(self.env, toolbox, pairs, book, judge=self.env.learning == "offline", untried=True)
        for toolset in self._toolsets(tasks):
            book.teach(toolbox, toolset)
            book.state_rules(toolbox, toolset)
            state_experiments(toolbox, toolset, book)

    def _toolsets(self, tasks: list[Any]) -> list[str]:
        """The toolsets the tasks use, each once, in task order."""
        return list(dict.fromkeys(self.env.toolset_of(task) for task in tasks))
