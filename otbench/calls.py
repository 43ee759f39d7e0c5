"""Plain records for tool calls and their outcomes, shared by environments, agents and metrics.

They live apart from any environment so that metrics (``evals/``) and agents (``modules/``) can
speak about calls without importing an environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One call as a model (or a gold answer) wrote it: a tool name and keyword arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class CallResult:
    """What executing a :class:`ToolCall` produced.

    ``ok`` is False when the call raised or timed out; ``error`` then holds a one-line message
    (``"TypeError: function_1() missing 1 required positional argument: 'n'"``) that speaks of
    the name the call was made under, because that text is what an editor learns from.
    """

    call: ToolCall
    ok: bool
    output: Any = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"call": self.call.to_dict(), "ok": self.ok, "output": self.output, "error": self.error}
