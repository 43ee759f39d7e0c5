"""How a run is carried out, apart from what it computes, and the command-line names both are read from.

A run's definition (:mod:`otbench.run.definition`) is what it computes; everything else is a
:class:`RunSettings`: where it logs, how many threads and tool workers, whether it shows progress, where it
writes its docs, how the models are reached (servers, key, CPU threads, cache). Two runs with equal
definitions and different settings compute the same thing, so a finished run is reused whatever its settings
were, and a resumed run takes its definition from its checkpoint and its settings from the command that
resumes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from otbench.llm.session import DEFAULT_API_KEY, EMBEDDED, LMOptions

HOW_IT_RUNS = frozenset({"num_threads", "threads", "no_cache", "engine_cache", "quiet", "json", "mlruns",
                         "tracking_uri", "resume", "out", "sweep", "token_budget", "storage", "study_name",
                         "api_base", "editor_api_base", "api_key", "sandbox_workers"})
"""Option names that say how a command carries out its work, not what it computes (older runs logged some of
them as params: they are never part of a definition)."""


@dataclass(frozen=True)
class TrackingOptions:
    """Where runs are logged: an MLflow tracking server (``uri``), else a local store (``directory``,
    default ``./mlruns``)."""

    uri: str | None = None
    directory: Path | None = None

    def values(self) -> dict[str, Any]:
        return {"tracking_uri": self.uri, "mlruns": self.directory}


@dataclass(frozen=True)
class RunSettings:
    """How a run is carried out: none of it changes what the run computes."""

    lm: LMOptions = field(default_factory=LMOptions)
    """How the models are reached (servers, key, CPU threads, cache, grammar transport); which models a run
    calls is its definition's, which :meth:`otbench.run.definition.RunDefinition.lm_options` puts in."""
    tracking: TrackingOptions = field(default_factory=TrackingOptions)
    num_threads: int = 1
    """Tasks run concurrently (and the embedded server's slots)."""
    sandbox_workers: int | None = None
    """The most tool worker processes at once (None: one per thread, at most one per usable core)."""
    progress: bool = True
    out: Path = Path("learned_docs")
    """Where an optimize run writes its final docs (a folder per run)."""


def tracking_from_values(values: Mapping[str, Any]) -> TrackingOptions:
    directory = values.get("mlruns")
    return TrackingOptions(values.get("tracking_uri"), Path(directory) if directory else None)


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


def settings_from_values(values: Mapping[str, Any]) -> RunSettings:
    """A command line's settings (an argparse namespace's values)."""
    return RunSettings(lm=lm_from_values(values), tracking=tracking_from_values(values),
                       num_threads=values.get("num_threads", 1), sandbox_workers=values.get("sandbox_workers"),
                       progress=not values.get("quiet", False), out=Path(values.get("out") or "learned_docs"))


def as_logged(value: Any) -> str:
    """A value the way the commands log it as an MLflow parameter or tag."""
    if isinstance(value, Path):
        return str(value)
    return value if isinstance(value, str) else json.dumps(value)
