"""Making an attempt again when it only repeats what already failed (``vary_repeats``), or before it would
(``set_aside_misfits``).

A small agent at temperature 0 answers the same request with the same call as long as its prompt barely
changes, and a doc that gained a sentence ("must be a 5-digit US zip code", "Not for requests like …")
often does not change its choice: the next attempt repeats a refused call word for word, learns nothing
new, and the task converges on a failure. Sampling at a temperature does not help (the embedded 1.5B model
made the same call in nine samples of nine at 0.7). The attempt is made again without the tools whose
calls only ever failed on this task, so the agent makes another choice, and what it then calls is evidence
like any other.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import dspy

from otbench.core.trajectory import Trajectory, json_text
from otbench.modules.tool_docs import DocumentedTool


@dataclass
class FailedCalls:
    """What each task's attempts showed so far: the calls that failed (refused, or working but not fitting the
    request) and the tools that answered it with a call that worked and fit."""

    failed: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    """By task: each failed call as (tool, its arguments as JSON)."""
    answered: dict[str, set[str]] = field(default_factory=dict)
    """By task: the tools with a call that worked and fit the request."""
    misfits: dict[str, set[str]] = field(default_factory=dict)
    """By task: the tools with a call made to the wrong tool (working or refused, it did not fit the request)."""
    fitted: dict[str, set[str]] = field(default_factory=dict)
    """By task: the tools with a call that fit the request, whether it worked or was refused (a refusal alone says
    the call was wrong, not the tool)."""

    def note(self, attempt: Trajectory, off_request: Collection[int] = (), misfits: Collection[int] = ()) -> None:
        """Remember ``attempt``'s calls; ``off_request``: indexes of its working calls that did not fit; ``misfits``:
        indexes of its calls, working or refused, that did not fit."""
        for index, step in enumerate(attempt.steps):
            if step.ok and index not in off_request:
                self.answered.setdefault(attempt.task_id, set()).add(step.call.name)
            else:
                self.failed.setdefault(attempt.task_id, set()).add(_call_key(step))
            kind = self.misfits if index in misfits else self.fitted
            kind.setdefault(attempt.task_id, set()).add(step.call.name)

    def set_aside(self, task_id: str) -> set[str]:
        """The tools every call of which on ``task_id`` was made to the wrong tool: the next attempt's likely
        repeat."""
        return self.misfits.get(task_id, set()) - self.fitted.get(task_id, set()) - self.answered.get(task_id, set())

    def left_out(self, attempt: Trajectory) -> set[str]:
        """When every call of ``attempt`` failed before, word for word, on its task: the tools whose calls only ever
        failed there (a repeat teaches nothing, and another try should choose otherwise); else none."""
        failed = self.failed.get(attempt.task_id, set())
        if not attempt.steps or not all(_call_key(step) in failed for step in attempt.steps):
            return set()
        return {name for name, _ in failed} - self.answered.get(attempt.task_id, set())

    def to_dict(self) -> dict[str, Any]:
        return {"failed": {task: sorted(calls) for task, calls in self.failed.items()},
                **{kind: {task: sorted(tools) for task, tools in getattr(self, kind).items()}
                   for kind in ("answered", "misfits", "fitted")}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FailedCalls:
        tools = {kind: {task: set(names) for task, names in data.get(kind, {}).items()}
                 for kind in ("answered", "misfits", "fitted")}
        return cls({task: {(name, arguments) for name, arguments in calls}
                    for task, calls in data.get("failed", {}).items()}, **tools)


def _call_key(step: Any) -> tuple[str, str]:
    return step.call.name, json_text(step.call.arguments)


class VariedAgent(dspy.Module):
    """A one-reply agent shown, for each request in ``left_out``, its toolset without the tools named there."""

    def __init__(self, agent: Any, left_out: Mapping[str, set[str]]) -> None:
        super().__init__()
        self.agent = agent
        self.left_out = left_out

    def forward(self, question: str, tools: list[DocumentedTool]) -> Any:
        hidden = self.left_out.get(question, set())
        return self.agent(question=question, tools=[tool for tool in tools if tool.name not in hidden])
