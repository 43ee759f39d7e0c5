"""Turn untrusted model text into tool calls.

Model output is data, never code: JSON is read with ``json``, Python-looking calls with ``ast``
restricted to literals. Text that holds no call is a parse failure with a reason, which the
metrics score as an invalid format instead of crashing the run. A call whose name or arguments
do not fit (arguments that are not an object, tuple keys, lone surrogates...) is read as a call
with a ``problem`` (:func:`otbench.core.calls.checked_call`): a failed call, never an exception later.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from otbench.core.calls import ToolCall, checked_call

MAX_REPLY_CHARS = 64_000
_FENCE = re.compile(r"```(?:json|python|tool_call)?\s*(.*?)```", re.DOTALL)
_NAME_KEYS = ("name", "function", "tool", "tool_name")
_ARG_KEYS = ("arguments", "args", "parameters", "params", "kwargs")
# Each start position costs a scan to the end of the reply; a bound keeps hostile input linear.
_MAX_SPAN_STARTS = 16


@dataclass(frozen=True)
class ParsedReply:
    """``calls`` is None when nothing in the reply could be read as a call; ``error`` says why."""

    calls: list[ToolCall] | None
    error: str | None = None


def _call_from_object(obj: Any) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # OpenAI tool_calls entry
        obj = obj["function"]
    named = [obj[k] for k in _NAME_KEYS if k in obj]
    if not named:
        return None
    name = next((value for value in named if isinstance(value, str)), named[0])
    arguments: Any = next((obj[k] for k in _ARG_KEYS if k in obj), {})
    if isinstance(arguments, str):  # OpenAI sends arguments as a JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            pass
    return checked_call(name, arguments)


def _calls_from_json(value: Any) -> list[ToolCall] | None:
    if isinstance(value, dict):
        for key in ("calls", "tool_calls", "function_calls"):
            if isinstance(value.get(key), list):
                value = value[key]
                break
        else:
            single = _call_from_object(value)
            return None if single is None else [single]
    if isinstance(value, list):
        calls = [_call_from_object(item) for item in value]
        if calls and all(call is not None for call in calls):
            return calls  # type: ignore[return-value]
    return None


def _json_candidates(text: str) -> list[str]:
    """The whole text, fenced blocks, then each balanced ``{...}``/``[...]`` span, in order."""
    candidates = [text, *_FENCE.findall(text)]
    for opening, closing in (("{", "}"), ("[", "]")):
        start, tried = text.find(opening), 0
        while start != -1 and tried < _MAX_SPAN_STARTS:
            tried += 1
            depth, in_string, escaped = 0, False, False
            for index in range(start, len(text)):
                char = text[index]
                if in_string:
                    escaped = char == "\\" and not escaped
                    if char == '"' and not escaped:
                        in_string = False
                    continue
                if char == '"':
                    in_string = True
                elif char == opening:
                    depth += 1
                elif char == closing:
                    depth -= 1
                    if depth == 0:
                        candidates.append(text[start : index + 1])
                        break
            start = text.find(opening, start + 1) if depth else text.find(opening, index + 1)
    return candidates


def _literal(node: ast.AST) -> Any:
    """A literal value, allowing negative numbers; ValueError for anything else."""
    return ast.literal_eval(node)


def _calls_from_python(text: str) -> list[ToolCall] | None:
    """Read ``name(a=1, b=[2])`` calls (one per line or as a list) without running anything."""
    lines = [line for line in text.strip().split("\n") if line.strip()]  # not splitlines: a string may hold \x85
    if len(lines) > 1:
        each = [_calls_from_python_expression(line) for line in lines]
        if all(calls is not None for calls in each):
            return [call for calls in each for call in calls]  # type: ignore[union-attr]
    return _calls_from_python_expression(text)


def _calls_from_python_expression(text: str) -> list[ToolCall] | None:
    """The calls of one Python expression: a call, or a list or tuple of calls."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    nodes = tree.body.elts if isinstance(tree.body, (ast.List, ast.Tuple)) else [tree.body]
    calls = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.args:
            return None
        if any(kw.arg is None for kw in node.keywords):  # f(**spread): not a call written out
            return None
        try:
            arguments = {kw.arg: _literal(kw.value) for kw in node.keywords}
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None
        calls.append(checked_call(node.func.id, arguments))
    return calls or None


def parse_reply(text: str | None) -> ParsedReply:
    """Extract tool calls from a model reply (JSON object, list, fenced block, or Python call syntax)."""
    if not text or not text.strip():
        return ParsedReply(None, "empty reply")
    if len(text) > MAX_REPLY_CHARS:
        return ParsedReply(None, f"reply of {len(text)} characters exceeds the {MAX_REPLY_CHARS} limit")
    for candidate in _json_candidates(text):
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        calls = _calls_from_json(value)
        if calls is not None:
            return ParsedReply(calls)
    for candidate in [*_FENCE.findall(text), text]:
        calls = _calls_from_python(candidate)
        if calls is not None:
            return ParsedReply(calls)
    return ParsedReply(None, "no tool call found in the reply")
