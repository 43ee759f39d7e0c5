"""A scripted DSPy LM for hermetic tests: replies come from a Python function, not a model.

It goes through DSPy's real LM path (``dspy.LM`` with a custom engine), so token metering,
caching and history behave as they do with a served model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from dspy.lm15 import Message, Response, TextPart, Usage

from otbench.llm.metering import MeteredLM, TokenLedger

Responder = Callable[[list[dict[str, str]]], str]


class ScriptedEngine:
    """Engine whose reply is ``responder(messages)``; tokens are counted as whitespace words."""

    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.requests: list[list[dict[str, str]]] = []

    def complete(self, request):  # DSPy's engine protocol
        messages = []
        if request.system is not None:
            system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system)
            messages.append({"role": "system", "content": system})
        messages.extend({"role": m.role, "content": m.text or ""} for m in request.messages)
        self.requests.append(messages)
        text = self.responder(messages)
        prompt_tokens = sum(len(m["content"].split()) for m in messages)
        completion_tokens = len(text.split())
        return Response(id=None, model="scripted", message=Message.assistant([TextPart(text)]), finish_reason="stop",
                        usage=Usage(input_tokens=prompt_tokens, output_tokens=completion_tokens,
                                    total_tokens=prompt_tokens + completion_tokens))


def scripted_lm(responder: Responder, *, ledger: TokenLedger | None = None, phase: str = "agent") -> MeteredLM:
    return MeteredLM("scripted/test", engine=ScriptedEngine(responder), cache=False,
                     ledger=ledger or TokenLedger(), phase=phase)


def prompt_text(messages: list[dict[str, str]]) -> str:
    """All of a request's messages as one text: tests route scripted replies on what the prompt asks,
    wherever (system or user message) the prompt puts it."""
    return "\n\n".join(message["content"] for message in messages)


_SHOWN_TOOL = re.compile(r'^\{"type": "function", "function": \{"name": "([^"]+)"|^([A-Za-z_]\w*)(?:\(|$)', re.MULTILINE)


def shown_tool_names(messages: list[dict[str, str]]) -> list[str]:
    """The tool names an agent prompt shows after ``Tools:``, in either of the agent's tool formats (JSON lines or
    signature lines)."""
    shown = _tools_part(messages)
    return [json_name or signature_name for json_name, signature_name in _SHOWN_TOOL.findall(shown)]


_SIGNATURE_HEAD = re.compile(r"^([A-Za-z_]\w*)(?:\((.*)\))?$")


def shown_tools(messages: list[dict[str, str]]) -> list[dict]:
    """The tools an agent prompt shows after ``Tools:``, each as OpenAI's ``function`` object (name, description and,
    where shown, parameters with their types and meanings), read from either of the agent's tool formats."""
    shown = _tools_part(messages)
    tools: list[dict] = []
    for line in shown.splitlines():
        head = _SIGNATURE_HEAD.match(line)
        if line.startswith("{"):
            tools.append(json.loads(line)["function"])
        elif head:
            tool: dict = {"name": head.group(1), "description": ""}
            if head.group(2) is not None:
                properties, required = {}, []
                for part in filter(None, (part.strip() for part in head.group(2).split(", "))):
                    name, _, kind = part.split("=")[0].partition(":")
                    properties[name.strip(" ?")] = {"type": kind.strip()} if kind.strip() else {}
                    if "?" not in name and "=" not in part:
                        required.append(name.strip())
                tool["parameters"] = {"type": "object", "properties": properties, "required": required}
            tools.append(tool)
        elif tools and line.startswith("  "):
            tool, text = tools[-1], line.strip()
            name, _, meaning = text.partition(": ")
            properties = tool.get("parameters", {}).get("properties", {})
            if name in properties and meaning:
                properties[name]["description"] = meaning
            elif not tool["description"]:
                tool["description"] = text
    return tools


def _tools_part(messages: list[dict[str, str]]) -> str:
    """The tools an agent prompt shows, whether the request comes after them or before them."""
    return prompt_text(messages).split("Tools:\n", 1)[1].split("\n\nRequest:", 1)[0]


def request_of(messages: list[dict[str, str]]) -> str:
    """The request an agent prompt asks about, whether it comes after the tools or before them."""
    return prompt_text(messages).split("Request: ", 1)[1].split("\n\nTools:\n", 1)[0]
