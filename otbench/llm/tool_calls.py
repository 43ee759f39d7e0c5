"""OpenAI tool calling over the embedded model: what a Chat Completions request with ``tools`` becomes, and back.

The small embedded model does not write calls in its chat template's format: asked through llama.cpp's own tools
path it wrote each call as a JSON code block in the reply's text, leaving ``tool_calls`` empty (none of six
requests came back as calls; with ``tool_choice: "required"`` it wrote the same block and then blank lines until
``max_tokens``). What works is what the project's agent already does: constrain the reply with a grammar. So a
request with ``tools`` is served in two steps of llama.cpp's own API:

1. ``/apply-template`` renders the messages and tools with the model's chat template (earlier calls and the tools'
   results, ``role: "tool"``, included);
2. ``/completion`` continues that prompt under a grammar (:func:`otbench.llm.grammar.tool_call_grammar`) that admits
   calls of the offered tools only, as ``tool_choice`` allows them (``auto``: calls or a text; ``required``: calls;
   a named function: calls of it; ``none``: no grammar, the reply is text).

The reply is read back (:func:`read_calls`) into ``tool_calls`` with ids, names and arguments as a JSON string,
``finish_reason: "tool_calls"``; anything that is not complete calls of offered tools (a reply cut at
``max_tokens``, say) is returned as the message's content, never as a call. Streaming requests get the reply as
server-sent chunks: a text as it is generated, calls as ``tool_calls`` deltas once each is complete.

Requests are checked as the OpenAI API checks them, and refused with its error shape (:class:`RequestRefused`).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from otbench.llm.grammar import (
    TEXT_CANNOT_START,
    TOOL_CALL_OPENINGS,
    CallableTool,
    UnsupportedSchema,
    tool_call_grammar,
)

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""A function name as the OpenAI API accepts it."""
SAMPLING = ("temperature", "top_p", "top_k", "min_p", "typical_p", "seed", "stop", "presence_penalty",
            "frequency_penalty", "repeat_penalty", "repeat_last_n", "logit_bias", "mirostat", "mirostat_tau",
            "mirostat_eta", "dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n", "xtc_probability",
            "xtc_threshold", "cache_prompt", "id_slot", "samplers", "t_max_predict_ms")
"""Fields of a chat request passed on to llama.cpp's ``/completion`` as they are: sampling settings both take."""
_CALL = re.compile("|".join(f"{re.escape(opening)}(.*?){re.escape(closing)}" for opening, closing in TOOL_CALL_OPENINGS),
                   re.DOTALL)
_BETWEEN_CALLS = re.compile(r"\n{0,2}")


class RequestRefused(Exception):
    """A request the OpenAI API would refuse: answered with HTTP ``status`` and its error object."""

    def __init__(self, message: str, param: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.param, self.status = message, param, status

    def body(self) -> dict[str, Any]:
        kind = "authentication_error" if self.status == 401 else "invalid_request_error"
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": None}}


@dataclass(frozen=True)
class ToolRequest:
    """What a Chat Completions request with ``tools`` asks for."""

    tools: tuple[CallableTool, ...]
    """The offered functions, in the request's order."""
    choice: str
    """``auto``, ``none``, ``required`` or ``function`` (one named function must be called)."""
    named: str | None
    """The function ``tool_choice`` names (``function`` only)."""
    several: bool
    """Whether a reply may make several calls (``parallel_tool_calls``, true unless false)."""
    stream: bool
    include_usage: bool
    """Streaming: whether a last chunk carries the usage (``stream_options.include_usage``)."""
    model: str

    @classmethod
    def read(cls, body: Mapping[str, Any]) -> ToolRequest | None:
        """The request's tool calling, checked; None for a request without tools (served as it is)."""
        tools = body.get("tools")
        if tools is None or tools == []:
            return None
        if not isinstance(tools, list):
            raise RequestRefused("tools: expected an array of function tools", "tools")
        offered = tuple(_tool(index, tool) for index, tool in enumerate(tools))
        names = [tool.name for tool in offered]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise RequestRefused(f"tools: function names must be unique; {', '.join(repeated)} repeated", "tools")
        choice, named = _choice(body.get("tool_choice", "auto"), set(names))
        if body.get("response_format") not in (None, {"type": "text"}):
            raise RequestRefused("response_format together with tools is not supported by this server: give one or "
                                 "the other", "response_format")
        if body.get("n") not in (None, 1):
            raise RequestRefused("n: only one choice is generated", "n")
        options = body.get("stream_options")
        return cls(offered, choice, named, body.get("parallel_tool_calls") is not False, bool(body.get("stream")),
                   isinstance(options, dict) and bool(options.get("include_usage")), str(body.get("model") or ""))

    def grammar(self) -> str | None:
        """The grammar the reply is generated under (None: ``none``, a text)."""
        if self.choice == "none":
            return None
        callable_tools = [tool for tool in self.tools if self.named in (None, tool.name)]
        try:
            return tool_call_grammar(callable_tools, text=self.choice == "auto", several=self.several)
        except UnsupportedSchema as error:
            raise RequestRefused(f"a strict function's parameters use what this server cannot enforce: {error}; "
                                 "set strict to false", "tools") from None

    def callable_names(self) -> frozenset[str]:
        """The functions a reply may call."""
        return frozenset(tool.name for tool in self.tools if self.named in (None, tool.name))

    def template_body(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """What ``/apply-template`` renders: the messages and every offered tool (a ``none`` or a named choice still
        shows them all, as the OpenAI API does)."""
        return {"messages": body.get("messages"), "tools": body.get("tools")}

    def completion_body(self, body: Mapping[str, Any], prompt: str) -> dict[str, Any]:
        """The ``/completion`` request that continues ``prompt`` under :meth:`grammar`, with the request's sampling."""
        request = {name: body[name] for name in SAMPLING if name in body}
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        request |= {"prompt": prompt, "stream": self.stream, **({"n_predict": limit} if limit is not None else {})}
        grammar = self.grammar()
        if grammar is not None:
            request["grammar"] = grammar
        return request


def _tool(index: int, tool: Any) -> CallableTool:
    where = f"tools[{index}]"
    if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(tool.get("function"), dict):
        raise RequestRefused(f"{where}: only function tools are supported ({{\"type\": \"function\", \"function\": "
                             "{...}})", where)
    function = tool["function"]
    name = function.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise RequestRefused(f"{where}.function.name: expected 1 to 64 letters, digits, underscores or dashes, got "
                             f"{str(name)[:80]!r}", f"{where}.function.name")
    parameters = function.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(parameters, dict):
        raise RequestRefused(f"{where}.function.parameters: expected a JSON schema object", f"{where}.function.parameters")
    return CallableTool(name, parameters, strict=function.get("strict") is True)


def _choice(choice: Any, names: set[str]) -> tuple[str, str | None]:
    if choice in ("auto", "none", "required"):
        return str(choice), None
    if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("function"), dict):
        name = choice["function"].get("name")
        if name not in names:
            raise RequestRefused(f"tool_choice: no offered function is named {str(name)[:80]!r}", "tool_choice")
        return "function", str(name)
    raise RequestRefused('tool_choice: expected "auto", "none", "required" or {"type": "function", "function": '
                         '{"name": ...}}', "tool_choice")


@dataclass(frozen=True)
class Call:
    """One call of a reply: its id, the function's name and the arguments as a JSON string."""

    id: str
    name: str
    arguments: str

    def as_tool_call(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


def read_calls(text: str, names: Iterable[str]) -> list[Call] | None:
    """The calls ``text`` makes, written as the call grammar writes them, each of a function in ``names`` with an
    object of arguments; None when the text is anything else (a text reply, or calls cut short), which is then the
    reply's content."""
    allowed, calls, position = set(names), [], 0
    for found in _CALL.finditer(text):
        if not _BETWEEN_CALLS.fullmatch(text, position, found.start()):
            return None
        try:
            value = json.loads(next(group for group in found.groups() if group is not None))
        except (ValueError, RecursionError):
            return None
        if not (isinstance(value, dict) and set(value) == {"name", "arguments"} and value["name"] in allowed
                and isinstance(value["arguments"], dict)):
            return None
        calls.append(Call(f"call_{uuid.uuid4().hex[:24]}", value["name"],
                          json.dumps(value["arguments"], ensure_ascii=False)))
        position = found.end()
    return calls if calls and position == len(text) else None


def may_be_calls(text: str) -> bool:
    """Whether a reply that begins with ``text`` (not empty) can still be calls: a text reply never opens like one."""
    return text[:1] in TEXT_CANNOT_START


def usage(completion: Mapping[str, Any]) -> dict[str, int]:
    """The OpenAI usage of a ``/completion`` reply: prompt tokens evaluated or served from the prefix cache."""
    timings = completion.get("timings") or {}
    prompt = int(timings.get("prompt_n", 0)) + int(timings.get("cache_n", 0)) if timings else \
        int(completion.get("tokens_evaluated") or 0)
    generated = int(completion.get("tokens_predicted") or timings.get("predicted_n", 0) or 0)
    return {"prompt_tokens": prompt, "completion_tokens": generated, "total_tokens": prompt + generated}


def _finish(completion: Mapping[str, Any], calls: list[Call] | None) -> str:
    if calls:
        return "tool_calls"
    return "length" if completion.get("stop_type") == "limit" or completion.get("stopped_limit") else "stop"


@dataclass(frozen=True)
class Reply:
    """One chat completion's identity, shared by its message and its chunks."""

    id: str
    created: int
    model: str

    @classmethod
    def new(cls, request: ToolRequest, completion: Mapping[str, Any] | None = None) -> Reply:
        model = request.model or str((completion or {}).get("model") or "")
        return cls(f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()), model)

    def message(self, request: ToolRequest, completion: Mapping[str, Any]) -> dict[str, Any]:
        """The ``chat.completion`` object of a finished ``/completion`` reply."""
        text = str(completion.get("content") or "")
        calls = read_calls(text, request.callable_names()) if request.choice != "none" else None
        message: dict[str, Any] = {"role": "assistant", "content": None if calls else text}
        if calls:
            message["tool_calls"] = [call.as_tool_call() for call in calls]
        answer = {"id": self.id, "object": "chat.completion", "created": self.created, "model": self.model,
                  "choices": [{"index": 0, "message": message, "logprobs": None,
                               "finish_reason": _finish(completion, calls)}],
                  "usage": usage(completion)}
        if "timings" in completion:  # llama.cpp's own figures: the project's clients meter the server by them
            answer["timings"] = completion["timings"]
        return answer

    def chunk(self, delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}]}

    def chunks(self, request: ToolRequest, events: Iterable[Mapping[str, Any]]
               ) -> Generator[dict[str, Any], None, None]:
        """The chunks of a streamed reply, from ``/completion``'s streamed events: a text as it comes, calls as
        ``tool_calls`` deltas once the reply is complete (a call is known to be valid only then)."""
        text, texting = "", False
        last: Mapping[str, Any] = {}
        for event in events:
            last = event
            piece = str(event.get("content") or "")
            if not piece:
                continue
            if not text and not texting:
                texting = request.choice == "none" or not may_be_calls(piece)
                if texting:
                    yield self.chunk({"role": "assistant", "content": ""})
            text += piece
            if texting:
                yield self.chunk({"content": piece})
        calls = None if texting else read_calls(text, request.callable_names())
        if calls:
            for index, call in enumerate(calls):
                opening = {"index": index, "id": call.id, "type": "function",
                           "function": {"name": call.name, "arguments": ""}}
                yield self.chunk({"role": "assistant", "content": None, "tool_calls": [opening]} if index == 0
                                 else {"tool_calls": [opening]})
                yield self.chunk({"tool_calls": [{"index": index, "function": {"arguments": call.arguments}}]})
        elif not texting:  # calls cut short, or nothing at all: the text is the content
            yield self.chunk({"role": "assistant", "content": text})
        yield self.chunk({}, _finish(last, calls))
        if request.include_usage:
            yield {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                   "choices": [], "usage": usage(last)}
