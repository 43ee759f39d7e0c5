"""What the commands' typed options share, and the command-line names that runs are logged by.

Every command is a ``run(options)`` over frozen dataclasses; its command line is one way to fill them.
A run's *definition* (what it computes) is logged to MLflow and compared by ``compare`` under the
options' command-line names (``limit``, ``p2p_samples``...), so the options convert to and from that
flat form; options that only say how a run is carried out (:data:`HOW_IT_RUNS`) are left out of it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otbench.llm.session import DEFAULT_API_KEY, EMBEDDED, LMOptions

# Options that say how a command carries out its work, not what it computes. Every other option
# defines the run: it is logged, saved in the checkpoint, and taken from there by --resume.
HOW_IT_RUNS = frozenset({"num_threads", "threads", "no_cache", "engine_cache", "quiet", "json", "mlruns",
                         "tracking_uri", "resume", "out", "sweep", "token_budget", "storage", "study_name",
                         "api_base", "editor_api_base", "api_key", "sandbox_workers"})


@dataclass(frozen=True)
class TrackingOptions:
    """Where runs are logged: an MLflow tracking server (``uri``), else a local store (``directory``,
    default ``./mlruns``)."""

    uri: str | None = None
    directory: Path | None = None

    def values(self) -> dict[str, Any]:
        return {"tracking_uri": self.uri, "mlruns": self.directory}


def tracking_from_values(values: Mapping[str, Any]) -> TrackingOptions:
    directory = values.get("mlruns")
    return TrackingOptions(values.get("tracking_uri"), Path(directory) if directory else None)


def lm_values(options: LMOptions) -> dict[str, Any]:
    """LM options by their command-line names (``slots`` is not one: it follows ``num_threads``)."""
    return {"lm": options.lm, "editor_lm": options.editor_lm, "embedded_model": options.embedded_model,
            "gguf": str(options.gguf) if options.gguf else None, "threads": options.threads,
            "temperature": options.temperature, "no_cache": not options.cache, "no_grammar": not options.grammar,
            "api_base": options.api_base, "editor_api_base": options.editor_api_base, "api_key": options.api_key}


def lm_from_values(values: Mapping[str, Any], *, slots: int = 1) -> LMOptions:
    gguf = values.get("gguf")
    return LMOptions(
        lm=values.get("lm", EMBEDDED), editor_lm=values.get("editor_lm"),
        embedded_model=values.get("embedded_model", "qwen-1.5b"), gguf=Path(gguf) if gguf else None,
        threads=values.get("threads"), slots=slots, temperature=values.get("temperature", 0.0),
        cache=not values.get("no_cache", False), grammar=not values.get("no_grammar", False),
        api_base=values.get("api_base"), editor_api_base=values.get("editor_api_base"),
        api_key=values.get("api_key", DEFAULT_API_KEY),
    )


def definition(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values that define a run: all but :data:`HOW_IT_RUNS`, paths as text (as checkpoints keep them)."""
    return {name: str(value) if isinstance(value, Path) else value
            for name, value in values.items() if name not in HOW_IT_RUNS}


def as_logged(value: Any) -> str:
    """A value the way the commands log it as an MLflow parameter or tag."""
    if isinstance(value, Path):
        return str(value)
    return value if isinstance(value, str) else json.dumps(value)
