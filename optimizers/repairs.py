"""Repairs: where an attempt did not answer its request while its tools answered others, the editor proposes the call
the request needed, the tools and the task's metric check it, and the doc shows the correction.

A toolset that answers most requests and fails one kind (a calculator that takes ``729**0.5`` and refuses
``sqrt(729)``; a database whose table description is no answer to who lives where) teaches the agent nothing through
its successes: the docs' worked examples are of other requests, and a small agent makes the same call again for the
next request of that kind. The calls tried and the calls that answered other requests show which tool answers and in
what form, and a small editor can apply them to the one request: asked for one call, it proposes one; the tool answers
it (tool calls cost no tokens), and, played as the attempt's reply, the task's metric says whether it answered the
request. Only a correction that did is stated in the doc, by code, beside the call tried: the agent then sees what
it did and what works, on the same request.

Each request is asked about once in a run (twice where the first answer repeats a call tried), and each toolset at
most :data:`REPAIRS_PER_TOOLSET` times (a checkpoint keeps both), so no editor call is paid twice.

The agent often finds a correction itself: a request one attempt failed, another attempt (an iteration earlier or
later, with other docs) answers with one call. :class:`Contrasts` states those the same way, by code and with no
editor call (``contrast_attempts``): the form refused and the form that answered, on the same request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory, preview
from otbench.envs.base import Environment, task_key
from otbench.modules.editor import DocEditor, EditorExchange
from otbench.modules.tool_docs import Toolbox
from otbench.optimizers.evidence import EvidenceBook, answered_line, render_call
from otbench.optimizers.rivals import FixedReply

CORRECTED = "Corrected: "
"""How code's sentence of a correction opens in a doc (so a later pass replaces it rather than adding another)."""
REPAIRS_PER_TOOLSET = 10
"""The most editor calls asking for one toolset's call in a run."""
_KEPT = 2  # corrections stated per tool: each is read at every call, and the kinds of request an agent fails are few
_SHOWN = 4  # calls that answered other requests, shown to the editor
_ERROR_CHARS = 100
_OUTPUT_CHARS = 120


@dataclass(frozen=True)
class Repair:
    """One correction asked for: the request, what was tried on it, and what the proposed call did."""

    toolset: str
    """The toolset of the attempt."""
    request: str
    """The request the attempt did not answer."""
    tried: CallResult
    """The attempt's first call, refused or returning what did not answer the request."""
    result: CallResult | None
    """The proposed call and what it returned (None: the reply gave no new call)."""
    answered: bool = False
    """Whether the proposed call, played as the attempt's reply, answered the request."""


@dataclass
class Repairs:
    """What a run asked the editor to repair (a checkpoint keeps it)."""

    asked: list[str] = field(default_factory=list)
    """Keys of the tasks already asked about."""
    spent: dict[str, int] = field(default_factory=dict)
    """Toolset -> editor calls made for it."""

    def run(self, env: Environment, editor: DocEditor, toolbox: Toolbox, pairs: Sequence[tuple[Any, Trajectory]],
            book: EvidenceBook, *, exhausted: Callable[[], bool] = lambda: False
            ) -> tuple[list[Repair], list[EditorExchange]]:
        """Ask for a call for each attempt that made calls, did not answer its request, and whose toolset answered
        another request (or, where none was judged, worked on one); make each proposed call, play a working one as the
        attempt's reply, and record it in ``book``. Returns the repairs and the editor's exchanges."""
        repairs: list[Repair] = []
        exchanges: list[EditorExchange] = []
        shown: dict[str, list[str]] = {}  # toolset -> what answered its other requests, read once
        for task, attempt in pairs:
            if (attempt.success or not attempt.steps or task_key(task) in self.asked
                    or self.spent.get(attempt.toolset, 0) >= REPAIRS_PER_TOOLSET or exhausted()):
                continue
            tools = toolbox.toolset(attempt.toolset)
            if attempt.toolset not in shown:
                shown[attempt.toolset] = _answered(pairs, book, attempt.toolset, [tool.name for tool in tools])
            if not shown[attempt.toolset]:
                continue
            self.asked.append(task_key(task))
            self.spent[attempt.toolset] = self.spent.get(attempt.toolset, 0) + 1
            tried = [_tried(step) for step in attempt.steps]
            call: ToolCall | None = None
            for repeated in (False, True):  # a small editor often copies the call tried: told so, it writes another
                exchange, proposed = editor.propose_call(tools, attempt.question, tried, shown[attempt.toolset],
                                                         repeated=repeated)
                exchanges.append(exchange)
                call = _call_of(proposed, toolbox, attempt.toolset)
                if call is None or not any(step.call == call for step in attempt.steps):
                    break
            else:
                call = None  # both answers were calls already tried
            if call is None:
                repairs.append(Repair(attempt.toolset, attempt.question, attempt.steps[0], None))
                continue
            result = env.execute(attempt.toolset, call)
            answered = result.ok and bool(env.rollout(FixedReply([call]), toolbox, task).success)
            repair = Repair(attempt.toolset, attempt.question, attempt.steps[0], result, answered)
            _record(book, repair)
            repairs.append(repair)
        return repairs, exchanges

    def to_dict(self) -> dict[str, Any]:
        return {"asked": list(self.asked), "spent": dict(self.spent)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Repairs:
        return cls(list(data.get("asked", [])), dict(data.get("spent", {})))


@dataclass
class Contrasts:
    """The requests whose attempts failed and answered with one call, across a run's iterations (a checkpoint keeps
    them): each pair of calls becomes a correction of the answering tool, stated by code."""

    failed: dict[str, list[str]] = field(default_factory=dict)
    """Task key -> the first call of the first attempt that did not answer it: rendered (a later attempt making the
    same call is no contrast), and as a doc states it."""
    stated: list[str] = field(default_factory=list)
    """Keys of the tasks whose contrast was recorded."""

    def add(self, pairs: Sequence[tuple[Any, Trajectory]], book: EvidenceBook) -> int:
        """Read one iteration's judged attempts; record in ``book`` each request now seen both failed and answered
        with one working call, at most :data:`_KEPT` a tool. Returns how many were recorded."""
        recorded = 0
        for task, attempt in pairs:
            key = task_key(task)
            if key in self.stated:
                continue
            working = [step for step in attempt.steps if step.ok]
            if not attempt.success:
                if attempt.steps and key not in self.failed:
                    self.failed[key] = [render_call(attempt.steps[0].call), _tried_in_doc(attempt.steps[0])]
                continue
            if key not in self.failed or len(working) != 1 or render_call(working[0].call) == self.failed[key][0]:
                continue
            self.stated.append(key)
            recorded += _correct(book, attempt.toolset, attempt.question, self.failed[key][1], working[0])
        return recorded

    def to_dict(self) -> dict[str, Any]:
        return {"failed": {key: list(failed) for key, failed in self.failed.items()}, "stated": list(self.stated)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Contrasts:
        return cls({key: list(failed) for key, failed in data.get("failed", {}).items()}, list(data.get("stated", [])))


def _answered(pairs: Sequence[tuple[Any, Trajectory]], book: EvidenceBook, toolset: str, names: list[str]) -> list[str]:
    """What shows the editor a form that works: the requests the toolset's attempts answered with one working call,
    and the calls judged to answer others, else the calls that worked."""
    answered = [answered_line(attempt.question, step) for _, attempt in pairs
                if attempt.toolset == toolset and attempt.success
                and len(working := [step for step in attempt.steps if step.ok]) == 1 for step in working]
    answered += [line for name in names for line in book.of(toolset, name).answered if line not in answered]
    return answered[:_SHOWN] or [line for name in names for line in book.of(toolset, name).worked][:_SHOWN]


def _refused(step: CallResult) -> str:
    return f"{render_call(step.call)} was refused ({(step.error or '').strip()[:_ERROR_CHARS]})"


def _tried(step: CallResult) -> str:
    """A call tried on the request, and how it failed to answer it, as the editor is shown it."""
    if not step.ok:
        return _refused(step)
    return f"{render_call(step.call)} returned {preview(step.output, _OUTPUT_CHARS)}, which did not answer it"


def _tried_in_doc(step: CallResult) -> str:
    """A call tried on the request, as a correction states it: a refused call with its error; a call that returned
    something else, without what it returned."""
    return _refused(step) if not step.ok else f"{render_call(step.call)} did not answer it"


def _call_of(proposed: dict[str, Any] | None, toolbox: Toolbox, toolset: str) -> ToolCall | None:
    """The proposed call, with only the arguments its tool takes where the docs show its parameters."""
    if proposed is None:
        return None
    tool = toolbox.get(toolset, proposed["name"])
    arguments = dict(proposed["arguments"])
    if tool is not None and tool.parameters is not None:
        known = {parameter.name for parameter in tool.parameters}
        arguments = {name: value for name, value in arguments.items() if name in known}
    return ToolCall(proposed["name"], arguments)


def _record(book: EvidenceBook, repair: Repair) -> None:
    """A proposed call as evidence of its tool: its result, its outcome, and, where it answered, the correction."""
    assert repair.result is not None
    evidence = book.of(repair.toolset, repair.result.call.name)
    evidence.add(repair.result)
    if repair.result.ok:
        evidence.add_outcome(repair.request, repair.result, repair.answered)
    if repair.answered:
        _correct(book, repair.toolset, repair.request, _tried_in_doc(repair.tried), repair.result)


def _correct(book: EvidenceBook, toolset: str, request: str, tried: str, answered: CallResult) -> bool:
    """Record that ``answered`` answered ``request`` where ``tried`` (as a doc states it) did not, as a correction of
    the answering tool: at most :data:`_KEPT` a tool, one a request. Returns whether it was recorded."""
    evidence = book.of(toolset, answered.call.name)
    if len(evidence.corrections) >= _KEPT or any(kept[0] == request for kept in evidence.corrections):
        return False
    evidence.corrections.append([request, tried, render_call(answered.call), preview(answered.output, _OUTPUT_CHARS)])
    return True


def correction_sentence(request: str, tried: str, call: str, output: str) -> str:
    """A correction as its doc states it: the request, what was tried on it (:func:`_tried_in_doc`), the call that
    answered it and what it returned."""
    return f'{CORRECTED}for "{request[:200]}", {tried}; {call} answered it, returning {output}.'


def state_repairs(toolbox: Toolbox, toolset: str, book: EvidenceBook) -> int:
    """Close each tool's doc with its corrections, stated by code, so what the agent tried and what works reach the
    agent even when the editor leaves them out. Returns how many tools' docs changed."""
    changed = 0
    for tool in toolbox.toolset(toolset):
        corrections = book.of(toolset, tool.name).corrections
        if not corrections:
            continue
        sentences = " ".join(correction_sentence(*correction) for correction in corrections)
        kept = tool.description.split(CORRECTED)[0].strip()
        text = " ".join(part for part in (kept, sentences) if part)
        if text != tool.description:
            tool.with_docs(description=text)
            changed += 1
    return changed
