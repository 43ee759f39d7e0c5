"""Tool docs as the tool definitions LLM APIs accept (OpenAI Chat Completions and Responses).

The agent's own prompt shows :meth:`DocumentedTool.openai_schema`, which keeps the setting's
gaps visible (no ``parameters`` means "undocumented"). An API reads the same gap as "takes no
arguments" and refuses an array without ``items``, so what leaves the project for another
agent is written here: JSON-schema type names, ``items`` on every array (``{}``, any element,
where nothing is known), and an open object for parameters nobody documented or learned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class ParameterSpec(Protocol):
    """A parameter as the docs keep it (:class:`otbench.modules.tool_docs.ParameterSpec`): its name, whether it is
    required, and its schema fragment."""

    @property
    def name(self) -> str: ...

    @property
    def required(self) -> bool: ...

    def to_dict(self) -> dict[str, Any]: ...


class DocumentedTool(Protocol):
    """A tool's docs as this module reads them (:class:`otbench.modules.tool_docs.DocumentedTool`); described here, not
    imported, so the docs module that builds API tools with these schemas is not imported back."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def returns(self) -> str: ...

    @property
    def parameters(self) -> Sequence[ParameterSpec] | None: ...

    @property
    def parameter_descriptions(self) -> Mapping[str, str]: ...


# BFCL's and Python's type names in JSON-schema terms; anything else is left untyped.
JSON_TYPES = {
    "integer": "integer", "int": "integer", "float": "number", "number": "number", "string": "string",
    "str": "string", "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
    "tuple": "array", "dict": "object", "object": "object",
}
# Keywords carried over from an environment's element schema as they are.
_KEPT_KEYWORDS = ("description", "enum", "minItems", "maxItems", "minimum", "maximum", "default")


def json_schema(fragment: dict[str, Any]) -> dict[str, Any]:
    """An environment's (BFCL-style) schema fragment in JSON-schema terms, nested arrays and objects included."""
    schema: dict[str, Any] = {}
    json_type = JSON_TYPES.get(str(fragment.get("type", "")))
    if json_type:
        schema["type"] = json_type
    schema |= {key: fragment[key] for key in _KEPT_KEYWORDS if key in fragment}
    if json_type == "array":
        items = fragment.get("items")
        schema["items"] = json_schema(items) if isinstance(items, dict) else {}
    if json_type == "object" and isinstance(fragment.get("properties"), dict):
        schema["properties"] = {name: json_schema(sub) if isinstance(sub, dict) else {}
                                for name, sub in fragment["properties"].items()}
        if isinstance(fragment.get("required"), list):
            schema["required"] = list(fragment["required"])
    return schema


def parameter_schema(parameter: ParameterSpec, description: str) -> dict[str, Any]:
    """One parameter with its type, array ``items`` and ``default`` as the environment's data gives them."""
    schema = json_schema(parameter.to_dict())
    if description:
        schema["description"] = description
    return schema


def parameters_schema(tool: DocumentedTool) -> dict[str, Any]:
    """The JSON schema of the tool's arguments: the shown or learned one, else any arguments at all."""
    if tool.parameters is None:
        return {"type": "object", "properties": {}, "additionalProperties": True}
    descriptions = tool.parameter_descriptions
    return {
        "type": "object",
        "properties": {p.name: parameter_schema(p, descriptions.get(p.name, "")) for p in tool.parameters},
        "required": [p.name for p in tool.parameters if p.required],
    }


def description(tool: DocumentedTool) -> str:
    """What the tool does and, when documented, what it returns; blank stays blank."""
    return f"{tool.description} Returns: {tool.returns}".strip() if tool.returns else tool.description


def chat_completions_tool(tool: DocumentedTool) -> dict[str, Any]:
    """One entry of a Chat Completions ``tools`` list."""
    return {"type": "function",
            "function": {"name": tool.name, "description": description(tool), "parameters": parameters_schema(tool)}}


def responses_tool(tool: DocumentedTool) -> dict[str, Any]:
    """One entry of a Responses API ``tools`` list (the function's fields at the top level).

    ``strict`` is required there and off: strict mode wants every parameter required, and tools
    have optional ones.
    """
    return {"type": "function", "name": tool.name, "description": description(tool),
            "parameters": parameters_schema(tool), "strict": False}
