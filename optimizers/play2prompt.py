"""Play2Prompt baseline: learn each tool's documentation by playing with it alone, before any task.

Per tool, two stages:

1. **Tool play.** ``initial_samples`` times: propose an invocation from the current docs, execute
   it, and on an error show the error and retry (up to ``retries`` more times). A call that runs
   is turned into an example by reverse-generating a user request it answers. When more examples
   than ``top_k`` were found, a judge scores each and the ``top_k`` best are kept (when all are
   kept anyway, judging them would buy nothing).
2. **Documentation refinement by beam search.** Each doc in the beam (at first, the current doc)
   is scored by the task agent's success on the kept examples: it must call this tool and get
   the example's result. ``expansions`` rewrites per beam member are written from the examples
   and the agent's failures, scored the same way, and the ``beam_width`` best survive, for
   ``iterations`` rounds. The best doc wins.

Steps: each stage (play, then each beam round) logs one step per toolset, when the last of its
tools is through it (tools work side by side, so toolsets finish in any order); the scoring of the
train tasks is the last step. An interrupted run keeps every toolset that finished its stage and
resumes the stage for the others only: on a small machine, one stage over a hundred toolsets is hours.

Every tool is explored separately whether a task needs it or not: that is where its token cost
comes from, and why the paper compares it with ToolObserver. Play, the judge and the agent's
scoring runs are charged to the exploration phase; the rewrites to the editor phase.

Every reply is untrusted data, read at the same boundary as the agent's: a proposed call is
checked (:func:`otbench.core.calls.checked_call`) and one that does not fit is a failed attempt with its
reason, never executed; requests and descriptions are clean strings or nothing; a rating is a
number from 1 to 10 or no rating.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import dspy

from otbench.core.calls import CallResult, ToolCall, checked_call
from otbench.core.parallel import parallel_map
from otbench.core.trajectory import preview
from otbench.envs.base import Agent, Environment
from otbench.modules.editor import EditorExchange, render_docs
from otbench.modules.lm_output import ask_json, reply_number, reply_text
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import DocumentedTool
from otbench.optimizers.base import DocOptimizer, IterationRecord, IterationTracker, apply_updates
from otbench.optimizers.knobs import check
from otbench.optimizers.play2prompt_knobs import Play2PromptKnobs
from otbench.optimizers.rivals import rivals

PLAYER_ROLE = """\
You explore a tool by calling it, to learn what it does and how to call it correctly."""

PROPOSE_TASK = """\
Propose one call of this tool with concrete argument values. Use the documentation and what \
the earlier attempts showed (errors name missing or unexpected parameters). Make it different \
from the calls that already worked."""

REVERSE_TASK = """\
Write the request a user would make that this call answers, as one natural sentence with the \
values needed. Do not name the tool."""

JUDGE_TASK = """\
Rate this example from 1 to 10: is the request natural and specific, and does the call with \
its result answer it exactly?"""

REFINER_ROLE = """\
You write the documentation of a tool so that an AI assistant picks it for the right requests \
and calls it with the right arguments on the first try."""

REFINE_TASK = """\
Write a better description of the tool (1-3 sentences: what it does, each input with name, type \
and meaning, what it returns). Base it on the examples of calls that worked and fix what made \
the assistant fail. It must differ from the descriptions already tried."""

NEXT_STAGE = "next_stage"
"""Checkpoint entry: the stage a resume starts with: 0, play; 1 to ``iterations``, that beam round;
``iterations + 1``, the scoring of the train tasks; beyond, nothing is left."""
DONE = "toolsets_done"
"""Checkpoint entry: the toolsets through :data:`NEXT_STAGE` already, in the order they finished, which a resume
skips in that stage (the checkpoint's ``states`` hold their tools as the stage left them, the others' as before it)."""

_SHOWN_ATTEMPTS = 6  # earlier attempts shown when proposing a call: enough to learn from, bounded prompt
SCORED_TOOLS = 20
"""The most tools the scoring agent is offered with a candidate doc: the tool and those it is likeliest confused
with (same required parameters first, then the toolset's order). A pool of a thousand tools in one prompt would
exceed the agent's context; an agent in the pool sees at most 20 tools at once too."""

_ARGUMENTS_SCHEMA = {
    "type": "object",
    "properties": {"arguments": {"type": "object", "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]{0,39}$"}}},
    "required": ["arguments"],
}
_QUERY_SCHEMA = {"type": "object", "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 400}},
                 "required": ["query"]}
_SCORE_SCHEMA = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 10}},
                 "required": ["score"]}
_DESCRIPTION_SCHEMA = {"type": "object",
                       "properties": {"description": {"type": "string", "minLength": 1, "maxLength": 700}},
                       "required": ["description"]}


@dataclass
class Example:
    """A request that a successful call of the tool answers, with the call's result and its score.

    ``score`` is the judge's rating, or None when no judging was needed to choose the examples.
    """

    query: str
    arguments: dict[str, Any]
    output: str
    score: float | None = None


@dataclass
class ToolState:
    """Everything Play2Prompt knows about one tool: kept examples and the scored beam of docs."""

    toolset: str
    tool: str
    examples: list[Example] = field(default_factory=list)
    beam: list[tuple[str, float]] = field(default_factory=list)
    tried: list[str] = field(default_factory=list)
    failures: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A copy: a checkpoint keeps a tool as a stage found it while the stage goes on changing the state."""
        return {"toolset": self.toolset, "tool": self.tool, "examples": [asdict(e) for e in self.examples],
                "beam": [list(item) for item in self.beam], "tried": list(self.tried),
                "failures": {text: list(seen) for text, seen in self.failures.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolState:
        return cls(data["toolset"], data["tool"], [Example(**e) for e in data["examples"]],
                   [(text, float(score)) for text, score in data["beam"]], list(data["tried"]),
                   dict(data["failures"]))


class ToolPlayer(dspy.Module):
    """The exploring LLM: proposes calls, reverse-generates requests, judges examples."""

    def __init__(self, *, max_tokens: int = 300) -> None:
        super().__init__()
        self.max_tokens = max_tokens
        self.lm: dspy.LM | None = None

    def _ask(self, job: str, task: str, prompt: str, schema: dict[str, Any]) -> tuple[EditorExchange, dict[str, Any]]:
        """Role, task and reply format as the system message (the same for every call of a job, so the server's
        prefix cache serves them); the tool and its evidence as the user message."""
        reply, data = ask_json(self.lm, system=f"{PLAYER_ROLE}\n\n{task}", user=prompt, schema=schema, schema_name=job,
                               max_tokens=self.max_tokens)
        return EditorExchange(job, prompt, reply, {}), data or {}

    def propose(self, tool: DocumentedTool, attempts: list[CallResult],
                examples: list[Example]) -> tuple[EditorExchange, ToolCall | None]:
        """The proposed call of ``tool``, checked; None when the reply proposed none (no ``arguments``)."""
        lines = [f"Tool documentation:\n{render_docs([tool])}"]
        if examples:
            lines.append("Calls that already worked:\n" + "\n".join(
                f"- {tool.name}({json.dumps(e.arguments, default=str)})" for e in examples))
        if attempts:
            lines.append("Earlier attempts:\n" + "\n".join(_render_result(result) for result in attempts))
        task = f'{PROPOSE_TASK}\n\nReply with JSON only: {{"arguments": {{"<parameter>": <value>}}}}'
        exchange, data = self._ask("propose", task, "\n\n".join(lines), _ARGUMENTS_SCHEMA)
        if "arguments" not in data:
            return exchange, None
        return exchange, checked_call(tool.name, data["arguments"])

    def reverse(self, tool: DocumentedTool, result: CallResult) -> tuple[EditorExchange, str]:
        prompt = f"Tool documentation:\n{render_docs([tool])}\n\nCall: {_render_result(result)}"
        task = f'{REVERSE_TASK}\n\nReply with JSON only: {{"query": "<request>"}}'
        exchange, data = self._ask("reverse", task, prompt, _QUERY_SCHEMA)
        return exchange, reply_text(data.get("query"))

    def judge(self, tool: DocumentedTool, example: Example) -> tuple[EditorExchange, float]:
        call = f"{tool.name}({json.dumps(example.arguments, ensure_ascii=False, default=str)}) returned {example.output}"
        task = f'{JUDGE_TASK}\n\nReply with JSON only: {{"score": <1-10>}}'
        exchange, data = self._ask("judge", task, f"Request: {example.query}\nCall: {call}", _SCORE_SCHEMA)
        return exchange, reply_number(data.get("score"), 1, 10) or 0.0


class DocRefiner(dspy.Module):
    """The editor LLM of the beam search: one new description per call."""

    def __init__(self, *, max_tokens: int = 400) -> None:
        super().__init__()
        self.max_tokens = max_tokens
        self.lm: dspy.LM | None = None

    def refine(self, tool: DocumentedTool, examples: list[Example], failures: list[str],
               tried: list[str]) -> tuple[EditorExchange, str]:
        shown = "\n".join(f"- Request: {e.query}\n  Call: {tool.name}({json.dumps(e.arguments, default=str)}) "
                          f"returned {e.output}" for e in examples)
        lines = [f"Current documentation:\n{render_docs([tool])}", f"Examples of calls that worked:\n{shown}"]
        if failures:
            lines.append("What the assistant did with the current documentation:\n" + "\n".join(failures))
        if tried:
            lines.append("Descriptions already tried:\n" + "\n".join(f"- {text}" for text in tried))
        prompt = "\n\n".join(lines)
        reply, data = ask_json(self.lm, system=f"{REFINER_ROLE}\n\n{REFINE_TASK}\n\n"
                               'Reply with JSON only: {"description": "<new description>"}', user=prompt,
                               schema=_DESCRIPTION_SCHEMA, schema_name="description", max_tokens=self.max_tokens)
        description = reply_text((data or {}).get("description"))
        return EditorExchange("refine", prompt, reply, {tool.name: description} if description else {}), description


def _render_result(result: CallResult) -> str:
    arguments = json.dumps(result.call.arguments, ensure_ascii=False, default=str)
    outcome = f"returned {preview(result.output, 300)}" if result.ok else f"failed: {result.error}"
    return f"{result.call.name}({arguments}) {outcome}"


class Play2Prompt(DocOptimizer):
    """Teleprompter: tool play, example selection, beam-searched docs; then the train tasks are scored.

    ``scorer`` is the task agent used to score candidate docs (its LM should be charged to the
    exploration phase); it defaults to the student's agent. ``explorer_lm`` plays with the tools and
    judges examples, ``editor_lm`` rewrites docs (each default: ``dspy.settings.lm`` when it is called).
    """

    def __init__(
        self, *, env: Environment, player: ToolPlayer | None = None, refiner: DocRefiner | None = None,
        explorer_lm: dspy.LM | None = None, editor_lm: dspy.LM | None = None, scorer: Agent | None = None,
        initial_samples: int = Play2PromptKnobs.samples, retries: int = Play2PromptKnobs.retries,
        top_k: int = Play2PromptKnobs.top_k, beam_width: int = Play2PromptKnobs.beam_width,
        expansions: int = Play2PromptKnobs.expansions, iterations: int = Play2PromptKnobs.iterations,
        num_threads: int = 1, tracker: IterationTracker | None = None, progress: bool = True, probe: bool = False,
        experiment: bool = False, token_budget: int | None = None,
        coverage: bool = False, worded_errors: bool = True, request_scales: bool = False,
        gate: bool = True, keep_evidence: bool = True,
    ) -> None:
        super().__init__(env=env, num_threads=num_threads, tracker=tracker, progress=progress, probe=probe,
                         experiment=experiment, token_budget=token_budget,
                         coverage=coverage, worded_errors=worded_errors,
                         request_scales=request_scales, gate=gate, keep_evidence=keep_evidence)
        check(Play2PromptKnobs(initial_samples, retries, top_k, beam_width, expansions, iterations))
        self.player, self.refiner, self.scorer = player or ToolPlayer(), refiner or DocRefiner(), scorer
        if explorer_lm is not None:
            self.player.lm = explorer_lm
        if editor_lm is not None:
            self.refiner.lm = editor_lm
        self.initial_samples, self.retries, self.top_k = initial_samples, retries, top_k
        self.beam_width, self.expansions, self.iterations = beam_width, expansions, iterations

    def _lms(self, program: ToolAgentProgram) -> dict[str, Any]:
        scorer_lm = getattr(self.scorer, "lm", None) if self.scorer is not None else None
        return {**super()._lms(program), "exploration": self.player.lm or dspy.settings.lm,
                "editor": self.refiner.lm or dspy.settings.lm,
                **({"scorer": scorer_lm} if scorer_lm is not None else {})}

    def _optimize(self, student: ToolAgentProgram, trainset: list[Any], resume: dict[str, Any]) -> None:
        """Explore every tool of the train tasks' toolsets, refine its doc, then score the train tasks; a ``resume``
        checkpoint continues where it was written (:data:`NEXT_STAGE`, :data:`DONE`)."""
        if "next_step" in resume:  # written when each stage was one step: the step's number was the stage's
            resume = {**resume, NEXT_STAGE: resume["next_step"]}
        scorer = self.scorer or student.agent
        toolsets = [toolset for toolset in self._toolsets(trainset) if student.toolbox.toolset(toolset)]
        kept = {(data["toolset"], data["tool"]): ToolState.from_dict(data) for data in resume.get("states", ())}
        states = [kept.get((toolset, tool.name)) or ToolState(toolset, tool.name)
                  for toolset in toolsets for tool in student.toolbox.toolset(toolset)]
        stage = int(resume.get(NEXT_STAGE, 0))
        done = list(resume.get(DONE, ()))
        if stage == 0 and not done:
            self._shared_help(student.toolbox, trainset)
        while stage <= self.iterations:
            self._stage(stage, student, scorer, states, toolsets, done)
            stage, done = stage + 1, []
        if stage == self.iterations + 1:
            trajectories = self._rollouts(student, trainset, "play2prompt: evaluate")
            metrics = {**self.env.summarise(trajectories), **_beam_metrics(states)}
            self.tracker.log_iteration(IterationRecord(
                stage * len(toolsets), metrics, student.toolbox.deepcopy(), trajectories, [],
                self._checkpoint(student, [state.to_dict() for state in states], {NEXT_STAGE: stage + 1})))
            self.final_trajectories = trajectories

    def _stage(self, stage: int, student: ToolAgentProgram, scorer: Agent, states: list[ToolState],
               toolsets: list[str], done: list[str]) -> None:
        """Play (stage 0) or beam round ``stage`` for the tools of the toolsets not ``done`` with it, side by side.
        A toolset is logged as a step, with the docs its beam chose, when its last tool is through: its tools are
        scored beside each other, so its docs change only then, and an interruption loses only the toolsets in
        progress."""
        work = self._play if stage == 0 else self._expand
        todo = [state for state in states if state.toolset not in done]
        before = {id(state): state.to_dict() for state in todo}  # kept for a tool still in the stage
        left = Counter(state.toolset for state in todo)
        exchanges: dict[str, list[EditorExchange]] = {toolset: [] for toolset in left}

        def finished(result: tuple[ToolState, list[EditorExchange]]) -> None:
            state, made = result
            exchanges[state.toolset] += made
            left[state.toolset] -= 1
            if left[state.toolset]:
                return
            for member in states:
                if stage and member.toolset == state.toolset and member.beam:
                    apply_updates(student.toolbox, member.toolset, {member.tool: member.beam[0][0]})
            done.append(state.toolset)
            through = set(done)
            kept = [member.to_dict() if member.toolset in through else before[id(member)] for member in states]
            metrics = {**_beam_metrics([ToolState.from_dict(data) for data in kept]), "stage": float(stage),
                       "toolsets_done": float(len(done))}
            self.tracker.log_iteration(IterationRecord(
                stage * len(toolsets) + len(done) - 1, metrics, student.toolbox.deepcopy(), [],
                exchanges.pop(state.toolset), self._checkpoint(student, kept, {NEXT_STAGE: stage, DONE: list(done)})))

        description = "play2prompt: play" if stage == 0 else f"play2prompt: beam {stage}"
        parallel_map(lambda state: (state, work(student, scorer, state)), todo, num_threads=self.num_threads,
                     description=description, progress=self.progress, on_result=finished)

    # -- tool play (stage 0) ------------------------------------------------------------------------
    def _play(self, student: ToolAgentProgram, scorer: Agent, state: ToolState) -> list[EditorExchange]:
        """Find and keep the best examples, then score the current doc on them: the beam's start. Under a learning
        budget, tools are played in toolset order until it runs out, checked before every call of the player: a tool
        whose play it cut keeps its docs (no beam would start from it), so no more is spent on it."""
        if self.learning_budget.exhausted():
            return []
        tool = _tool(student, state)
        exchanges: list[EditorExchange] = []
        found: list[Example] = []
        attempts: list[CallResult] = []  # across samples, so a later sample learns from earlier errors
        for _ in range(self.initial_samples):
            success = None
            for _ in range(1 + self.retries):
                if self.learning_budget.exhausted():
                    return exchanges
                exchange, call = self.player.propose(tool, attempts[-_SHOWN_ATTEMPTS:], found)
                exchanges.append(exchange)
                if call is None:
                    continue
                result = CallResult.refused(call) if call.problem else self.env.execute(state.toolset, call)
                attempts.append(result)
                if result.ok:
                    success = result
                    break
            if success is None:
                continue
            if self.learning_budget.exhausted():
                return exchanges
            reverse, query = self.player.reverse(tool, success)
            exchanges.append(reverse)
            if query:
                found.append(Example(query, success.call.arguments, preview(success.output)))
        state.examples = self._best_examples(tool, found, exchanges)
        if state.examples:
            state.beam = [(tool.description, self._score(student, scorer, state, tool.description))]
            state.tried = [tool.description]
        return exchanges

    def _best_examples(self, tool: DocumentedTool, found: list[Example],
                       exchanges: list[EditorExchange]) -> list[Example]:
        """The ``top_k`` examples the judge rates best; the judge is asked only when some must be dropped."""
        if len(found) <= self.top_k:
            return found
        for example in found:
            judged, example.score = self.player.judge(tool, example)
            exchanges.append(judged)
        return sorted(found, key=lambda e: -(e.score or 0.0))[: self.top_k]

    # -- beam search over docs (stages 1 to iterations) --------------------------------------------
    def _expand(self, student: ToolAgentProgram, scorer: Agent, state: ToolState) -> list[EditorExchange]:
        """One beam round for one tool: ``expansions`` rewrites per member, keep the best ``beam_width``."""
        if not state.examples or self.learning_budget.exhausted():
            return []
        exchanges: list[EditorExchange] = []
        candidates = list(state.beam)
        for description, _ in state.beam:
            base = _tool(student, state, description)
            for _ in range(self.expansions):
                if self.learning_budget.exhausted():
                    break
                exchange, written = self.refiner.refine(base, state.examples, state.failures[description], state.tried)
                exchanges.append(exchange)
                if written and written not in state.tried:
                    state.tried.append(written)
                    candidates.append((written, self._score(student, scorer, state, written)))
        # Stable sort: on a tie the older doc stays ahead, so a rewrite must be strictly better.
        state.beam = sorted(candidates, key=lambda item: -item[1])[: self.beam_width]
        return exchanges

    def _score(self, student: ToolAgentProgram, scorer: Agent, state: ToolState,
               description: str) -> float:
        """Share of examples on which the agent, shown ``description``, calls the tool and gets the result.

        The agent's failures are kept with the doc: they are what its rewrites must fix.
        """
        tools = [_tool(student, state, description) if t.name == state.tool else t
                 for t in offered_beside(student.toolbox.toolset(state.toolset), state.tool)]
        wins, failures = 0, []
        for example in state.examples:
            reply = scorer(question=example.query, tools=tools)
            results = [self.env.execute(state.toolset, call) for call in reply.calls or []]
            if any(result.call.name == state.tool and result.ok and preview(result.output) == example.output
                   for result in results):
                wins += 1
                continue
            made = "; ".join(_render_result(result) for result in results)
            failures.append(f"- Request: {example.query}\n  Assistant: {made or reply.error or 'no call'}")
        state.failures[description] = failures
        return wins / len(state.examples)

    # -- bookkeeping -------------------------------------------------------------------------------
    def _checkpoint(self, student: ToolAgentProgram, states: list[dict[str, Any]],
                    progress: dict[str, Any]) -> dict[str, Any]:
        return {**progress, "docs": student.toolbox.to_json(), "states": states}


def _tool(student: ToolAgentProgram, state: ToolState, description: str | None = None) -> DocumentedTool:
    """The tool's current docs, or a copy showing ``description`` instead (the toolbox is untouched)."""
    tool = student.toolbox.get(state.toolset, state.tool)
    if tool is None:
        raise KeyError(f"no tool {state.tool!r} in toolset {state.toolset!r}")
    if description is None:
        return tool
    candidate = copy.deepcopy(tool)
    candidate.with_docs(description=description)
    return candidate


def offered_beside(tools: list[DocumentedTool], name: str) -> list[DocumentedTool]:
    """The tools the scoring agent is offered with tool ``name``, in toolset order: all of them up to
    :data:`SCORED_TOOLS`, else ``name``, its rivals (the same required parameters) and the first others."""
    if len(tools) <= SCORED_TOOLS:
        return tools
    others = rivals(tools).get(name, ())
    ranked = [name, *others, *(tool.name for tool in tools if tool.name != name and tool.name not in others)]
    kept = set(ranked[:SCORED_TOOLS])
    return [tool for tool in tools if tool.name in kept]


def _beam_metrics(states: list[ToolState]) -> dict[str, float]:
    """How far play and the beam got: tools with examples, examples kept, mean best example success."""
    explored = [s for s in states if s.examples]
    best = [s.beam[0][1] for s in explored if s.beam]
    return {"tools": float(len(states)), "tools_with_examples": float(len(explored)),
            "examples_kept": float(sum(len(s.examples) for s in states)),
            "example_success": sum(best) / len(best) if best else 0.0}
