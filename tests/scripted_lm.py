"""A scripted DSPy LM for hermetic tests: replies come from a Python function, not a model.

It goes through DSPy's real LM path (``dspy.LM`` with a custom engine), so token metering,
caching and history behave as they do with a served model.
"""

from __future__ import annotations

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
