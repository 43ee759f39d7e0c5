"""Tools that could serve the same call, and what each does when handed the calls the others got.

Several tools of a set take the same parameters (chess engines: a position; search tools: a query;
unit converters: a value) and differ only in what they do with them: those are a tool's *rivals*.
The agent's own choices say little about rivals it never picks, so the optimizer repeats each call
that worked on every rival with the same arguments. Where an attempt is a single reply whose
outcome the optimizer may know (the train tasks of an offline run, or ``--oracle-feedback``), the
repeat is *judged*: the attempt is played again with the call sent to the rival, and the task's own
metric says whether that rival would have answered the request. That tells confusable tools apart
by what they did for real requests, with no gold docs and no LLM call.

Two tools are rivals when their interfaces are known (shown by the setting, or learned from what
the tools answered) and require the same parameter names; a tool whose interface is unknown has none.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory, preview
from otbench.envs.base import Environment
from otbench.modules.agent import AgentReply
from otbench.modules.tool_docs import DocumentedTool, Toolbox


def interface(tool: DocumentedTool) -> tuple[str, ...] | None:
    """The required parameter names a tool's docs show (or learned), in order; None when unknown or when it
    requires none (a tool that takes nothing shares no call with another)."""
    if tool.parameters is None:
        return None
    required = tuple(sorted(p.name for p in tool.parameters if p.required))
    return required or None


RIVALS_KEPT = 12
"""The most rivals a tool has: those nearest it in the toolset's order, alternately after and before it. A pool of
a thousand tools has 481 unit converters taking one ``value``: each call is repeated on a dozen of them, not on all
(every optimizer reads a toolset in the environment's order, where an app's tools stand together)."""


def rivals(tools: Sequence[DocumentedTool]) -> dict[str, tuple[str, ...]]:
    """Each tool's rivals among ``tools`` (same known interface), by name, at most :data:`RIVALS_KEPT` each, nearest
    first; tools without rivals left out."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for tool in tools:
        key = interface(tool)
        if key is not None:
            groups.setdefault(key, []).append(tool.name)
    return {name: _nearest(members, place) for members in groups.values() if len(members) > 1
            for place, name in enumerate(members)}


def _nearest(members: list[str], place: int) -> tuple[str, ...]:
    """The members nearest ``members[place]``, alternately after and before it, at most :data:`RIVALS_KEPT`; all of
    them, in order, when they are no more."""
    if len(members) <= RIVALS_KEPT + 1:
        return tuple(other for index, other in enumerate(members) if index != place)
    near: list[str] = []
    for distance in range(1, len(members)):
        for index in (place + distance, place - distance):
            if 0 <= index < len(members) and len(near) < RIVALS_KEPT:
                near.append(members[index])
    return tuple(near)


@dataclass(frozen=True)
class JudgedCall:
    """A call an attempt made, or its repeat on a rival, with whether the attempt then answered its request."""

    request: str
    """The task's request."""
    result: CallResult
    """The call as made (under the tool it went to) and what it returned."""
    answered: bool
    """Whether the attempt, with this call, succeeded by the task's metric."""
    repeat: bool = False
    """Whether the call is a repeat on a rival (new evidence of that tool), not one the attempt made."""


class FixedReply:
    """An agent whose reply is given: an attempt played again with one call changed."""

    def __init__(self, calls: list[ToolCall]) -> None:
        self.calls = calls

    def __call__(self, **_: Any) -> AgentReply:
        return AgentReply(raw=json.dumps({"calls": [call.to_dict() for call in self.calls]}), calls=list(self.calls))


def _key(task_id: str, calls: Sequence[ToolCall]) -> str:
    return task_id + json.dumps([[call.name, call.arguments] for call in calls], sort_keys=True, default=str)


class Replays:
    """Repeats of attempts' calls on rivals, each made once per run (a checkpoint keeps which, and what the
    repeats outside any task returned)."""

    def __init__(self, done: Iterable[str] = (), returned: dict[str, str] | None = None) -> None:
        self.done: set[str] = set(done)
        self.returned: dict[str, str] = dict(returned or {})
        """Call key -> what the call returned (a preview), for the calls made outside any task and their originals."""

    def judged(self, env: Environment, toolbox: Toolbox, task: Any, attempt: Trajectory) -> list[JudgedCall]:
        """Each working call of the attempt judged as the request's answer on its own tool and on every rival: the
        attempt is played again with that call sent to the tool and without the attempt's other calls of the same
        arguments to tools of the same interface (an agent unsure which converter to use calls two with one value;
        the metric then fails both, and neither would be credited). A call that was the only one of its interface is judged by the attempt's own
        outcome. Nothing is played twice in a run: a fixed reply answers the same every time."""
        calls = [step.call for step in attempt.steps]
        others = rivals(toolbox.toolset(attempt.toolset))
        judged = []
        for index, step in enumerate(attempt.steps):
            if not step.ok:
                continue  # a call that failed fails on a rival taking the same arguments the same way
            group = {step.call.name, *others.get(step.call.name, ())}
            kept = [j for j, call in enumerate(calls)
                    if j == index or call.name not in group or call.arguments != step.call.arguments]
            position = kept.index(index)
            for tool in [step.call.name, *others.get(step.call.name, ())]:
                variant = [replace(calls[j], name=tool) if j == index else calls[j] for j in kept]
                key = _key(attempt.task_id, variant)
                if key in self.done:
                    continue
                self.done.add(key)
                if variant == calls:
                    judged.append(JudgedCall(attempt.question, step, attempt.success))
                    continue
                replayed = env.rollout(FixedReply(variant), toolbox, task)
                if len(replayed.steps) > position:
                    judged.append(JudgedCall(attempt.question, replayed.steps[position], replayed.success,
                                             repeat=tool != step.call.name))
        return judged

    def outside(self, env: Environment, toolset: str, toolbox: Toolbox, steps: Iterable[CallResult]) -> list[CallResult]:
        """Each working call repeated on every rival of its tool outside any task (``env.execute``), once a run:
        what each rival returns for the same arguments, where no outcome may be judged."""
        others = rivals(toolbox.toolset(toolset))
        repeats = []
        for step in steps:
            if not step.ok:
                continue
            self.returned.setdefault(_key(toolset, [step.call]), preview(step.output))
            for rival in others.get(step.call.name, ()):
                call = replace(step.call, name=rival)
                key = _key(toolset, [call])
                if key in self.done:
                    continue
                self.done.add(key)
                repeat = env.execute(toolset, call)
                if repeat.ok:
                    self.returned[key] = preview(repeat.output)
                repeats.append(repeat)
        return repeats

    def ambiguous(self, toolset: str, toolbox: Toolbox, steps: Iterable[CallResult]) -> bool:
        """Whether a rival of a tool these calls went to returned something else for the same arguments: then
        choosing between them mattered, and the attempt's working calls do not show that it chose right."""
        others = rivals(toolbox.toolset(toolset))
        for step in steps:
            own = self.returned.get(_key(toolset, [step.call]))
            for rival in others.get(step.call.name, ()) if step.ok and own is not None else ():
                answer = self.returned.get(_key(toolset, [replace(step.call, name=rival)]))
                if answer is not None and answer != own:
                    return True
        return False

    def to_dict(self) -> dict[str, Any]:
        return {"done": sorted(self.done), "returned": self.returned}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Replays:
        return cls(data.get("done", ()), data.get("returned", {}))
