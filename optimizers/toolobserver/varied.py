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
    misfit: dict[str, dict[str, bool]] = field(default_factory=dict)
    """By task and tool: whether the tool's calls in the latest attempt that called it were all made to the wrong
    tool (well formed, working or refused, they did not fit the request). The latest says most: the agent saw more
    of the tool's doc when it made them."""

    def note(self, attempt: Trajectory, off_request: Collection[int] = (), misfits: Collection[int] = ()) -> None:
        """Remember ``attempt``'s calls; ``off_request``: indexes of its working calls that did not fit; ``misfits``:
        indexes of its calls, working or refused, made to the wrong tool (well formed, and not fitting the request)."""
        verdicts: dict[str, bool] = {}
        for index, step in enumerate(attempt.steps):
            if step.ok and index not in off_request:
                self.answered.setdefault(attempt.task_id, set()).add(step.call.name)
            else:
                self.failed.setdefault(attempt.task_id, set()).add(_call_key(step))
            verdicts[step.call.name] = verdicts.get(step.call.name, True) and index in misfits
        self.misfit.setdefault(attempt.task_id, {}).update(verdicts)

    def set_aside(self, task_id: str) -> set[str]:
        """The tools whose latest calls on ``task_id`` were made to the wrong tool and none of whose calls answered
        it: the next attempt's likely repeat."""
        latest = self.misfit.get(task_id, {})
        return {name for name, wrong in latest.items() if wrong} - self.answered.get(task_id, set())

    def left_out(self, attempt: Trajectory) -> set[str]:
        """When every call of ``attempt`` failed before, word for word, on its task: the tools whose calls only ever
        failed there (a repeat teaches nothing, and another try should choose otherwise); else none."""
        failed = self.failed.get(attempt.task_id, set())
        if not attempt.steps or not all(_call_key(step) in failed for step in attempt.steps):
            return set()
        return {name for name, _ in failed} - self.answered.get(attempt.task_id, set())

    def to_dict(self) -> dict[str, Any]:
        return {"failed": {task: sorted(calls) for task, calls in self.failed.items()},
                "answered": {task: sorted(tools) for task, tools in self.answered.items()},
                "misfit": {task: dict(sorted(tools.items())) for task, tools in self.misfit.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FailedCalls:
        return cls({task: {(name, arguments) for name, arguments in calls}
                    for task, calls in data.get("failed", {}).items()},
                   {task: set(tools) for task, tools in data.get("answered", {}).items()},
                   {task: {name: bool(wrong) for name, wrong in tools.items()}
                    for task, tools in data.get("misfit", {}).items()})


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
