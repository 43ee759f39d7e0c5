"""Learned docs in MLflow's prompt registry: one prompt per optimized toolset, one version per run.

A downstream agent then asks for the docs by name, ``prompts:/otbench.bfcl.names_only.exec_simple_66@latest``,
from the same MLflow store or server, without knowing which run learned them. A version's text
is the toolset's docs as an otbench docs file (what ``Toolbox.read`` reads); its tags say which
run, optimizer and setting produced it.

MLflow keeps at most :data:`MAX_PROMPT_CHARS` characters a prompt, less than a pool of a thousand tools' docs. Such a
toolset's prompt holds the docs' meta and the URIs of the prompts that hold its tools (``NAME.part1``, ...), in
order, under the meta key :data:`PARTS`; :func:`read_prompt` joins them, so the name reads as one docs file. A meta
entry kept per tool (a mapping by tool name or tool key, as the gate's decisions) can alone outgrow a prompt: each
part carries the entries of its own tools, and reading joins them back.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from otbench.errors import DataError

if TYPE_CHECKING:
    from otbench.modules.tool_docs import Toolbox

PREFIX = "prompts:/"
MAX_PROMPT_CHARS = 100_000
"""The longest prompt text MLflow's registry keeps."""
PARTS = "prompt_parts"
"""The meta key, in a toolset's prompt, of the prompts holding its tools when they do not fit in one."""
_ENVELOPE_CHARS = 1_000
"""Room left in a part for what wraps its tools (format, meta, the toolset's name)."""


def prompt_name(env: str, setting: str, toolset: str) -> str:
    """The registry name of a toolset's docs (MLflow allows letters, digits, ``_``, ``-`` and ``.``)."""
    return ".".join(re.sub(r"[^A-Za-z0-9_-]", "_", part) for part in ("otbench", env, setting, toolset))


def register_docs(toolbox: Toolbox, toolsets: list[str], *, env: str, setting: str,
                  tags: dict[str, str]) -> dict[str, str]:
    """A new version of each toolset's prompt holding its docs; returns ``{toolset: prompt URI}``."""
    from otbench.modules.tool_docs import Toolbox

    uris = {}
    for toolset in toolsets:
        docs = Toolbox({toolset: toolbox.toolset(toolset)}, meta={**toolbox.meta, "toolset": toolset}).to_json()
        name = prompt_name(env, setting, toolset)
        message = f"docs of {toolset} learned by {tags.get('optimizer', 'an optimizer')}"
        text = json.dumps(docs, ensure_ascii=False)
        if len(text) > MAX_PROMPT_CHARS:
            tools = docs["toolsets"][toolset]
            per_tool = {key: value for key, value in docs["meta"].items()
                        if _kept_per_tool(value, toolset, {tool["name"] for tool in tools})}
            part_uris = []
            for number, packed in enumerate(_packed(tools, toolset, per_tool), start=1):
                names = {tool["name"] for tool in packed}
                meta = {"toolset": toolset} | {key: {entry: value for entry, value in entries.items()
                                                     if _tool_of(entry, toolset) in names}
                                               for key, entries in per_tool.items()}
                part = {**docs, "meta": meta, "toolsets": {toolset: packed}}
                part_uris.append(_register(f"{name}.part{number}", json.dumps(part, ensure_ascii=False), message, tags))
            envelope = {key: value for key, value in docs["meta"].items() if key not in per_tool}
            text = json.dumps({**docs, "meta": {**envelope, PARTS: part_uris}, "toolsets": {toolset: []}},
                              ensure_ascii=False)
        uris[toolset] = _register(name, text, message, tags)
    return uris


def _register(name: str, text: str, message: str, tags: dict[str, str]) -> str:
    import mlflow

    if len(text) > MAX_PROMPT_CHARS:
        raise DataError(f"prompt {name}: {len(text):,} characters, over the registry's {MAX_PROMPT_CHARS:,} (one "
                        "tool's docs, or the docs' meta, is that long)")
    return str(mlflow.genai.register_prompt(name=name, template=text, commit_message=message, tags=tags).uri)


def _tool_of(entry: str, toolset: str) -> str:
    """The tool a per-tool meta entry is about: its key is the tool's name or its tool key."""
    return entry.removeprefix(f"{toolset}::")


def _kept_per_tool(value: Any, toolset: str, names: set[str]) -> bool:
    return isinstance(value, dict) and bool(value) and all(
        isinstance(entry, str) and _tool_of(entry, toolset) in names for entry in value)


def _packed(tools: list[dict[str, Any]], toolset: str,
            per_tool: dict[str, dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The toolset's tools in order, in as few runs as keep each part's text (the tools and their per-tool meta
    entries) within the registry's limit."""
    room = MAX_PROMPT_CHARS - _ENVELOPE_CHARS - len(toolset) - sum(len(key) + 8 for key in per_tool)
    sizes: dict[str, int] = {}
    for entries in per_tool.values():
        for entry, value in entries.items():
            named = _tool_of(entry, toolset)
            sizes[named] = sizes.get(named, 0) + len(json.dumps({entry: value}, ensure_ascii=False))
    parts: list[list[dict[str, Any]]] = [[]]
    used = 0
    for tool in tools:
        size = len(json.dumps(tool, ensure_ascii=False)) + 2 + sizes.get(tool["name"], 0)
        if parts[-1] and used + size > room:
            parts.append([])
            used = 0
        parts[-1].append(tool)
        used += size
    return parts


def read_prompt(uri: str) -> dict[str, Any]:
    """The docs file a prompt version holds (``prompts:/NAME/VERSION`` or ``prompts:/NAME@ALIAS``), its parts
    joined where the toolset's docs were registered in several."""
    data = _prompt_docs(uri)
    meta = data.get("meta")
    if not isinstance(meta, dict) or (parts := meta.pop(PARTS, None)) is None:
        return data
    toolsets = data.get("toolsets")
    if not isinstance(parts, list) or not isinstance(toolsets, dict) or len(toolsets) != 1:
        raise DataError(f"{uri}: its {PARTS} are not a list of prompts of one toolset")
    (toolset,) = toolsets
    toolsets[toolset] = []
    for part in parts:
        tools, part_meta = _part(str(part), toolset)
        toolsets[toolset].extend(tools)
        for key, entries in part_meta.items():
            if key != "toolset" and isinstance(entries, dict):
                meta.setdefault(key, {}).update(entries)
    return data


def _part(uri: str, toolset: str) -> tuple[list[Any], dict[str, Any]]:
    """A part's tools and its meta (the per-tool entries of those tools)."""
    data = _prompt_docs(uri)
    tools, meta = data.get("toolsets"), data.get("meta")
    found = tools.get(toolset) if isinstance(tools, dict) else None
    if not isinstance(found, list):
        raise DataError(f"{uri}: holds no tools of {toolset}")
    return found, meta if isinstance(meta, dict) else {}


def _prompt_docs(uri: str) -> dict[str, Any]:
    import mlflow

    try:
        template = mlflow.genai.load_prompt(uri).template
    except Exception as exc:  # MLflow raises several types for a missing prompt or version
        raise DataError(f"{uri}: no such prompt in this MLflow store ({type(exc).__name__})") from exc
    try:
        data = json.loads(template) if isinstance(template, str) else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise DataError(f"{uri}: not an otbench docs prompt")
    return data
