"""Read the text of an LM reply the same way wherever modules call an LM directly."""

from __future__ import annotations

import json
from typing import Any


def first_text(outputs: list[Any] | None) -> str:
    """The first output as text; DSPy gives strings, or dicts when a provider adds tool calls."""
    if not outputs:
        return ""
    output = outputs[0]
    if isinstance(output, dict):
        if output.get("tool_calls"):
            return json.dumps({"calls": [
                {"name": c.get("function", {}).get("name"), "arguments": c.get("function", {}).get("arguments")}
                for c in output["tool_calls"]
            ]})
        return str(output.get("text") or "")
    return str(output or "")
