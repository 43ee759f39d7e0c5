"""What happened when an agent met a task: the record optimizers read and metrics score.

It is deliberately environment-neutral (a question, steps of call and result, an outcome and
metrics), so an optimizer sees every environment through the same shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from otbench.core.calls import CallResult, ToolCall

_MAX_PREVIEW = 600


def preview(value: Any, limit: int = _MAX_PREVIEW) -> str:
    """A bounded one-line rendering of a tool output for prompts and logs.

    Huge integers are summarised: CPython refuses to print ints of more than 4300 digits.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 14_000:
        return f"<integer with about {int(value.bit_length() * 0.30103)} digits>"
    try:
        text = repr(value)
    except ValueError:
        text = f"<{type(value).__name__} too large to print>"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def json_text(value: Any) -> str:
    """``value`` as JSON text (what JSON cannot hold as its ``str``), or, where Python cannot print it (an integer
    of more than 4300 digits, as a factorial returns), that part as its :func:`preview`, a JSON string: a tool's
    output must never stop a run that shows or keeps it, and a call kept with such an output is still a call."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{json.dumps(str(key), ensure_ascii=False)}: {json_text(item)}"
                                   for key, item in value.items()) + "}"
        return json.dumps(preview(value), ensure_ascii=False)


@dataclass
class Trajectory:
    """One attempt at one task.

    ``steps`` are the executed calls under the names the agent saw; ``reply`` is the raw model
    text; ``parse_error`` says why a reply held no readable call; ``metrics`` are the
    environment's scores; ``success`` is the outcome bit an editor may be given.
    """

    task_id: str
    toolset: str
    question: str
    steps: list[CallResult] = field(default_factory=list)
    reply: str = ""
    parse_error: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    success: bool = False
    feedback: str = ""
    usage: dict[str, float] = field(default_factory=dict)
    """What the task cost: ``tokens`` (paid and cache-served), ``paid_tokens``, ``seconds``, ``tool_calls`` (empty where
    unmeasured)."""

    @property
    def outputs(self) -> list[Any]:
        """What the calls that ran returned, in call order: the evidence a task's metric usually reads."""
        return [step.output for step in self.steps if step.ok]

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "toolset": self.toolset,
            "question": self.question,
            "steps": [
                {"call": step.call.to_dict(), "ok": step.ok,
                 "output": preview(step.output) if step.ok else None, "error": step.error}
                | ({"injected": step.injected} if step.injected is not None else {})
                for step in self.steps
            ],
            "reply": self.reply,
            "parse_error": self.parse_error,
            "metrics": self.metrics,
            "success": self.success,
            "feedback": self.feedback,
        } | ({"usage": self.usage} if self.usage else {})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        """A trajectory read back from :meth:`to_dict` (each output as its preview: the metrics were scored on the
        outputs themselves when it ran)."""
        return cls(task_id=str(data["task_id"]), toolset=str(data["toolset"]), question=str(data.get("question", "")),
                   steps=[CallResult(call=ToolCall.from_dict(step["call"]), ok=bool(step["ok"]), output=step.get("output"),
                                     error=step.get("error"), injected=step.get("injected"))
                          for step in data.get("steps", [])],
                   reply=str(data.get("reply", "")), parse_error=data.get("parse_error"),
                   metrics=dict(data.get("metrics", {})), success=bool(data.get("success")),
                   feedback=str(data.get("feedback", "")), usage=dict(data.get("usage", {})))
