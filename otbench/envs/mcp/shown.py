"""A server's tools as the agent sees them in each setting, and the true docs written for them.

The server's listing is read as untrusted data: a name must be a short unique string, a description is
cut to :data:`MAX_DESCRIPTION_CHARS`, an input schema is read for what a tool's docs show (each
property's type, array items, default, whether it is required, description) and anything else in it is
left alone. In ``names_only`` and ``names_params`` the tools are shown as ``function_1..N`` in an order
fixed by :data:`OPAQUE_SEED` over the sorted real names, so every run (and ``serve-docs``) numbers a
server's tools alike; in the others under their own names.

Gold docs are a JSON file written from a server's source (``--gold-docs``)::

    {"tools": {"convert_time": {"description": "...", "parameters": {"time": "..."}, "returns": "..."}}}

Types and required flags come from the server's own schema; the file gives the words.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_types import Tool

from otbench.core.calls import MAX_NAME_CHARS, clean_text
from otbench.errors import ConfigError, DataError
from otbench.modules.tool_docs import UNSET, DocumentedTool, ParameterSpec

OPAQUE_SEED = 0
"""The seed of the opaque names' order (over the real names sorted)."""
MAX_DESCRIPTION_CHARS = 4_000
"""A server's description, or one of its parameters', is cut to this many characters: it goes into every prompt."""
OPAQUE_SETTINGS = ("names_only", "names_params")


@dataclass(frozen=True)
class GoldDoc:
    """The true docs of one tool: what it does, each parameter, what it returns."""

    description: str
    parameters: dict[str, str] = field(default_factory=dict)
    returns: str = ""


def _text(value: Any, limit: int = MAX_DESCRIPTION_CHARS) -> str:
    text = clean_text(value) if isinstance(value, str) else ""
    return text if len(text) <= limit else f"{text[:limit]}..."


def checked_tools(tools: list[Tool]) -> list[Tool]:
    """The listing, refused on one line when two tools share a name or a name is unusable."""
    seen: set[str] = set()
    for tool in tools:
        name = tool.name
        if not name.strip() or len(name) > MAX_NAME_CHARS or clean_text(name) != name:
            raise DataError(f"the MCP server lists a tool whose name cannot be shown: {clean_text(name)[:80]!r}")
        if name in seen:
            raise DataError(f"the MCP server lists two tools named {name!r}: an agent could not tell them apart")
        seen.add(name)
    if not tools:
        raise DataError("the MCP server lists no tools")
    return tools


def shown_names(real_names: list[str], setting: str) -> dict[str, str]:
    """Shown name -> real name: opaque names in a fixed shuffled order, or the real names themselves."""
    if setting not in OPAQUE_SETTINGS:
        return {name: name for name in real_names}
    order = sorted(real_names)
    random.Random(OPAQUE_SEED).shuffle(order)
    return {f"function_{index}": name for index, name in enumerate(order, start=1)}


def _properties(tool: Tool) -> tuple[dict[str, dict[str, Any]], set[str]]:
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    properties = schema.get("properties")
    required = schema.get("required")
    named = {str(name): spec if isinstance(spec, dict) else {} for name, spec in
             (properties.items() if isinstance(properties, dict) else [])}
    return named, {name for name in required if isinstance(name, str)} if isinstance(required, list) else set()


def _kind(spec: dict[str, Any]) -> str:
    """A property's JSON type: its ``type`` (the first that is not null of a list), else its ``anyOf``'s."""
    kind = spec.get("type")
    if isinstance(kind, list):
        kind = next((item for item in kind if item != "null"), None)
    if isinstance(kind, str):
        return kind
    for option in spec.get("anyOf") or []:
        if isinstance(option, dict) and isinstance(option.get("type"), str) and option["type"] != "null":
            return str(option["type"])
    return "any"


def _bare(schema: Any) -> Any:
    """A nested schema without its words (descriptions and titles), for names_params."""
    if isinstance(schema, dict):
        return {key: _bare(value) for key, value in schema.items() if key not in ("description", "title")}
    if isinstance(schema, list):
        return [_bare(item) for item in schema]
    return schema


def parameters_of(tool: Tool, *, words: bool) -> tuple[list[ParameterSpec], dict[str, str]]:
    """The tool's parameters as its schema gives them, and their descriptions (none without ``words``)."""
    properties, required = _properties(tool)
    parameters, descriptions = [], {}
    for name, spec in properties.items():
        items = spec.get("items")
        items = (items if words else _bare(items)) if isinstance(items, dict) else None
        parameters.append(ParameterSpec(name, _kind(spec), name in required, items, spec.get("default", UNSET)))
        if words:
            descriptions[name] = _text(spec.get("description"))
    return parameters, descriptions


def documented(tool: Tool, shown: str, setting: str, gold: GoldDoc | None = None) -> DocumentedTool:
    """What the agent is shown of ``tool`` under the name ``shown`` in ``setting``; with ``gold``, the true docs."""
    try:
        if gold is not None:
            parameters, _ = parameters_of(tool, words=False)
            return DocumentedTool(shown, description=gold.description, parameters=parameters,
                                  parameter_descriptions=gold.parameters, returns=gold.returns)
        if setting == "names_only":
            return DocumentedTool(shown)
        parameters, descriptions = parameters_of(tool, words=setting != "names_params")
        description = _text(tool.description) if setting != "names_params" else ""
        return DocumentedTool(shown, description=description, parameters=parameters,
                              parameter_descriptions=descriptions)
    except (TypeError, ValueError) as error:  # a parameter name no signature can hold
        raise DataError(f"the MCP server's tool {tool.name!r} has a schema otbench cannot show: {error}") from None


def read_gold(path: Path, real_names: list[str]) -> dict[str, GoldDoc]:
    """The gold docs file ``path`` (see the module's docstring), by real tool name."""
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise ConfigError(f"--gold-docs {path}: {error.strerror}") from None
    except ValueError as error:
        raise ConfigError(f"--gold-docs {path}: not valid JSON ({error})") from None
    except RecursionError:
        raise ConfigError(f"--gold-docs {path}: nested too deep to be a gold docs file") from None
    tools = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(tools, dict):
        raise ConfigError(f'--gold-docs {path}: expected {{"tools": {{NAME: {{"description": ...}}}}}}')
    gold = {}
    for name, doc in tools.items():
        if name not in real_names:
            raise ConfigError(f"--gold-docs {path}: {name!r} is none of the server's tools ({', '.join(real_names)})")
        if not isinstance(doc, dict) or not isinstance(doc.get("description"), str):
            raise ConfigError(f"--gold-docs {path}: {name!r} needs a description text")
        parameters = doc.get("parameters", {})
        if not isinstance(parameters, dict) or not all(isinstance(text, str) for text in parameters.values()):
            raise ConfigError(f"--gold-docs {path}: {name!r}'s parameters must map names to descriptions")
        gold[name] = GoldDoc(doc["description"], dict(parameters), str(doc.get("returns", "")))
    return gold


def scrubbed(text: str, shown_of: Mapping[str, str]) -> str:
    """``text`` (a server's error message) with every real tool name in it replaced by the name it is shown under:
    an opaque tool must not give its name away in what it answers (``priceArguments`` becomes
    ``function_2Arguments``)."""
    for real in sorted(shown_of, key=len, reverse=True):
        if shown_of[real] != real:
            text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(real)}(?![a-z0-9_])", shown_of[real], text)
    return text
