"""The function-calling agent: one turn, at least one tool call, possibly several.

The agent renders the *current* docs of the tools it is handed at every call, so an optimizer
that edits a :class:`~otbench.modules.tool_docs.DocumentedTool` changes the very next prompt. Output is
constrained with a JSON schema (small local models write calls as text and get them wrong
without one); a reply that still is not a call comes back as a failure with its reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import dspy

from otbench.core.calls import ToolCall
from otbench.modules.call_parsing import parse_reply
from otbench.modules.lm_output import first_text
from otbench.modules.tool_docs import DocumentedTool

FUNCTION_CALLING_INSTRUCTIONS = """\
You answer a user's request by calling tools. Every reply must call at least one tool; replying \
without a call is never allowed. Use a tool whose documentation fits the request. When a tool is \
undocumented or you are unsure what it does, make your best guess and call it with plausible \
arguments: trying is how its behaviour is learned. Give every argument the request implies, \
with values taken from the request, and call several tools (or one tool several times) when the \
request needs several results."""

_REPLY_FORMAT = (
    'Reply with JSON only: {"calls": [{"name": "<tool name>", "arguments": {"<parameter>": <value>}}]}'
)


# Argument names must look like parameter names: without this a small model writes prose as keys.
_ARGUMENT_NAME = {"pattern": "^[A-Za-z_][A-Za-z0-9_]{0,39}$"}


def call_schema(tool_names: list[str]) -> dict[str, Any]:
    """JSON schema for a reply: a non-empty list of calls to the named tools.

    Argument names are constrained to identifiers but not to the documented parameters: which
    names an agent uses is part of what the metrics measure (hallucinated parameters).
    """
    return {
        "type": "object",
        "properties": {
            "calls": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "enum": tool_names},
                        "arguments": {"type": "object", "propertyNames": _ARGUMENT_NAME},
                    },
                    "required": ["name", "arguments"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["calls"],
        "additionalProperties": False,
    }


def render_tools(tools: list[DocumentedTool]) -> str:
    """One compact JSON line per tool, in OpenAI's tools format (what chat models are trained on)."""
    return "\n".join(json.dumps(tool.openai_schema(), ensure_ascii=False) for tool in tools)


@dataclass(frozen=True)
class AgentReply:
    """The raw text, the calls read from it (None if unreadable) and the reason when unreadable."""

    raw: str
    calls: list[ToolCall] | None
    error: str | None = None
    messages: list[dict[str, str]] = field(default_factory=list)


class FunctionCallingAgent(dspy.Module):
    """One-turn tool caller that works with the embedded model and with hosted litellm models."""

    def __init__(
        self, *, instructions: str = FUNCTION_CALLING_INSTRUCTIONS, max_tokens: int = 256,
        constrain_output: bool = True,
    ) -> None:
        super().__init__()
        self.instructions = instructions
        self.max_tokens = max_tokens
        self.constrain_output = constrain_output
        self.lm: dspy.LM | None = None

    def messages(self, question: str, tools: list[DocumentedTool]) -> list[dict[str, str]]:
        """What stays the same across calls comes first (instructions, reply format, then the tools of a
        toolset) and the request last, so the server's prefix cache serves the shared part."""
        user = f"Tools:\n{render_tools(tools)}\n\nRequest: {question}"
        return [{"role": "system", "content": f"{self.instructions}\n\n{_REPLY_FORMAT}"},
                {"role": "user", "content": user}]

    def forward(self, question: str, tools: list[DocumentedTool], **lm_kwargs: Any) -> AgentReply:
        lm = self.lm or dspy.settings.lm
        if lm is None:
            raise RuntimeError("no LM configured: dspy.configure(lm=...) or set agent.lm")
        messages = self.messages(question, tools)
        request: dict[str, Any] = {"max_tokens": self.max_tokens, **lm_kwargs}
        if self.constrain_output:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "tool_calls", "schema": call_schema([t.name for t in tools])},
            }
        outputs = lm(messages=messages, **request)
        raw = first_text(outputs)
        parsed = parse_reply(raw)
        return AgentReply(raw=raw, calls=parsed.calls, error=parsed.error, messages=messages)

