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
from otbench.modules.api_tools import JSON_TYPES
from otbench.modules.call_parsing import parse_reply
from otbench.modules.doc_sentences import terse_description, terse_meaning
from otbench.modules.lm_output import first_text
from otbench.modules.tool_docs import UNSET, DocumentedTool

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


def one_call_schema(tool_names: list[str]) -> dict[str, Any]:
    """JSON schema for one call of a named tool: ``{"name": ..., "arguments": {...}}``.

    Argument names are constrained to identifiers but not to the documented parameters: which
    names an agent uses is part of what the metrics measure (hallucinated parameters).
    """
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": tool_names},
            "arguments": {"type": "object", "propertyNames": _ARGUMENT_NAME},
        },
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def call_schema(tool_names: list[str]) -> dict[str, Any]:
    """JSON schema for a reply: a non-empty list of calls to the named tools (:func:`one_call_schema`)."""
    return {
        "type": "object",
        "properties": {"calls": {"type": "array", "minItems": 1, "items": one_call_schema(tool_names)}},
        "required": ["calls"],
        "additionalProperties": False,
    }


TOOL_FORMATS = ("json", "signature", "terse")
"""How the agent is shown the tools: ``json``, one line of OpenAI's tools format each (what chat models are trained
on); ``signature``, one signature line each with its docs after it (the same docs in fewer prompt tokens);
``terse``, the signature lines with their docs less what the line already says (the form of a call, a rule that
only names the type shown) and less the note of which error each rule came from."""


def render_tools(tools: list[DocumentedTool], tool_format: str = "json") -> str:
    """The tools as the agent reads them, in ``tool_format`` (:data:`TOOL_FORMATS`)."""
    if tool_format in ("signature", "terse"):
        return "\n".join(render_signature(tool, terse=tool_format == "terse") for tool in tools)
    return "\n".join(json.dumps(tool.openai_schema(), ensure_ascii=False) for tool in tools)


def render_signature(tool: DocumentedTool, *, terse: bool = False) -> str:
    """A tool as a signature line (``name(param: type = default, ...)``; its name alone where its parameters are not
    known), then its description and each parameter's meaning, indented: what the JSON format says, without its
    keys and braces (``terse``: and without what the line already says, :data:`TOOL_FORMATS`)."""
    if tool.parameters is None:
        head = tool.name
    else:
        shown = []
        for parameter in tool.parameters:
            kind = _type_text(parameter.type, parameter.items)
            text = parameter.name + ("" if parameter.required or parameter.default is not UNSET else "?")
            text += f": {kind}" if kind else ""  # an unknown type goes unsaid, as in JSON
            if parameter.default is not UNSET:
                text += f" = {json.dumps(parameter.default, ensure_ascii=False, default=str)}"
            shown.append(text)
        head = f"{tool.name}({', '.join(shown)})"
    stated = terse_description(tool.description) if terse else tool.description
    description = " ".join(part for part in (stated, f"Returns: {tool.returns}" if tool.returns else "") if part)
    lines = [head, *([f"  {description}"] if description else [])]
    meanings = tool.parameter_descriptions
    if terse:
        typed = {parameter.name for parameter in tool.parameters or () if _type_text(parameter.type, parameter.items)}
        meanings = {name: terse_meaning(text, type_shown=name in typed) for name, text in meanings.items()}
    lines += [f"  {name}: {text}" for name, text in meanings.items() if text]
    return "\n".join(lines)


def _type_text(kind: str, items: dict[str, Any] | None = None) -> str | None:
    """A parameter's type in JSON schema's words, an array's element type in brackets (``array[integer]``); None for
    a type that is not known (``any``: JSON leaves it out too)."""
    shown = JSON_TYPES.get(kind)
    if shown == "array" and isinstance(items, dict):
        inner = items.get("items")
        element = _type_text(str(items.get("type", "")), inner if isinstance(inner, dict) else None)
        return f"array[{element}]" if element else shown
    return shown


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
        constrain_output: bool = True, tool_format: str = "json", request_first: bool = False,
    ) -> None:
        super().__init__()
        if tool_format not in TOOL_FORMATS:
            raise ValueError(f"tool_format must be one of {TOOL_FORMATS}, got {tool_format!r}")
        self.instructions = instructions
        self.max_tokens = max_tokens
        self.constrain_output = constrain_output
        self.tool_format = tool_format
        self.request_first = request_first
        self.lm: dspy.LM | None = None

    def messages(self, question: str, tools: list[DocumentedTool]) -> list[dict[str, str]]:
        """What stays the same across calls comes first, so the server's prefix cache serves it: the instructions and
        reply format, then the tools of a toolset its tasks share, and the request last. With ``request_first``
        the request comes before the tools: where each task has tools of its own and is attempted again as its docs
        are learned (online), the request is what its attempts share and the docs are what changes."""
        tools_text = render_tools(tools, self.tool_format)
        user = (f"Request: {question}\n\nTools:\n{tools_text}" if self.request_first
                else f"Tools:\n{tools_text}\n\nRequest: {question}")
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

