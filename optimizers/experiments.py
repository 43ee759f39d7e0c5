"""Experiments: where every call the agent made to a tool failed, the learner calls the tool itself.

A small agent's first guess is often wrong for every tool at once (a dict for a parameter the code
multiplies), and then no call works, nothing is learned, and the next attempt repeats the guess.
Evidence is cheap to make instead: the request says the values (the numbers and quoted texts in it,
or the ones the agent wrapped in its failed call), and the tool's runtime errors say what type the code
used (``is used as a number``, :func:`otbench.evals.invented.runtime_rules`). So for each tool whose
every observed call failed, the learner makes up to :data:`CALLS_PER_TOOL` calls of its own: the agent's
own call with each argument unwrapped first, then the request's values in the kind the errors point to,
then simple probes. The first call that works is evidence like any other, and its input goes to the other
tools that take it (:func:`same_input`), so what each returns for one input shows how they differ. Where outcomes
may be judged (train tasks), each working call is also played as the attempt's reply and the task's metric says
whether it answered the request.

Nothing is spent where a call already worked, nor on a tool the agent never called, and no tool is
experimented on past its budget in a run (a checkpoint keeps what was spent).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory, preview
from otbench.envs.base import Environment
from otbench.modules.tool_docs import DocumentedTool, Toolbox, tool_key
from otbench.optimizers.evidence import EvidenceBook, ToolEvidence, render_call
from otbench.optimizers.request_values import Sources, leaf_values
from otbench.optimizers.rivals import RIVALS_KEPT, FixedReply, rivals

_KEPT = 3  # experiment lines kept per tool
WORKED = "A call that worked: "
"""How code's sentence of a working call opens in a doc (so a later pass replaces it rather than adding another)."""
CALLS_PER_TOOL = 6
"""The most calls the learner makes of its own to one tool in a run, the other tools' calls with a working input
aside."""

_NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\w|\.\w)")
"""A number as a request writes it: ``3``, ``-2.5``, ``250,000`` (thousands grouped: one number), one that ends
the sentence (``at most 50.``) too."""
_QUOTED = re.compile(r"\"([^\"]{1,200})\"|“([^”]{1,200})”|'([^']{2,200})'(?!\w)")
_PROBES: dict[str | None, tuple[Any, ...]] = {
    "integer": (1,), "number": (1, 2.5), "string": ("a",), "array": ([1],), "object": ({},), "boolean": (True,),
    None: (1, "a"),
}


@dataclass(frozen=True)
class ExperimentCall:
    """A call the learner made itself, and the request its values came from."""

    toolset: str
    """The toolset of the tool called."""
    request: str
    """The request (of the task whose attempt failed) the values were taken from."""
    result: CallResult
    """The call and what it returned."""
    answered: bool | None = None
    """Whether the call, played as the attempt's reply, answered the request (None: not judged)."""
    placed: bool = True
    """Whether each value was in its own place (one parameter, or the agent's own mapping), not a guessed mapping of
    the request's values to several parameters."""


@dataclass
class Experiments:
    """What a run spent on experiments, per tool (a checkpoint keeps it)."""

    spent: dict[str, int] = field(default_factory=dict)
    """Tool key -> calls made of the learner's own."""

    def run(self, env: Environment, toolbox: Toolbox, pairs: Sequence[tuple[Any, Trajectory]], book: EvidenceBook, *,
            judge: bool, untried: bool = False) -> list[ExperimentCall]:
        """Experiment on each tool of the attempts' toolsets whose every observed call failed and that the attempts
        called (with ``untried``, also those no attempt called: before any attempt), with the values of the requests
        it was called for; record every call in ``book`` (judged, with ``judge``, as the attempt's one call) and
        return them."""
        made: list[ExperimentCall] = []
        for task, attempt in pairs:
            tools = toolbox.toolset(attempt.toolset)
            others = rivals(tools)
            for tool in tools:
                failed = [step for step in attempt.steps if step.call.name == tool.name and not step.ok]
                if book.of(attempt.toolset, tool.name).working or not (failed or untried):
                    continue
                found = self._search(env, attempt.toolset, tool, attempt.question, failed, book)
                working = next(((result, placed) for result, placed in found if result.ok), None)
                if working is not None:  # the same input on every tool that takes it shows how they differ
                    found += [(env.execute(attempt.toolset, call), working[1])
                              for call in same_input(tools, working[0].call, others.get(tool.name, ()))]
                for result, placed in found:
                    item = ExperimentCall(attempt.toolset, attempt.question, result, placed=placed)
                    if judge and result.ok:
                        item = self._judged(env, toolbox, task, item)
                    _record(book, item)
                    made.append(item)
        return made

    def _search(self, env: Environment, toolset: str, tool: DocumentedTool, request: str, failed: list[CallResult],
                book: EvidenceBook) -> list[tuple[CallResult, bool]]:
        """Calls of ``tool`` (each with whether its values were in place) until one works or the budget is spent."""
        key = tool_key(toolset, tool.name)
        made: list[tuple[CallResult, bool]] = []
        for arguments, placed in candidate_arguments(tool, book.of(toolset, tool.name), request, failed):
            if self.spent.get(key, 0) >= CALLS_PER_TOOL:
                break
            if any(step.call.arguments == arguments for step in failed):
                continue  # the agent's own call: it failed already
            self.spent[key] = self.spent.get(key, 0) + 1
            result = env.execute(toolset, ToolCall(tool.name, arguments))
            made.append((result, placed))
            if result.ok:
                break
        return made

    @staticmethod
    def _judged(env: Environment, toolbox: Toolbox, task: Any, item: ExperimentCall) -> ExperimentCall:
        """The call played as the attempt's one reply: whether the task's metric then says the request was answered."""
        played = env.rollout(FixedReply([item.result.call]), toolbox, task)
        return replace(item, answered=bool(played.success))

    def to_dict(self) -> dict[str, Any]:
        return {"spent": dict(self.spent)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Experiments:
        return cls(dict(data.get("spent", {})))


def _record(book: EvidenceBook, item: ExperimentCall) -> None:
    """A call as evidence of its tool: its result, its outcome where judged, and, where it worked with its values in
    place (or answered its request), the example its doc closes with."""
    evidence = book.of(item.toolset, item.result.call.name)
    evidence.add(item.result)
    if item.answered is not None:
        evidence.add_outcome(item.request, item.result, item.answered)
    arguments = item.result.call.arguments if isinstance(item.result.call.arguments, dict) else {}
    shown = item.placed or bool(item.answered)  # a guessed mapping is no example to copy, unless it answered
    if item.result.ok and shown and len(evidence.experiments) < _KEPT:
        evidence.experiments.append([arguments, preview(item.result.output, 120)])


def same_input(tools: Sequence[DocumentedTool], call: ToolCall, interface: Sequence[str]) -> list[ToolCall]:
    """``call``'s input for the other tools that take it, at most :data:`~otbench.optimizers.rivals.RIVALS_KEPT`
    (a pool of a thousand tools is not called a thousand times for one input): each tool of its
    interface with the same arguments, and, for a call of one argument, each tool of one required parameter under
    that parameter's name (a measure of ``ball`` takes the number a measure of ``circle`` took): what each returns for
    one input tells them apart."""
    calls = [replace(call, name=name) for name in interface]
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    if len(arguments) == 1:
        (value,) = arguments.values()
        for tool in tools:
            required = [p.name for p in tool.parameters or () if p.required]
            if tool.name != call.name and tool.name not in interface and len(required) == 1:
                calls.append(ToolCall(tool.name, {required[0]: value}))
    return calls[:RIVALS_KEPT]


def state_experiments(toolbox: Toolbox, toolset: str, book: EvidenceBook) -> int:
    """Close each tool's doc with the call the learner made that worked on it and, where other tools were given the
    same input, what each of them returned: stated by code, so the call form and the difference reach the agent
    even when the editor leaves them out. Returns how many tools' docs changed."""
    changed = 0
    found = {tool.name: book.of(toolset, tool.name).experiments for tool in toolbox.toolset(toolset)}
    for tool in toolbox.toolset(toolset):
        if not found[tool.name]:
            continue
        arguments, output = found[tool.name][0]
        values = sorted(map(str, arguments.values()))
        alike = [f"{name} returned {other_output}" for name, made in found.items() if name != tool.name
                 for other_arguments, other_output in made if sorted(map(str, other_arguments.values())) == values]
        sentence = (f"{WORKED}{render_call(ToolCall(tool.name, arguments))} returned {output}"
                    + (f" (given the same, {'; '.join(alike)})" if alike else "") + ".")
        if sentence not in tool.description:
            kept = tool.description.split(WORKED)[0].strip()
            tool.with_docs(description=" ".join(part for part in (kept, sentence) if part))
            changed += 1
    return changed


def request_values(request: str) -> list[Any]:
    """The numbers (as written: 3, 2.5, 250,000) and quoted texts of a request, in order."""
    values: list[Any] = []
    for match in _QUOTED.finditer(request):
        values.append(next(group for group in match.groups() if group is not None))
    for written in _NUMBER.findall(request):
        number = written.replace(",", "")
        values.append(float(number) if "." in number else int(number))
    return list(_unique(values))


def candidate_arguments(tool: DocumentedTool, evidence: ToolEvidence, request: str,
                        failed: Sequence[CallResult]) -> Iterator[tuple[dict[str, Any], bool]]:
    """Argument sets to try, best first, each with whether every value is in its own place: first the agent's own
    failed calls with each argument unwrapped to the one value it wrapped (``{"time": {"value": 12}}`` -> ``12``: the
    agent's own mapping of values to parameters); then each required parameter (shown, learned or named by the tool's
    errors) given the request's values of the kind the errors say the code used, and the values the agent wrapped
    that the request gives, then simple probes of that kind. A tool of several parameters filled that way gets a
    guessed mapping (not in place): such a call shows the form of a call, not which value goes where."""
    parameters = [p.name for p in tool.parameters or () if p.required] or list(evidence.required or [])
    if not parameters:
        return
    for step in failed:
        given = step.call.arguments if isinstance(step.call.arguments, dict) else {}
        unwrapped = {name: _one_value(given[name]) for name in parameters if name in given}
        said_texts = all(_quoted_from(request, value) for value in unwrapped.values() if isinstance(value, str))
        if len(unwrapped) == len(parameters) and unwrapped != {name: given[name] for name in parameters} and said_texts:
            yield unwrapped, True
    said = Sources([request])
    offered = request_values(request)
    pools = []
    for name in parameters:
        kind = evidence.stated_type(name)
        wrapped = [value for step in failed if isinstance(step.call.arguments, dict)
                   for value in leaf_values(step.call.arguments.get(name))
                   if (_quoted_from(request, value) if isinstance(value, str) else said.gives(value))]
        values = [value for value in [*offered, *wrapped] if _fits(value, kind)]
        pools.append(list(_unique([*values, *_PROBES[kind if kind in _PROBES else None]])))
    for index in range(max(len(pool) for pool in pools)):
        yield ({name: pool[(index + offset) % len(pool)] for offset, (name, pool) in enumerate(zip(parameters, pools))},
               len(parameters) == 1)


def _quoted_from(request: str, text: str) -> bool:
    """Whether a text is written in the request as it is (a text the agent made up, ``cube_root`` for "the cube root",
    is no value the request gave)."""
    return text.casefold() in request.casefold()


def _one_value(value: Any) -> Any:
    """The one plain value an object or list wraps (``{"value": 12}`` -> 12), else the value as it is."""
    if isinstance(value, (dict, list)):
        leaves = list(leaf_values(value))
        return leaves[0] if len(leaves) == 1 else value
    return value


def _fits(value: Any, kind: str | None) -> bool:
    """Whether a value is of the kind the errors point to (any kind where they point to none)."""
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind in ("number", "integer"):
        return is_number and (kind == "number" or isinstance(value, int) or float(value).is_integer())
    if kind == "string":
        return isinstance(value, str)
    return kind is None


def _unique(values: list[Any]) -> Iterator[Any]:
    seen: list[Any] = []
    for value in values:
        if not any(value == other and type(value) is type(other) for other in seen):
            seen.append(value)
            yield value

