"""Learned docs in MLflow's prompt registry: one prompt per optimized toolset, one version per run.

A downstream agent then asks for the docs by name, ``prompts:/otbench.bfcl.names_only.exec_simple_66@latest``,
from the same MLflow store or server, without knowing which run learned them. A version's text
is the toolset's docs as an otbench docs file (what ``Toolbox.read`` reads); its tags say which
run, optimizer and setting produced it.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from otbench.modules.tool_docs import Toolbox

PREFIX = "prompts:/"


def prompt_name(env: str, setting: str, toolset: str) -> str:
    """The registry name of a toolset's docs (MLflow allows letters, digits, ``_``, ``-`` and ``.``)."""
    return ".".join(re.sub(r"[^A-Za-z0-9_-]", "_", part) for part in ("otbench", env, setting, toolset))


def register_docs(toolbox: Toolbox, toolsets: list[str], *, env: str, setting: str,
                  tags: dict[str, str]) -> dict[str, str]:
    """A new version of each toolset's prompt holding its docs; returns ``{toolset: prompt URI}``."""
    import mlflow

    from otbench.modules.tool_docs import Toolbox

    uris = {}
    for toolset in toolsets:
        docs = Toolbox({toolset: toolbox.toolset(toolset)}, meta={**toolbox.meta, "toolset": toolset})
        version = mlflow.genai.register_prompt(
            name=prompt_name(env, setting, toolset), template=json.dumps(docs.to_json(), ensure_ascii=False),
            commit_message=f"docs of {toolset} learned by {tags.get('optimizer', 'an optimizer')}", tags=tags)
        uris[toolset] = version.uri
    return uris


def read_prompt(uri: str) -> dict[str, Any]:
    """The docs file a prompt version holds (``prompts:/NAME/VERSION`` or ``prompts:/NAME@ALIAS``)."""
    import mlflow

    from otbench.errors import DataError

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
