"""Read the text of an LM reply the same way wherever modules call an LM directly."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from otbench.core.calls import clean_text


def first_text(outputs: list[Any] | None) -> str:
    """The first output as text; DSPy gives strings, or dicts when a provider adds tool calls.

    Lone surrogates are replaced (:func:`~otbench.core.calls.clean_text`): the text is quoted in later
    prompts and logs, which must encode as UTF-8.
    """
    if not outputs:
        return ""
    output = outputs[0]
    if isinstance(output, dict):
        if output.get("tool_calls"):
            return json.dumps({"calls": [  # ASCII: escapes keep surrogates for the call checks to judge
                {"name": c.get("function", {}).get("name"), "arguments": c.get("function", {}).get("arguments")}
                for c in output["tool_calls"]
            ]})
        return clean_text(str(output.get("text") or ""))
    return clean_text(str(output or ""))


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model reply (whole text, else its outermost braces); None if there is none.

    Model output is untrusted data: it is only ever parsed, never evaluated.
    """
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1] if "{" in text else ""):
        try:
            data = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            return data
    return None


_PLACEHOLDER = re.compile(r"<[^<>]{0,80}>|\(?\s*(?:none(?: yet)?|n/?a|null|nil|unknown|tbd|-+|\.\.\.|\u2026)?\s*\)?\.?",
                          re.IGNORECASE)


def reply_text(value: Any) -> str:
    """A text field of a parsed reply as clean one-line text: a string, its whitespace collapsed and lone
    surrogates replaced (JSON's ``"\\ud800"`` escapes survive parsing); whatever else a model wrote there
    (a number, a list, an object) is no text, not its Python repr. A placeholder is no text either: a small
    model copies the prompt's ``(none)`` for a blank description, or a template slot such as ``<value>``,
    and either would reach the agent as the tool's docs."""
    text = " ".join(clean_text(value).split()) if isinstance(value, str) else ""
    return "" if _PLACEHOLDER.fullmatch(text) else text


def reply_number(value: Any, low: float, high: float) -> float | None:
    """A number field of a parsed reply within ``[low, high]``; None for anything else: a boolean, a string,
    JSON's ``NaN`` and ``Infinity`` (Python's parser accepts them), a number out of range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value) if -1e308 < value < 1e308 else math.inf  # an integer too large for a float
    return number if math.isfinite(number) and low <= number <= high else None


def ask_json(lm: Any, *, system: str, user: str, schema: dict[str, Any], schema_name: str, max_tokens: int,
             **lm_kwargs: Any) -> tuple[str, dict[str, Any] | None]:
    """One LM call whose reply is constrained to ``schema``; returns the raw text and the parsed object.

    The schema constrains local models (which otherwise drift into prose); hosted models that
    ignore it are still parsed leniently by :func:`parse_json_object`.
    """
    import dspy

    lm = lm or dspy.settings.lm
    if lm is None:
        raise RuntimeError("no LM configured: dspy.configure(lm=...) or set the module's lm")
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    response_format = {"type": "json_schema", "json_schema": {"name": schema_name, "schema": schema}}
    text = first_text(lm(messages=messages, max_tokens=max_tokens, response_format=response_format, **lm_kwargs))
    return text, parse_json_object(text)
