"""What each setting shows of a pool tool, and the text of a tool's docs that the search index embeds.

The settings are BFCL's and are applied by BFCL's own code (:func:`otbench.envs.bfcl.opacity.documented_tools`),
fed each tool's true docs in BFCL's format: ``names_only`` shows an opaque name, nothing else; ``names_params``
adds the parameter schema (names, types, which are required) without a word of description; ``names_desc`` adds
the true description instead; ``gold`` shows the true description and the schema with each parameter's meaning.
Every setting, gold included, shows the same opaque names (``tool_0417``), so docs learned under one setting
apply to the same tools under another. The app a tool belongs to is a word of description: its true name
(``airport_directory``) where descriptions show, an opaque one (``app_17``) where they do not.
"""

from __future__ import annotations

from typing import Any

from otbench.envs.bfcl.opacity import documented_tools
from otbench.envs.pool.catalogue import shown_apps, shown_names
from otbench.envs.pool.kinds import KINDS
from otbench.envs.pool.spec import ToolSpec
from otbench.modules.tool_docs import DocumentedTool

DESCRIBED = ("gold", "names_desc")
"""The settings that show descriptions, and with them the apps' true names."""


def true_docs(spec: ToolSpec) -> dict[str, Any]:
    """The tool's true docs in BFCL's format under its opaque name: BFCL's own for a BFCL function."""
    if spec.schema is not None:
        return {**spec.schema, "name": shown_names()[spec.name]}
    properties: dict[str, Any] = {}
    for param in spec.params:
        kind = KINDS[param.kind]
        properties[param.name] = {"type": kind.type, "description": param.description}
        if kind.type == "array":
            properties[param.name]["items"] = {"type": "number"}
    return {"name": shown_names()[spec.name], "description": spec.description,
            "parameters": {"type": "dict", "properties": properties,
                           "required": [param.name for param in spec.params if param.required]}}


def setting_tools(specs: list[ToolSpec], setting: str) -> list[DocumentedTool]:
    """The docs ``setting`` shows of each tool, under its opaque name."""
    tools = documented_tools(tuple(true_docs(spec) for spec in specs), setting)
    for tool, spec in zip(tools, specs, strict=True):
        tool.name = shown_names()[spec.name]  # BFCL numbers a test's tools function_1..N; the pool names them once
    return tools


def app_names(specs: list[ToolSpec], setting: str) -> dict[str, str]:
    """Opaque tool name -> the app as ``setting`` shows it."""
    return {shown_names()[spec.name]: spec.app if setting in DESCRIBED else shown_apps()[spec.app] for spec in specs}


def doc_text(tool: DocumentedTool, app: str) -> str:
    """What the index embeds for one tool: its name, app and current docs (description, parameters, returns)."""
    parts = [f"{tool.name} ({app})."]
    if tool.description:
        parts.append(tool.description if tool.description.endswith(".") else f"{tool.description}.")
    if tool.parameters is not None:
        meanings = tool.parameter_descriptions
        shown = [f"{p.name} ({p.type}{'' if p.required else ', optional'})"
                 + (f": {meanings[p.name]}" if meanings.get(p.name) else "") for p in tool.parameters]
        parts.append(f"Parameters: {'; '.join(shown)}." if shown else "No parameters.")
    if tool.returns:
        parts.append(f"Returns: {tool.returns}")
    return " ".join(parts)
