"""Repairs: where a tool refused a request's call but worked on other requests, the editor proposes the call that
request needed, the tool and the task's metric check it, and the doc shows the correction.

A tool that works on most requests and refuses one form (``sqrt(729)`` where it takes ``729**0.5``, a city where it
takes a zone name) teaches the agent nothing through its successes: the docs' worked examples are of other requests,
and a small agent writes the refused form again for the next request of that kind. The refusal's words and the calls
that worked show the form the tool takes, and a small editor can apply it to the one request: asked for one call, it
proposes one; the tool answers it (tool calls cost no tokens), and, played as the attempt's reply, the task's metric
says whether it answered the request. Only a correction that did is stated in the doc, by code, beside the refused
call: the agent then sees the form it got wrong and the form that works, on the same request.

Each request and tool is asked about once in a run, and each tool at most :data:`REPAIRS_PER_TOOL` times (a
checkpoint keeps both), so no editor call is paid twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory, preview
from otbench.envs.base import Environment, task_key
from otbench.modules.editor import DocEditor, EditorExchange
from otbench.modules.tool_docs import Toolbox, tool_key
from otbench.optimizers.evidence import EvidenceBook, render_call
from otbench.optimizers.rivals import FixedReply

CORRECTED = "Corrected: "
"""How code's sentence of a correction opens in a doc (so a later pass replaces it rather than adding another)."""
REPAIRS_PER_TOOL = 3
"""The most editor calls asking for one tool's call in a run."""
_KEPT = 2  # corrections stated per tool: the forms an agent gets wrong are few, and each sentence is read at every call
_ERROR_CHARS = 100


@dataclass(frozen=True)
class Repair:
    """One correction asked for: the request, the calls refused on it, and what the proposed call did."""

    toolset: str
    """The toolset of the tool called."""
    request: str
    """The request the refused calls were made for."""
    refused: tuple[str, ...]
    """The refused calls, each with the error that refused it (``f(x=1) failed: ...``)."""
    result: CallResult | None
    """The proposed call and what it returned (None: the reply gave no new call)."""
    answered: bool = False
    """Whether the proposed call, played as the attempt's reply, answered the request."""


@dataclass
class Repairs:
    """What a run asked the editor to repair (a checkpoint keeps it)."""

    asked: list[str] = field(default_factory=list)
    """Keys of the requests and tools already asked about."""
    spent: dict[str, int] = field(default_factory=dict)
    """Tool key -> editor calls made for it."""

    def run(self, env: Environment, editor: DocEditor, toolbox: Toolbox, pairs: Sequence[tuple[Any, Trajectory]],
            book: EvidenceBook, *, exhausted: Callable[[], bool] = lambda: False
            ) -> tuple[list[Repair], list[EditorExchange]]:
        """Ask for a call for each failed attempt's tool whose every call in it was refused while some call of it
        worked elsewhere; make each proposed call, play a working one as the attempt's reply, and record it in
        ``book``. Returns the repairs and the editor's exchanges."""
        repairs: list[Repair] = []
        exchanges: list[EditorExchange] = []
        for task, attempt in pairs:
            if attempt.success:
                continue
            for name in dict.fromkeys(step.call.name for step in attempt.steps):
                tool = toolbox.get(attempt.toolset, name)
                evidence = book.of(attempt.toolset, name)
                steps = [step for step in attempt.steps if step.call.name == name]
                key, asked = tool_key(attempt.toolset, name), f"{task_key(task)}\n{name}"
                if (tool is None or not tool.parameters or not evidence.worked or any(step.ok for step in steps)
                        or asked in self.asked or self.spent.get(key, 0) >= REPAIRS_PER_TOOL or exhausted()):
                    continue
                self.asked.append(asked)
                self.spent[key] = self.spent.get(key, 0) + 1
                refused = tuple(f"{render_call(step.call)} failed: {(step.error or '')[:_ERROR_CHARS]}" for step in steps)
                exchange, arguments = editor.propose_call(tool, attempt.question, list(refused), evidence.worked)
                exchanges.append(exchange)
                if arguments is None or any(step.call.arguments == arguments for step in steps):
                    repairs.append(Repair(attempt.toolset, attempt.question, refused, None))
                    continue
                call = ToolCall(name, arguments)
                result = env.execute(attempt.toolset, call)
                answered = result.ok and bool(env.rollout(FixedReply([call]), toolbox, task).success)
                repair = Repair(attempt.toolset, attempt.question, refused, result, answered)
                _record(book, repair)
                repairs.append(repair)
        return repairs, exchanges

    def to_dict(self) -> dict[str, Any]:
        return {"asked": list(self.asked), "spent": dict(self.spent)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Repairs:
        return cls(list(data.get("asked", [])), dict(data.get("spent", {})))


def _record(book: EvidenceBook, repair: Repair) -> None:
    """A proposed call as evidence of its tool: its result, its outcome, and, where it answered, the correction."""
    assert repair.result is not None
    evidence = book.of(repair.toolset, repair.result.call.name)
    evidence.add(repair.result)
    if repair.result.ok:
        evidence.add_outcome(repair.request, repair.result, repair.answered)
    if repair.answered and len(evidence.corrections) < _KEPT:
        evidence.corrections.append([repair.request, repair.refused[0], render_call(repair.result.call),
                                     preview(repair.result.output, 120)])


def correction_sentence(request: str, refused: str, call: str, output: str) -> str:
    """A correction as its doc states it: the request, the refused call with its error, the call that answered it."""
    refused_call, _, error = refused.partition(" failed: ")
    return (f'{CORRECTED}for "{request[:200]}", {refused_call} was refused ({error.strip()}); '
            f"{call} answered it, returning {output}.")


def state_repairs(toolbox: Toolbox, toolset: str, book: EvidenceBook) -> int:
    """Close each tool's doc with its corrections, stated by code, so the form the agent got wrong and the one that
    works reach the agent even when the editor leaves them out. Returns how many tools' docs changed."""
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
