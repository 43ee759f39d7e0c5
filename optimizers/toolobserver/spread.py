"""Exploration that calls every tool of an interface in turn, so usage counts cover each tool in each situation.

Left to itself, a small agent exploring an opaque toolset calls the one tool it settled on over
and over (``search_1`` for every question, ``engine_1`` for every move): the usage counts then say
nothing about the other tools, and a comparison "best in the endgame" rests on two calls. While
exploring, this agent keeps the model's reply, arguments included, and sends each call it makes to
the next of the offered tools sharing the called tool's interface (:func:`otbench.optimizers.rivals.rivals`:
the same required parameters, so the call stays well formed). A call to a tool with no rival (a fixed
answer tool, a tool of its own kind) is left as it is. Test runs never use it: it is an exploration policy.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from otbench.core.calls import ToolCall
from otbench.optimizers.rivals import rivals


class SpreadCalls:
    """Wraps an agent: each call goes to the next of the offered tools sharing its tool's interface, in turn."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self._turns: dict[tuple[str, ...], int] = {}
        self._lock = threading.Lock()

    def __call__(self, **kwargs: Any) -> Any:
        reply = self.agent(**kwargs)
        calls: list[ToolCall] | None = getattr(reply, "calls", None)
        if not calls:
            return reply
        offered = list(kwargs.get("tools", ()))
        others = rivals(offered)
        order = [tool.name for tool in offered]
        return replace(reply, calls=[self._spread(call, others, order) for call in calls])

    def _spread(self, call: ToolCall, others: dict[str, tuple[str, ...]], order: list[str]) -> ToolCall:
        if call.name not in others:
            return call
        group = tuple(name for name in order if name == call.name or name in others[call.name])
        with self._lock:
            turn = self._turns.get(group, 0)
            self._turns[group] = turn + 1
        return replace(call, name=group[turn % len(group)])
