"""Wild: the agent holds a dialogue of four user tasks over BFCL's functions made opaque.

Offline learning: one toolset, ``wild``, numbers every function offered anywhere ``function_1..N`` once
for the environment (so a doc learned from one dialogue is the doc of the same function in every other);
each dialogue offers the functions its tasks need and a few confusable others. The environment knows
which BFCL function each name is, the agent does not; so docs learned for a function in a BFCL optimize
run apply to the same function here (:meth:`WildEnvironment.docs_from`).

Each user turn, the agent reads the conversation so far (the user's messages, its own calls with their
results, its answers and questions) and replies with calls: tool calls (several per reply; it sees their
results before its next reply), or one of two fixed tools that end its turn, ``reply_to_user`` (an answer)
and ``ask_user`` (a question back). The fixed tools are never in the toolbox, so no optimizer edits them.
A turn also ends after ``max_steps`` replies, on a reply that cannot be read, and (repeats refused) on a
reply of nothing but exact repeats of calls that worked earlier in the turn, which are not run. Calls run in
the BFCL sandbox under the names shown, through the fault controller when one is set; the fixed tools never
fail.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from collections.abc import Sequence
from typing import Any

from otbench.core.calls import DEFAULT_MAX_CALLS_PER_REPLY, CallResult, ToolCall, earlier_identical
from otbench.core.faults import Episode, StateController, call_episode, episode
from otbench.core.sandbox import DEFAULT_MAX_OUTPUT_BYTES, CallSandbox
from otbench.core.trajectory import Trajectory, json_text
from otbench.envs.base import Agent, Closing
from otbench.envs.bfcl.env import FUNCTION_REGISTRY
from otbench.envs.bfcl.functions import FUNCTIONS
from otbench.envs.bfcl.opacity import documented_tools, shown_names
from otbench.envs.wild import defaults
from otbench.envs.wild.dataset import SPLITS, WildData, load_data
from otbench.envs.wild.metrics import (
    METRIC_NAMES,
    METRIC_RULES,
    ExpectedCall,
    ExpectedTask,
    TurnRecord,
    breakdown,
    ref_indexes,
    resolve,
    score_dialogue,
    summarise,
)
from otbench.envs.wild.scenario import Dialogue, Task
from otbench.envs.wild.settings import SETTINGS
from otbench.errors import ConfigError, DataError
from otbench.modules.reference_agents import OracleAgent
from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS, DocumentedTool, ParameterSpec, Toolbox

TOOLSET = "wild"
REPLY_TOOL, ASK_TOOL = "reply_to_user", "ask_user"
CONTROL_TOOLS = (REPLY_TOOL, ASK_TOOL)
_OUTPUT_CHARS = 300  # a result as the agent reads it: a weather report fits, a long price history is cut
_USER, _CALL = "User: ", "Call: "
_YOUR_TURN = "(Your turn.)"
ANSWER_CUE = (f"(Your turn. The calls above returned. If their results answer the user's last message, reply "
              f'{{"calls": [{{"name": "{REPLY_TOOL}", "arguments": {{"message": "<the answer>"}}}}]}} now. '
              "Call a tool again only for a result that is still missing.)")
"""How a turn with calls in it ends, with the answer cue on: a small agent that is only told its turn goes on calling
tools whose results it already has, and rarely answers."""

WILD_INSTRUCTIONS = """\
You are an assistant in a conversation with a user, and you can call tools. Each reply is a list of calls. \
To get something done, call the tools it needs: several in one reply when they do not depend on each other; \
when one needs another's result, call the first, read its result, then call the next. When you have what the \
user asked for, or when their message needs no tool (thanks, small talk), answer with reply_to_user. When a \
request lacks a value you need and the conversation never gave it, ask for it with ask_user instead of \
guessing. Values the user gave earlier in the conversation still count, and "it", "that one" or "the same" \
refer to what was said before. When a tool is undocumented, make your best guess from its name and from what \
it returned before. Keep messages to one short sentence."""


def control_tools() -> list[DocumentedTool]:
    """The two fixed tools that end the agent's turn."""
    return [
        DocumentedTool(REPLY_TOOL, description="Sends your answer to the user and ends your turn. Use it once you "
                       "have what they asked for, or when their message needs no tool.",
                       parameters=[ParameterSpec("message", "string")]),
        DocumentedTool(ASK_TOOL, description="Asks the user for a value their request lacks, and ends your turn.",
                       parameters=[ParameterSpec("question", "string")]),
    ]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def render_result(result: CallResult) -> str:
    """A call and what it returned, as one transcript line."""
    arguments = json_text(result.call.arguments)
    if result.ok:
        output = json_text(result.output)
        if len(output) > _OUTPUT_CHARS:
            output = f"{output[:_OUTPUT_CHARS]}... ({len(output)} characters)"
    else:
        output = f"error: {_one_line(result.error or '')}"
    return f"{_CALL}{result.call.name}({arguments}) -> {output}"


class Transcript:
    """The conversation as the agent reads it; it only ever grows, so every prompt of a dialogue starts with
    the one before it (the server's prefix cache serves all but the new lines)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def user(self, message: str) -> None:
        self.lines.append(f"{_USER}{_one_line(message)}")

    def calls(self, results: Sequence[CallResult]) -> None:
        self.lines.extend(render_result(result) for result in results)

    def repeat(self, call: ToolCall) -> None:
        """A call refused because it repeats one of this turn exactly: its result is already in view."""
        self.lines.append(f"{_CALL}{call.name}({json_text(call.arguments)}) -> not run: the same call as above; "
                          "its result is above")

    def ending(self, ending: str, text: str) -> None:
        self.lines.append({"reply": f"Assistant: {_one_line(text)}", "ask": f"Assistant asked: {_one_line(text)}",
                           "none": "(no answer)"}[ending])

    def render(self, *, cue: bool = False) -> str:
        """The conversation, ending with the agent's turn; ``cue``: after calls, with how to answer (:data:`ANSWER_CUE`)."""
        return "Conversation so far:\n" + "\n".join(self.lines) + "\n" + (ANSWER_CUE if cue else _YOUR_TURN)


def read_position(text: str) -> tuple[str, int, int]:
    """From a transcript the agent was shown: the first user message, the index of the latest user turn and
    the calls made since it (what a reference agent needs to know where it is)."""
    lines = text.splitlines()
    users = [i for i, line in enumerate(lines) if line.startswith(_USER)]
    if not users:
        raise ValueError("not a Wild transcript: no user turn")
    made = sum(line.startswith(_CALL) for line in lines[users[-1]:])
    return lines[users[0]][len(_USER):], len(users) - 1, made


def _levels(task: Task) -> list[list[int]]:
    """The task's gold calls grouped by the round they can first be made in."""
    level: list[int] = []
    for call in task.calls:
        level.append(1 + max((level[i] for i in ref_indexes(call.arguments)), default=0))
    return [[i for i, value in enumerate(level) if value == round_] for round_ in range(1, max(level, default=0) + 1)]


class WildEnvironment(Closing):
    """Wild dialogues under one of BFCL's documentation settings.

    ``max_steps`` bounds the replies of one user turn; ``call_timeout``, ``max_calls_per_reply`` and
    ``max_output_bytes`` bound what one reply costs, as in BFCL; ``workers`` is the number of sandbox
    processes. ``repeats_refused``: an exact repeat of a call that worked earlier in the user turn is not
    run (:data:`~otbench.envs.wild.defaults.REPEATS_REFUSED`); ``answer_cue``: once calls ran in a turn, the
    prompt ends with :data:`ANSWER_CUE`. ``data`` replaces the committed dialogues (tests). Close it (or use
    ``with``) to stop the sandbox.
    """

    name = "wild"
    primary_metric = "task_accuracy"
    tie_break_metric = "call_correctness"
    metric_names = METRIC_NAMES
    metric_rules = METRIC_RULES
    learning = "offline"
    one_reply = False
    agent_instructions = WILD_INSTRUCTIONS
    faults: StateController | None = None
    """Injects failures into tool calls when set (:mod:`otbench.core.faults`); the fixed tools are never faulted."""

    def __init__(self, *, setting: str = "names_only", data: WildData | None = None, call_timeout: float = 5.0,
                 workers: int = 1, max_steps: int = defaults.MAX_STEPS,
                 max_calls_per_reply: int = DEFAULT_MAX_CALLS_PER_REPLY,
                 max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES, repeats_refused: bool = defaults.REPEATS_REFUSED,
                 answer_cue: bool = defaults.ANSWER_CUE) -> None:
        if setting not in SETTINGS:
            raise ConfigError(f"unknown setting {setting!r}; choose from {', '.join(SETTINGS)}")
        if min(max_steps, max_calls_per_reply, max_output_bytes) < 1:
            raise ConfigError("--max-steps, --max-calls-per-reply and --max-output-bytes must be at least 1")
        self.setting = setting
        self.data = data or load_data()
        self.max_steps = max_steps
        self.max_calls_per_reply = max_calls_per_reply
        self.repeats_refused = repeats_refused
        self.answer_cue = answer_cue
        self.to_real = shown_names(self.data.functions, setting)
        self.to_shown = {real: shown for shown, real in self.to_real.items()}
        self.defaults = {real: _defaults(real) for real in self.to_shown}
        self.control = control_tools()
        self.sandbox = CallSandbox(FUNCTION_REGISTRY, timeout=call_timeout, workers=workers,
                                   max_output_bytes=max_output_bytes)

    # -- the Environment contract ------------------------------------------------------------------------------
    def tasks(self, split: str = "test") -> list[Dialogue]:
        if split not in SPLITS:
            raise ConfigError(f"unknown split {split!r}; Wild has train and test")
        return self.data.split(split)

    def toolbox(self, docs: str | None = None) -> Toolbox:
        """The setting's docs of every function, or with ``"gold"`` BFCL's true docs under the same names."""
        if docs not in (None, "gold"):
            raise ConfigError(f"Wild's docs are its setting's own or gold, not {docs!r}")
        tools = documented_tools(self.data.functions, self.setting)
        if docs == "gold":
            true = documented_tools(self.data.functions, "gold")
            tools = [DocumentedTool.from_dict({**doc.to_dict(), "name": tool.name}) for tool, doc in zip(tools, true,
                                                                                                         strict=True)]
        return Toolbox({TOOLSET: tools}, meta={"env": self.name, "setting": self.setting, "docs": docs or "base"})

    def toolset_of(self, task: Dialogue) -> str:
        return TOOLSET

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        """One call outside any dialogue (an optimizer exploring a tool)."""
        return self._execute(call, call_episode(self.faults, toolset, call.name))

    def rollout(self, agent: Agent, toolbox: Toolbox, task: Dialogue) -> Trajectory:
        offered = [*self.control, *self._offered(toolbox, task)]
        attempt = episode(self.faults, task.id)
        transcript = Transcript()
        turns: list[TurnRecord] = []
        raws: list[str] = []
        errors: list[str] = []
        refused_repeats = 0
        for message in task.messages:
            transcript.user(message)
            replies: list[tuple[CallResult, ...]] = []
            this_turn: list[CallResult] = []  # what ran since the user spoke: an exact repeat of one is refused
            ending, text = "none", ""
            for _ in range(self.max_steps):
                reply = agent(question=transcript.render(cue=self.answer_cue and bool(this_turn)), tools=offered)
                raws.append(reply.raw)
                if not reply.calls:
                    errors.append(reply.error or "no call")
                    break
                control = [call for call in reply.calls if call.name in CONTROL_TOOLS]
                ran: list[CallResult] = []
                repeats = 0
                for call in self._within_cap([call for call in reply.calls if call.name not in CONTROL_TOOLS]):
                    if self.repeats_refused and earlier_identical(call, this_turn) is not None:
                        transcript.repeat(call)
                        repeats += 1
                        continue
                    ran.append(self._execute(call, attempt))
                    this_turn.append(ran[-1])
                    transcript.calls(ran[-1:])
                refused_repeats += repeats
                if ran:
                    replies.append(tuple(ran))
                elif repeats and not control:
                    break  # nothing but repeats: the agent has nothing new to do in this turn
                if control:
                    ending = "reply" if control[0].name == REPLY_TOOL else "ask"
                    value = control[0].arguments.get("message" if ending == "reply" else "question", "")
                    text = value if isinstance(value, str) else json.dumps(value, default=str)
                    break
            transcript.ending(ending, text)
            turns.append(TurnRecord(tuple(replies), ending))
        score = score_dialogue(self.expected(task), turns, task.switches)
        steps = [dataclasses.replace(result, value=float((number, step, index) in score.matched))
                 for number, turn in enumerate(turns) for step, results in enumerate(turn.steps)
                 for index, result in enumerate(results)]
        return Trajectory(task_id=task.id, toolset=TOOLSET, question="\n".join(f"{_USER}{m}" for m in task.messages),
                          steps=steps, reply=_record(transcript, raws), parse_error="; ".join(errors) or None,
                          metrics={**score.metrics(), "refused_repeats": float(refused_repeats)},
                          success=all(t.correct for t in score.tasks),
                          feedback=score.feedback() + (f"; {refused_repeats} exact repeat(s) of a call were not run"
                                                       if refused_repeats else ""))

    def summarise(self, trajectories: list[Trajectory]) -> dict[str, float]:
        return summarise([t.metrics for t in trajectories])

    def breakdown(self, trajectories: list[Trajectory]) -> dict[str, list[dict[str, Any]]]:
        """Tables to log and print beside the metrics: task accuracy and errors by hidden intention, task kind
        and number of switches."""
        return {"wild_breakdown": breakdown([t.metrics for t in trajectories])}

    def oracle_agent(self, tasks: list[Dialogue]) -> OracleAgent:
        """Makes each task's gold calls round by round, then answers (or asks, or just replies): it must score
        1 on every metric."""
        plans = {task.messages[0]: self.oracle_plan(task) for task in tasks}

        def next_calls(text: str) -> list[ToolCall]:
            first, turn, made = read_position(text)
            rounds = plans[first][turn]
            for calls in rounds:
                if made <= 0:
                    return calls
                made -= len(calls)
            return rounds[-1]

        return OracleAgent(next_calls)

    # -- Wild specifics ----------------------------------------------------------------------------------------
    def expected(self, dialogue: Dialogue) -> list[ExpectedTask]:
        """The dialogue's tasks as the metrics read them: gold calls under the names shown."""
        return [ExpectedTask(task.kind, task.intention, turns, tuple(
            ExpectedCall(self.to_shown[call.function], call.arguments, call.output, self.defaults[call.function])
            for call in task.calls)) for task, turns in zip(dialogue.tasks, dialogue.task_turns(), strict=True)]

    def oracle_plan(self, dialogue: Dialogue) -> list[list[list[ToolCall]]]:
        """Per user turn, the replies a perfect agent makes: rounds of gold calls, then the turn's ending."""
        plan: list[list[list[ToolCall]]] = []
        for task in dialogue.tasks:
            if task.kind == "clarification":
                plan.append([[ToolCall(ASK_TOOL, {"question": "Which one do you mean?"})]])
            if task.kind == "chitchat":
                plan.append([[ToolCall(REPLY_TOOL, {"message": "Happy to help!"})]])
                continue
            outputs = [call.output for call in task.calls]
            rounds = [[ToolCall(self.to_shown[task.calls[i].function], resolve(task.calls[i].arguments, outputs))
                       for i in level] for level in _levels(task)]
            answer = "; ".join(json.dumps(output, default=str)[:80] for output in outputs)
            plan.append([*rounds, [ToolCall(REPLY_TOOL, {"message": f"Here you are: {answer}"})]])
        return plan

    def docs_from(self, learned: Toolbox) -> Toolbox | None:
        """Docs learned in a BFCL optimize run as docs of this environment's tools: each BFCL function's doc
        (from the first toolset the run optimized where it has one: a description, parameter meanings or a
        learned schema) goes to the tool that is that function here; a function the run left blank keeps this
        setting's docs. None for docs of this environment (they apply as they are)."""
        source = learned.meta.get("env")
        if source in (None, self.name):
            return None
        if source != "bfcl":
            raise DataError(f"docs learned on {source} cannot be applied to wild: its tools are BFCL's functions")
        from otbench.envs.bfcl.data import ALL_CATEGORIES, load_tests

        tests = {test.id: test for test in load_tests(ALL_CATEGORIES)}
        chosen: dict[str, DocumentedTool] = {}
        for toolset in learned.meta.get(OPTIMIZED_TOOLSETS) or learned.toolset_ids():
            test = tests.get(toolset)
            if test is None:
                continue
            real_names = shown_names(test.functions, str(learned.meta.get("setting", "names_only")))
            for tool in learned.toolset(toolset):
                real = real_names.get(tool.name)
                if real in self.to_shown and real not in chosen and _documented(tool):
                    chosen[real] = tool
        docs = [DocumentedTool.from_dict({**tool.to_dict(), "name": self.to_shown[real]}) for real, tool in
                sorted(chosen.items())]
        return Toolbox({TOOLSET: docs}, meta={"env": self.name, "transferred_from": "bfcl"})

    def _offered(self, toolbox: Toolbox, dialogue: Dialogue) -> list[DocumentedTool]:
        wanted = set(dialogue.functions)
        return [tool for tool in toolbox.toolset(TOOLSET) if self.to_real.get(tool.name) in wanted]

    def _within_cap(self, calls: list[ToolCall]) -> list[ToolCall]:
        cap = self.max_calls_per_reply
        problem = f"not run: the reply made {len(calls)} calls, more than the {cap} allowed"
        return [call if index < cap or call.problem else dataclasses.replace(call, problem=problem)
                for index, call in enumerate(calls)]

    def _execute(self, call: ToolCall, attempt: Episode) -> CallResult:
        return attempt.run(call, lambda: self._run(call))

    def _run(self, call: ToolCall) -> CallResult:
        return self.sandbox.run(call, self.to_real.get(call.name))

    def close(self) -> None:
        self.sandbox.close()



def _documented(tool: DocumentedTool) -> bool:
    """Whether a tool's docs say anything: a description, a parameter's meaning, or a learned schema."""
    return bool(tool.description or tool.parameters_learned or any(tool.parameter_descriptions.values()))


def _defaults(function: str) -> dict[str, Any]:
    """The optional parameters of a BFCL function and their defaults, from its implementation."""
    return {name: parameter.default for name, parameter in inspect.signature(FUNCTIONS[function]).parameters.items()
            if parameter.default is not inspect.Parameter.empty}


_RAW_LINE = re.compile(r"\s+")


def _record(transcript: Transcript, raws: list[str]) -> str:
    """The whole dialogue as it happened, then every raw reply in order: what a reader of a run needs to quote
    a dialogue whole."""
    replies = "\n".join(f"reply {number}: {_RAW_LINE.sub(' ', raw).strip()}" for number, raw in enumerate(raws, 1))
    return "\n".join(transcript.lines) + "\n\nRaw replies:\n" + replies
