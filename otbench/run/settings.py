"""How a run is carried out, apart from what it computes, and the command-line names both are read from.

A run's definition (:mod:`otbench.run.definition`) is what it computes; everything else is a
:class:`RunSettings`: where it logs, how many threads and tool workers, whether it shows progress, where it
writes its docs, how the models are reached (servers, key, CPU threads, cache). Two runs with equal
definitions and different settings compute the same thing, so a finished run is reused whatever its settings
were, and a resumed run takes its definition from its checkpoint and its settings from the command that
resumes it.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from otbench.arguments import non_negative_float, positive_int
from otbench.llm.session import (
    API_BASE_VARIABLE,
    API_KEY_VARIABLE,
    DEFAULT_API_KEY,
    EDITOR_API_BASE_VARIABLE,
    EMBEDDED,
    LMOptions,
)

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


def add_lm_arguments(parser: argparse.ArgumentParser, *, editor: bool = False) -> None:
    """The options of how the models are reached, as :func:`lm_from_values` reads them back."""
    group = parser.add_argument_group("language models")
    group.add_argument("--lm", default=EMBEDDED,
                       help="agent model: 'embedded' (local Qwen2.5-Coder-1.5B, default) or a litellm model string")
    group.add_argument("--api-base", default=os.environ.get(API_BASE_VARIABLE), metavar="URL",
                       help="the agent's OpenAI-compatible server, already running (vLLM, SGLang, Ollama, llama.cpp, "
                            f"python -m otbench.serve); --lm names its model (default ${API_BASE_VARIABLE})")
    if editor:
        group.add_argument("--editor-lm", default=None, help="editor model (default: same as --lm)")
        group.add_argument("--editor-api-base", default=os.environ.get(EDITOR_API_BASE_VARIABLE), metavar="URL",
                           help="the editor's server (default: --api-base when --editor-lm is not given; "
                                f"${EDITOR_API_BASE_VARIABLE})")
    group.add_argument("--api-key", default=os.environ.get(API_KEY_VARIABLE, DEFAULT_API_KEY), metavar="KEY",
                       help="the key --api-base's server takes (python -m otbench.serve prints it); better "
                            f"${API_KEY_VARIABLE}, which other users cannot read in the process list (default "
                            f"${API_KEY_VARIABLE}, else '{DEFAULT_API_KEY}', else the key of a server otbench started here)")
    group.add_argument("--embedded-model", default="qwen-1.5b",
                       help="embedded weights: qwen-1.5b or qwen-0.5b (default qwen-1.5b)")
    group.add_argument("--gguf", type=Path, default=None,
                       help="serve this local GGUF file instead of the embedded model (default: the embedded weights)")
    group.add_argument("--threads", type=positive_int, default=None,
                       help="CPU threads for the embedded model (default: every core)")
    group.add_argument("--temperature", type=non_negative_float, default=0.0, help="sampling temperature (default 0)")
    group.add_argument("--no-cache", action="store_true", help="do not reuse cached LM replies")
    group.add_argument("--no-grammar", action="store_true",
                       help="send the embedded model reply schemas as response_format (pretty-printed JSON, about "
                            "twice the tokens) instead of compact grammars")
    group.add_argument("--prefill", action="store_true",
                       help="embedded model: write each reply's fixed opening ({\"calls\":[{\"name\":\"...) as the start of "
                            "its message, read as prompt tokens instead of generated (fewer model-seconds; the model "
                            "continues from the opening's own tokens, so replies can differ)")


def lm_from_values(values: Mapping[str, Any], *, slots: int = 1) -> LMOptions:
    gguf = values.get("gguf")
    return LMOptions(
        lm=values.get("lm", EMBEDDED), editor_lm=values.get("editor_lm"),
        embedded_model=values.get("embedded_model", "qwen-1.5b"), gguf=Path(gguf) if gguf else None,
        threads=values.get("threads"), slots=slots, temperature=values.get("temperature", 0.0),
        cache=not values.get("no_cache", False), grammar=not values.get("no_grammar", False),
        prefill=bool(values.get("prefill", False)),
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
