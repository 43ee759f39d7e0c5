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
    """The call as it was made."""
    ok: bool
    """Whether the call ran and returned."""
    output: Any = None
    """What it returned (``ok`` only)."""
    error: str | None = None
    """Why it failed (not ``ok`` only)."""
    situation: str = ""
    """The kind of situation the call was made in, as any caller could see it (chess: the game phase
    by the material on the board); blank where an environment has no such notion."""
    value: float | None = None
    """How much the call helped, higher is better, from the same outcome signal the attempt is scored
    by (chess: the evaluation change in pawns; BrowseComp: 1 when a result was a page the question
    needed); None where an environment does not judge single calls. Optimizers compare tools by it."""

    def to_dict(self) -> dict[str, Any]:
        data = {"call": self.call.to_dict(), "ok": self.ok, "output": self.output, "error": self.error}
        if self.situation:
            data["situation"] = self.situation
        if self.value is not None:
            data["value"] = self.value
        return data
