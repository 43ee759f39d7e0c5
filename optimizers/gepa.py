"""GEPA (reflective prompt evolution, as in DSPy's ``dspy.GEPA``) applied to tool documentation.

Each tool's description is one GEPA component. A candidate set of descriptions is scored by running
the agent with them on tasks and scoring its attempts with the environment's own metric (the
primary one); for the tool GEPA chooses to improve, the reflection LM reads the requests, the calls
the agent made to that tool, what the tool returned or raised, and each attempt's score and
feedback, and writes a new description. GEPA keeps the candidates that do best on the validation
tasks (a Pareto front, one entry per task) and returns the best.

Online environments (a toolset per task) run GEPA once per task, on that task, within the same
budget of agent attempts; offline ones run it once over the train tasks. Online, each task's search
is a logged step of its own, so an interrupted run keeps every finished search and resumes after the
last one; the final scoring is the step after them. Attempts made while searching are charged to the
exploration phase (``scorer``), reflections to the editor phase, and the final scoring of the train
tasks to the agent phase, as for the other optimizers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import dspy
from tqdm import tqdm

from otbench.core.trajectory import Trajectory, preview
from otbench.envs.base import Agent, Environment
from otbench.evals.harness import run_rollouts
from otbench.modules.editor import EditorExchange
from otbench.modules.lm_output import first_text
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import Toolbox, tool_key
from otbench.optimizers.base import (
    DocOptimizer,
    IterationRecord,
    IterationTracker,
    apply_updates,
    checkpoint_trajectory,
    restore_trajectory,
)
from otbench.optimizers.gepa_knobs import GEPAKnobs
from otbench.optimizers.knobs import check

if TYPE_CHECKING:
    from gepa.core.adapter import EvaluationBatch

SEARCHED = "searched"
"""Checkpoint entry of a search's step: how many tasks' searches have finished (online), which a resume skips."""
CHANGED = "toolsets_changed"
"""Checkpoint entry of a search's step: the toolsets whose docs the finished searches changed."""
BEST_ATTEMPTS = "best_attempts"
"""Checkpoint entry of a search's step: the searched tasks' outcomes with the docs GEPA chose for each."""

REFLECTION_PROMPT = """\
An AI assistant calls a tool that is documented as follows:
```
<curr_param>
```

Below are requests the assistant handled with this documentation: the calls it made to the tool, \
what the tool returned or the error it raised, and how well the attempt scored, with feedback:
```
<side_info>
```

Write a new description of the tool that lets the assistant pick it for the right requests and call \
it correctly on the first try: what it does and returns, and each argument's name, type and meaning. \
State only what the examples show or clearly imply. Provide the new description within ``` blocks."""


class _Silent:
    """GEPA's progress log, dropped: the commands show progress bars and print one summary."""

    def log(self, message: str) -> None:
        return None


class _DocsAdapter:
    """What GEPA calls: score a candidate's docs on tasks, and show a tool's evidence to the reflection LM.

    ``spent`` counts the attempts against the budget: GEPA's own log is dropped, and a search runs for
    hours on a slow machine, so its progress is this bar."""

    propose_new_texts = None  # GEPA's own reflective proposal, with REFLECTION_PROMPT (GEPA reads this attribute)

    def __init__(self, optimizer: GEPA, toolbox: Toolbox, scorer: Agent, spent: tqdm[Any]) -> None:
        self.optimizer, self.toolbox, self.scorer, self.spent = optimizer, toolbox, scorer, spent

    def evaluate(self, batch: list[Any], candidate: dict[str, str],
                 capture_traces: bool = False) -> EvaluationBatch[Trajectory, Trajectory]:
        from gepa.core.adapter import EvaluationBatch

        docs = _with_candidate(self.toolbox, candidate)
        trajectories = self.optimizer._attempts(self.scorer, docs, batch)
        self.spent.total = max(self.spent.total, self.spent.n + len(trajectories))  # the last iteration may run over
        self.spent.update(len(trajectories))
        scores = [float(t.metrics[self.optimizer.env.primary_metric]) for t in trajectories]
        return EvaluationBatch(outputs=trajectories, scores=scores, trajectories=trajectories if capture_traces else None)

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch: EvaluationBatch[Trajectory, Trajectory],
                                components_to_update: list[str]) -> dict[str, list[dict[str, Any]]]:
        metric = self.optimizer.env.primary_metric
        dataset: dict[str, list[dict[str, Any]]] = {}
        for component in components_to_update:
            toolset, name = component.split("::", 1)
            records = []
            for trajectory in eval_batch.trajectories or []:
                if trajectory.toolset != toolset:
                    continue
                calls = [step for step in trajectory.steps if step.call.name == name]
                shown = [f"{name}({json.dumps(step.call.arguments, ensure_ascii=False, default=str)}) "
                         + (f"returned {preview(step.output, 300)}" if step.ok else f"raised {step.error}")
                         for step in calls] or [f"the assistant did not call {name}"]
                records.append({"Tool": name, "Request": trajectory.question, "Calls": "\n".join(shown),
                                "Feedback": f"{metric} = {trajectory.metrics.get(metric, 0.0):.2f}. "
                                            f"{trajectory.feedback or trajectory.parse_error or ''}".strip()})
            dataset[component] = records
        return dataset


def _with_candidate(toolbox: Toolbox, candidate: Mapping[str, str]) -> Toolbox:
    docs = toolbox.deepcopy()
    _apply_candidate(docs, candidate)
    return docs


def _apply_candidate(toolbox: Toolbox, candidate: Mapping[str, str]) -> None:
    """Set a candidate's descriptions (keyed by :func:`tool_key`) on ``toolbox``."""
    for key, description in candidate.items():
        toolset, name = key.split("::", 1)
        apply_updates(toolbox, toolset, {name: description})


class GEPA(DocOptimizer):
    """Teleprompter: GEPA's search over the tools' descriptions, then the train tasks are scored.

    ``reflection_lm`` writes new descriptions (default: ``dspy.settings.lm`` when it is called);
    ``scorer`` is the agent that scores candidates while searching (default: the student's agent).
    """

    def __init__(
        self, *, env: Environment, reflection_lm: dspy.LM | None = None, scorer: Agent | None = None,
        budget: int = GEPAKnobs.budget, minibatch: int = GEPAKnobs.minibatch, seed: int = 0, num_threads: int = 1,
        tracker: IterationTracker | None = None, progress: bool = True, probe: bool = False,
        experiment: bool = False, token_budget: int | None = None,
        coverage: bool = False, worded_errors: bool = True, request_scales: bool = False,
        gate: bool = True, keep_evidence: bool = True,
    ) -> None:
        super().__init__(env=env, num_threads=num_threads, tracker=tracker, progress=progress, probe=probe,
                         experiment=experiment, token_budget=token_budget,
                         coverage=coverage, worded_errors=worded_errors,
                         request_scales=request_scales, gate=gate, keep_evidence=keep_evidence)
        check(GEPAKnobs(budget, minibatch))
        self.reflection_lm, self.scorer = reflection_lm, scorer
        self.budget, self.minibatch, self.seed = budget, minibatch, seed
        self._exchanges: list[EditorExchange] = []

    def _lms(self, program: ToolAgentProgram) -> dict[str, Any]:
        scorer_lm = getattr(self.scorer, "lm", None) if self.scorer is not None else None
        return {**super()._lms(program), "editor": self.reflection_lm or dspy.settings.lm,
                **({"scorer": scorer_lm} if scorer_lm is not None else {})}

    def _optimize(self, program: ToolAgentProgram, trainset: list[Any], resume: dict[str, Any]) -> None:
        """One GEPA search per task (online) or over all train tasks (offline), then the train tasks are scored.

        With several searches (online), each finished one is logged as a step (:meth:`_log_search`); a ``resume``
        checkpoint of one continues with the next task's search (its docs are already the program's). One without
        :data:`SEARCHED` is the final scoring's: nothing is left to do.
        """
        if resume and SEARCHED not in resume:
            return
        searched = int(resume.get(SEARCHED, 0))
        if not searched:
            self._shared_help(program.toolbox, trainset)
        groups = [[task] for task in trainset] if self.env.learning == "online" else [trainset]
        stepwise = len(groups) > 1  # each search a step of its own
        best_attempts = [restore_trajectory(data) for data in resume.get(BEST_ATTEMPTS, ())]
        changed = set(resume.get(CHANGED, ()))
        # one bar over every search: each spends about its budget of attempts (the last iteration may run over)
        with tqdm(total=self.budget * len(trainset), initial=self.budget * searched, desc="gepa: search",
                  unit="attempt", disable=not self.progress, dynamic_ncols=True) as spent:
            for step, tasks in enumerate(groups[searched:], start=searched):
                self._exchanges = []
                seed, best, attempt = self._search(program, tasks, spent)
                changed |= {key.split("::", 1)[0] for key in best if best[key] != seed[key]}
                _apply_candidate(program.toolbox, best)
                if stepwise:
                    best_attempts += attempt
                    self._log_search(program, step, best_attempts, attempt, changed)
        trajectories = self._rollouts(program, trainset, "gepa: evaluate")
        metrics = {**self.env.summarise(trajectories), "toolsets_changed": float(len(changed))}
        final_step = len(groups) if stepwise else 0
        exchanges = [] if stepwise else self._exchanges  # stepwise, each search's step logged its own
        self.tracker.log_iteration(IterationRecord(final_step, metrics, program.toolbox.deepcopy(), trajectories,
                                                   exchanges, {"next_step": final_step + 1,
                                                               "docs": program.toolbox.to_json()}))
        self.final_trajectories = trajectories

    def _log_search(self, program: ToolAgentProgram, step: int, best_attempts: list[Trajectory],
                    attempt: list[Trajectory], changed: set[str]) -> None:
        """One task's finished search as a step: the environment's metrics over the searched tasks' attempts with the
        docs GEPA chose for each (how the search is going), this search's best attempt and reflections, and what a
        resume continues from."""
        metrics = {**self.env.summarise(best_attempts), "tasks_searched": float(step + 1),
                   "toolsets_changed": float(len(changed))}
        checkpoint = {SEARCHED: step + 1, "docs": program.toolbox.to_json(), CHANGED: sorted(changed),
                      BEST_ATTEMPTS: [checkpoint_trajectory(t) for t in best_attempts]}
        self.tracker.log_iteration(IterationRecord(step, metrics, program.toolbox.deepcopy(), attempt,
                                                   self._exchanges, checkpoint))

    def _search(self, program: ToolAgentProgram, tasks: list[Any],
                spent: tqdm[Any]) -> tuple[dict[str, str], dict[str, str], list[Trajectory]]:
        """GEPA over ``tasks``: the descriptions it started from, the best it found, and the best's attempts at the
        tasks (as the search scored them)."""
        import gepa

        seed = {tool_key(toolset, tool.name): tool.description
                for toolset in self._toolsets(tasks) for tool in program.toolbox.toolset(toolset)}
        adapter: Any = _DocsAdapter(self, program.toolbox, self.scorer or program.agent, spent)  # GEPA's protocol
        result: Any = gepa.optimize(
            seed_candidate=seed, trainset=tasks, valset=tasks,
            adapter=adapter,
            reflection_lm=self._reflect, reflection_prompt_template=REFLECTION_PROMPT,
            reflection_minibatch_size=min(self.minibatch, len(tasks)), max_metric_calls=self.budget * len(tasks),
            stop_callbacks=lambda _state: self.learning_budget.exhausted(),
            logger=_Silent(), display_progress_bar=False, seed=self.seed, raise_on_exception=True,
            track_best_outputs=True,
        )
        best = result.best_candidate
        if not isinstance(best, dict):  # a dict seed gives dict candidates
            raise TypeError(f"GEPA returned a {type(best).__name__} candidate for a dict seed")
        outputs = result.best_outputs_valset or {}
        attempts = [next((out for idx, out in outputs[i] if idx == result.best_idx), outputs[i][0][1])
                    for i in sorted(outputs)]
        return seed, best, attempts

    def _attempts(self, agent: Agent, docs: Toolbox, tasks: Sequence[Any]) -> list[Trajectory]:
        """A candidate's attempts at tasks (no progress bar: GEPA asks for many small batches)."""
        return run_rollouts(self.env, agent, docs, list(tasks), num_threads=self.num_threads, progress=False)

    def _reflect(self, prompt: str | list[dict[str, Any]]) -> str:
        """GEPA's reflection call, made with the reflection LM and kept as an exchange."""
        lm = self.reflection_lm or dspy.settings.lm
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        reply = first_text(lm(messages=messages, max_tokens=600))
        self._exchanges.append(EditorExchange("reflect", json.dumps(messages, ensure_ascii=False), reply, {}))
        return reply
