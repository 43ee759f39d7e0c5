"""Readable per-iteration artefacts: what changed in the docs, and the editor's exchanges, as markdown.

A run's docs file holds every toolset of the environment (150 on BFCL, most never trained), so
a reader comparing iterations needs only the tools that changed, shown as a diff of the doc the
agent reads. Exchanges hold multi-line prompts and replies: JSON lines hide them on one line.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS


def optimized_part(docs: dict[str, Any]) -> dict[str, Any]:
    """A docs file (``Toolbox.to_json``) limited to the toolsets its meta says were optimized, if it says."""
    optimized = docs.get("meta", {}).get(OPTIMIZED_TOOLSETS)
    if not isinstance(optimized, list):
        return docs
    return {**docs, "toolsets": {ts: tools for ts, tools in docs["toolsets"].items() if ts in set(optimized)}}


def tool_lines(tool: dict[str, Any]) -> list[str]:
    """One tool's doc (a ``DocumentedTool.to_dict`` record) as the lines a diff compares."""
    lines = [f"description: {tool.get('description', '')}", f"returns: {tool.get('returns', '')}"]
    parameters = tool.get("parameters")
    if parameters is None:
        return [*lines, "parameters: not documented"]
    lines.append("parameters (learned):" if tool.get("parameters_learned") else "parameters:")
    for p in parameters:
        required = "required" if p.get("required", True) else "optional"
        lines.append(f"  {p['name']} ({p.get('type', 'any')}, {required}): {p.get('description', '')}")
    return lines


def _tools(docs: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(ts, tool["name"]): tool for ts, tools in docs.get("toolsets", {}).items() for tool in tools}


def docs_diff_markdown(before: dict[str, Any], after: dict[str, Any], *, title: str) -> str:
    """Markdown with one unified diff per tool whose doc differs between two docs files."""
    old, new = _tools(before), _tools(after)
    sections = []
    for key in [*old, *(k for k in new if k not in old)]:
        was, now = tool_lines(old[key]) if key in old else [], tool_lines(new[key]) if key in new else []
        if was != now:
            diff = difflib.unified_diff(was, now, "before", "after", lineterm="", n=len(was) + len(now))
            sections.append(f"## {key[0]} / {key[1]}\n\n```diff\n" + "\n".join(diff) + "\n```\n")
    changed = f"{len(sections)} tool(s) changed" if sections else "no tool's docs changed"
    return f"# {title}: {changed}\n\n" + "\n".join(sections)


def _block(value: Any) -> str:
    if isinstance(value, str):
        fence = "````" if "```" in value else "```"
        return f"{fence}text\n{value}\n{fence}"
    return f"```json\n{json.dumps(value, indent=2, ensure_ascii=False, default=str)}\n```"


def exchanges_markdown(exchanges: list[dict[str, Any]], *, title: str) -> str:
    """Every exchange (``to_dict`` records) as a section, each field in a block that keeps its line breaks."""
    if not exchanges:
        return f"# {title}: no exchanges\n"
    sections = [f"# {title}: {len(exchanges)} exchange(s)\n"]
    for number, exchange in enumerate(exchanges, start=1):
        job = exchange.get("job")
        sections.append(f"## {number}" + (f". {job}" if isinstance(job, str) and job else "") + "\n")
        sections += [f"### {field}\n\n{_block(value)}\n" for field, value in exchange.items() if field != "job"]
    return "\n".join(sections)
