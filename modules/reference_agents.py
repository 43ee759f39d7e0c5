"""Reference agents that need no LLM: they bound what the metrics can say.

``OracleAgent`` replies with given calls (an environment's gold calls), so it must score perfectly;
``NullAgent`` never calls anything, so it must score zero. Both answer like
:class:`~otbench.modules.agent.FunctionCallingAgent`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from otbench.core.calls import ToolCall
from otbench.modules.agent import AgentReply


class OracleAgent:
    """Replies with ``answers(question)``: the calls a perfect agent would make."""

    def __init__(self, answers: Callable[[str], list[ToolCall]]) -> None:
        self.answers = answers

    def __call__(self, *, question: str, **_: Any) -> AgentReply:
        calls = self.answers(question)
        return AgentReply(raw=json.dumps({"calls": [c.to_dict() for c in calls]}), calls=calls)


class NullAgent:
    """Never calls a tool."""

    def __call__(self, **_: Any) -> AgentReply:
        return AgentReply(raw="", calls=None, error="the null agent makes no call")
