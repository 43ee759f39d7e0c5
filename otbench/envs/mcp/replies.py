"""A tool's MCP result read as what the agent, the editor and the metric see: an output, or an error.

Everything a server returns is untrusted data. It is read, never run: text that holds JSON is parsed
with :func:`json.loads` (a Python literal such as ``[{'n': 1}]`` stays text: nothing here evaluates
it), binary content is named by its type and size, not decoded, and text is cleaned of what would break
a prompt or a log (lone surrogates). A result larger than :data:`MAX_RESULT_CHARS` is not passed on: it
would fill the agent's and the editor's prompts and the run's logs, so the call fails with an error that
says how large it was.

The output is the result's content: one text block as its JSON value or its text, several as a list of
them; a result with no content is read from its structured content. Content comes first because it is
what every client reads, and because the SDK wraps a plain structured value (``5``) as ``{"result": 5}``.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from otbench.core.calls import MAX_DEPTH, clean_text
from otbench.core.trajectory import json_text

MAX_RESULT_CHARS = 100_000
"""The most characters a tool's output may take as JSON text; a larger one fails the call."""
MAX_ERROR_CHARS = 2_000
"""An error message is cut to this many characters (a server may put a whole log in one)."""


def one_line(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``text`` cleaned, on one line, cut to ``limit`` characters: how a server's message is quoted."""
    flat = " ".join(clean_text(text).split())
    return flat if len(flat) <= limit else f"{flat[:limit]}... ({len(flat)} characters)"


def _block(block: ContentBlock) -> Any:
    """One content block as data: text as its JSON value or itself; anything binary by type and size."""
    if isinstance(block, TextContent):
        return _parsed(clean_text(block.text))
    if isinstance(block, (ImageContent, AudioContent)):
        return f"[{block.type} {block.mime_type}, {len(block.data) * 3 // 4} bytes]"
    if isinstance(block, ResourceLink):
        return f"[resource {clean_text(str(block.uri))}]"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return _parsed(clean_text(resource.text))
        return f"[resource {clean_text(str(resource.uri))}, {len(resource.blob) * 3 // 4} bytes]"
    return f"[{clean_text(str(getattr(block, 'type', 'unknown')))} content]"


def _parsed(text: str) -> Any:
    """The JSON value ``text`` holds (``"42"`` is 42, ``'{"a": 1}'`` an object), else the text itself."""
    try:
        return cleaned(json.loads(text))
    except (ValueError, RecursionError):
        return text


def cleaned(value: Any, depth: int = 0) -> Any:
    """JSON data with every text cleaned (lone surrogates, which JSON's ``"\\ud800"`` decodes to, break prompts and
    logs); what is nested deeper than :data:`MAX_DEPTH` is replaced by a note saying so, so no hostile value reaches
    the recursion limit of whatever reads it next."""
    if isinstance(value, str):
        return clean_text(value)
    if depth >= MAX_DEPTH and isinstance(value, (list, dict)):
        return f"[nested more than {MAX_DEPTH} levels deep]"
    if isinstance(value, list):
        return [cleaned(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {clean_text(str(key)): cleaned(item, depth + 1) for key, item in value.items()}
    return value


def _content(result: CallToolResult) -> Any:
    values = [_block(block) for block in result.content]
    return values[0] if len(values) == 1 else values


def error_text(result: CallToolResult) -> str:
    """What a result the server flagged as an error says, on one line."""
    value = _content(result)
    return one_line(value if isinstance(value, str) else json_text(value)) or "the tool reported an error"


def read_result(result: CallToolResult) -> tuple[Any, str | None]:
    """``(output, None)`` for a result that answered, ``(None, error)`` for one that failed or is too large."""
    if result.is_error:
        return None, f"ToolError: {error_text(result)}"
    structured = result.structured_content
    output = cleaned(structured) if not result.content and structured is not None else _content(result)
    size = len(json_text(output))
    if size > MAX_RESULT_CHARS:
        return None, (f"ResultTooLarge: the tool returned {size:,} characters, more than the {MAX_RESULT_CHARS:,} "
                      "a result may take; ask it for less")
    return output, None
