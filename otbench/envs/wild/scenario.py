"""A Wild dialogue as stored: user tasks with their turns, kinds, hidden intentions and gold calls.

Gold calls name BFCL's real functions; the environment shows them under its opaque names. An argument
may read an earlier gold call's output of the same task (``{"$ref": i, "path": [...], "as": ...}``, see
:mod:`otbench.envs.wild.metrics`); ``output`` is what the call returned when the data was generated.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from otbench.envs.wild.metrics import INTENTIONS, KINDS, depth


@dataclass(frozen=True)
class GoldCall:
    function: str
    """BFCL's name of the function."""
    arguments: dict[str, Any]
    """JSON argument values; references read earlier gold calls' outputs."""
    output: Any
    """What the call returns."""

    def to_dict(self) -> dict[str, Any]:
        return {"function": self.function, "arguments": self.arguments, "output": self.output}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GoldCall:
        return cls(str(data["function"]), dict(data["arguments"]), data["output"])


@dataclass(frozen=True)
class Task:
    """One user task: what the user says over its turns, and what the right response is."""

    kind: str
    """One of :data:`otbench.envs.wild.metrics.KINDS`."""
    intention: str
    """One of :data:`otbench.envs.wild.metrics.INTENTIONS`."""
    messages: tuple[str, ...]
    """The user's messages: one, or for a clarification the request, then the answer to the question."""
    calls: tuple[GoldCall, ...] = ()
    """The gold calls, made after the task's last message."""
    source_turn: int | None = None
    """The earlier user turn a hidden intention's value was given in (None without one)."""
    origin: str = ""
    """Where the task comes from: ``bfcl:TEST_ID`` (BFCL's question and gold calls) or ``template:NAME``."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS or self.intention not in INTENTIONS:
            raise ValueError(f"unknown task kind {self.kind!r} or intention {self.intention!r}")
        if len(self.messages) != (2 if self.kind == "clarification" else 1):
            raise ValueError(f"a {self.kind} task has {len(self.messages)} messages")

    @property
    def depth(self) -> int:
        """Replies its gold calls need at least."""
        return depth([call.arguments for call in self.calls])

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "intention": self.intention, "messages": list(self.messages),
                "calls": [call.to_dict() for call in self.calls], "source_turn": self.source_turn,
                "origin": self.origin}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        return cls(str(data["kind"]), str(data["intention"]), tuple(data["messages"]),
                   tuple(GoldCall.from_dict(call) for call in data["calls"]), data.get("source_turn"),
                   str(data.get("origin", "")))


@dataclass(frozen=True)
class Dialogue:
    """Four user tasks over several user turns, and the functions the agent is offered for them."""

    id: str
    split: str
    """``train`` or ``test``."""
    switches: int
    """Adjacent tasks of different kinds (0-3), as the dialogue was planned."""
    functions: tuple[str, ...]
    """BFCL's names of the functions offered: those the tasks need and a few confusable others."""
    tasks: tuple[Task, ...]

    @property
    def messages(self) -> list[str]:
        """Every user turn, in order."""
        return [message for task in self.tasks for message in task.messages]

    def task_turns(self) -> list[tuple[int, ...]]:
        """The user turns (indexes into :attr:`messages`) of each task."""
        turns, start = [], 0
        for task in self.tasks:
            turns.append(tuple(range(start, start + len(task.messages))))
            start += len(task.messages)
        return turns

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "split": self.split, "switches": self.switches, "functions": list(self.functions),
                "tasks": [task.to_dict() for task in self.tasks]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Dialogue:
        return cls(str(data["id"]), str(data["split"]), int(data["switches"]), tuple(data["functions"]),
                   tuple(Task.from_dict(task) for task in data["tasks"]))


def count_switches(kinds: list[str]) -> int:
    """Adjacent tasks whose kinds differ."""
    return sum(a != b for a, b in pairwise(kinds))
