"""Exploration that calls every tool of a set in turn, so usage counts cover each tool in each situation.

Left to itself, a small agent exploring an opaque toolset calls the one tool it settled on over
and over (``search_1`` for every question, ``engine_1`` for every move): the usage counts then say
nothing about the other tools, and a comparison "best in the endgame" rests on two calls. During
offline exploration this agent keeps the model's reply, arguments included, and sends each call it
makes to a tool of the set to the next tool in turn instead. Tools of one offline set take the same
arguments (a query, a position), so the call stays well formed; calls to tools outside the set (a
fixed answer tool) are left as they are. Test runs never use it: it is an exploration policy.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from otbench.calls import ToolCall


class SpreadCalls:
    """Wraps an agent: each call to a tool named in ``names`` goes to the next of the offered tools in turn."""

    def __init__(self, agent: Any, names: set[str]) -> None:
        self.agent = agent
        self.names = names
        self._turns: dict[tuple[str, ...], int] = {}
        self._lock = threading.Lock()

    def __call__(self, **kwargs: Any) -> Any:
        reply = self.agent(**kwargs)
        calls: list[ToolCall] | None = getattr(reply, "calls", None)
        offered = tuple(tool.name for tool in kwargs.get("tools", ()) if tool.name in self.names)
        if not calls or len(offered) < 2:
            return reply
        return replace(reply, calls=[self._spread(call, offered) for call in calls])

    def _spread(self, call: ToolCall, offered: tuple[str, ...]) -> ToolCall:
        if call.name not in offered:
            return call
        with self._lock:
            turn = self._turns.get(offered, 0)
            self._turns[offered] = turn + 1
        return replace(call, name=offered[turn % len(offered)])
