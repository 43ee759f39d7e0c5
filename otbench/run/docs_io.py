"""Read learned docs from a file or an MLflow run and apply them to a toolbox.

Accepted: an otbench docs file (``Toolbox.write``), a DSPy state file (``Toolbox.save``),
``runs:/RUN_ID`` (the final docs an optimize run logged), a prompt of MLflow's registry
(``prompts:/NAME@latest``: one toolset's docs, as optimize registers them), or ``ledger:KEY`` (the final docs an
entry of the results ledger keeps: learned docs any checkout of the repository has).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from otbench.errors import DataError
from otbench.modules.tool_docs import DOCS_FORMAT, Toolbox
from otbench.run.ledger import LEDGER, RUN_DOCS_ARTIFACT, docs_entry
from otbench.run.prompts import PREFIX, read_prompt

STORED = ("runs:/", PREFIX)
"""How docs kept in an MLflow store are named (a run's final docs, a registered prompt); anything else is a file."""
ENV_MEMORY = "env_memory"
"""The docs' meta key of what the environment learned beside them (its ``memory()``), saved with the docs."""


def keep_memory(toolbox: Toolbox, env: Any) -> None:
    """Save in ``toolbox``'s meta what ``env`` learned beside the docs, if it learns anything (its ``memory()``)."""
    memory = getattr(env, "memory", None)
    learned = memory() if memory is not None else None
    if learned:
        toolbox.meta[ENV_MEMORY] = learned


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise DataError(f"--docs {path}: no such file")
    try:
        data = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"--docs {path}: not valid JSON ({exc})") from exc
    except RecursionError:
        raise DataError(f"--docs {path}: nested too deep to be a docs file") from None
    if not isinstance(data, dict):
        raise DataError(f"--docs {path}: expected a JSON object")
    return data


def _download_run_docs(spec: str) -> Path:
    import mlflow

    run_id = spec.removeprefix("runs:/").strip("/").split("/")[0]
    try:
        return Path(mlflow.artifacts.download_artifacts(artifact_uri=f"runs:/{run_id}/{RUN_DOCS_ARTIFACT}"))
    except Exception as exc:  # MLflow raises several types for a missing run or file
        raise DataError(f"--docs {spec}: no final docs in that run ({type(exc).__name__})") from exc


def _read_spec(spec: str) -> dict[str, Any]:
    if spec.startswith(LEDGER):
        docs = docs_entry(spec).artifacts[RUN_DOCS_ARTIFACT]
        return docs if isinstance(docs, dict) else {}
    if spec.startswith(PREFIX):
        return read_prompt(spec)
    return _read_json(_download_run_docs(spec) if spec.startswith("runs:/") else Path(spec))


def check_source(spec: str, tracking: Any) -> None:
    """Refuse, before anything is written, docs that cannot be read: a file that is not an otbench docs file or DSPy
    state, or a run or prompt of a store that does not exist yet (``tracking``: the command's
    :class:`~otbench.run.settings.TrackingOptions`)."""
    from otbench.store import require_store

    if spec.startswith(STORED):
        require_store(tracking.uri, tracking.directory, f"--docs {spec}")
        return
    data = _read_spec(spec) if spec.startswith(LEDGER) else _read_json(Path(spec))
    if data.get("format") == DOCS_FORMAT:
        _toolbox(spec, data)


def load_docs(spec: str) -> Toolbox:
    """An otbench docs file (or a run's final docs) as a :class:`Toolbox`."""
    data = _read_spec(spec)
    if data.get("format") != DOCS_FORMAT:
        raise DataError(f"{spec}: not an otbench docs file (use the final_docs.json an optimize run writes)")
    return _toolbox(spec, data)


def _toolbox(spec: str, data: dict[str, Any]) -> Toolbox:
    try:
        return Toolbox.from_json(data)
    except DataError as error:
        raise DataError(f"--docs {spec}: {error}") from None


def apply_docs(toolbox: Toolbox, spec: str, *, translate: Callable[[Toolbox], Toolbox | None] | None = None,
               restore: Callable[[dict[str, Any]], None] | None = None) -> int:
    """Copy the learned descriptions in ``spec`` onto ``toolbox``; returns the number of tools matched.

    ``translate`` (an environment's ``docs_from``) turns docs learned in another environment into docs of this
    one's tools (None: they are this environment's own and apply as they are). ``restore`` (an environment's
    ``restore_memory``) is given what the environment learned beside the docs, where the docs file saved it.
    """
    data = _read_spec(spec)
    if data.get("format") == DOCS_FORMAT:
        learned = _toolbox(spec, data)
        matched = toolbox.adopt_docs((translate(learned) if translate else None) or learned)
        memory = learned.meta.get(ENV_MEMORY)
        if restore is not None and memory is not None:
            if not isinstance(memory, dict):
                raise DataError(f"--docs {spec}: its {ENV_MEMORY!r} must be an object")
            restore(memory)
    else:  # DSPy state: {"tools['toolset::name']": {"signature": ...}}
        matched = 0
        for key, tool in toolbox.tools.items():
            state = data.get(f"tools['{key}']")
            if isinstance(state, dict) and "signature" in state:
                try:
                    tool.load_state(state)
                except (KeyError, TypeError, ValueError, IndexError) as exc:
                    raise DataError(f"--docs {spec}: malformed DSPy state for {key}") from exc
                matched += 1
    if matched == 0:
        raise DataError(f"--docs {spec}: none of its tools belong to this environment and setting")
    return matched
