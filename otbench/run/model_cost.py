"""What learning costs the model: ``python -m otbench.bench learning [optimize's options]``.

On a machine without a GPU the embedded model's time is the product's speed, and it is spent processing prompt
tokens and generating reply tokens, at rates that differ about 3x from one machine (or day) to the next and collapse
while other work shares the cores. So learning is measured in what does not change: the model calls an optimize run
makes, the prompt tokens llama.cpp processed (not served from its prefix cache) and the tokens it generated, by
phase and per task; priced in model-seconds at a stated speed (prompt and generated tokens a second: the one ``bench
llm`` measures on this machine, or one given, such as a slow machine's ``34,10``). The run is made with the LM cache
off, so nothing an earlier run paid for is served, and reports the starting and learned docs' scores beside what they
cost.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otbench.errors import ConfigError

LEARNING_PHASES = ("agent", "editor", "exploration", "start_docs")
"""The phases an optimize run's model calls are charged to, in the order they are reported (``start_docs``: a
separate scoring of the starting docs, where the optimizer's own first attempts were not made with them)."""


@dataclass(frozen=True)
class Speeds:
    """The model's speed: prompt tokens processed and tokens generated a second, and where the figures come from."""

    prompt: float
    generated: float
    source: str

    def seconds(self, processed: float, generated: float) -> float:
        """The model-seconds ``processed`` prompt tokens and ``generated`` tokens cost at this speed."""
        return processed / self.prompt + generated / self.generated


def parse_speeds(text: str) -> Speeds:
    """``PROMPT,GENERATED`` tokens a second (``34,10``), refused on one line when it is not two positive numbers."""
    parts = [part.strip() for part in text.split(",")]
    try:
        prompt, generated = (float(part) for part in parts)
    except ValueError:
        raise ConfigError(f"--speeds {text!r}: give prompt and generated tokens a second, such as 34,10") from None
    if prompt <= 0 or generated <= 0:
        raise ConfigError(f"--speeds {text!r}: both speeds must be above 0")
    return Speeds(prompt, generated, "given")


def measured_speeds(figures: Mapping[str, Mapping[str, float]]) -> Speeds:
    """The speed ``bench llm`` measured: llama.cpp's own prompt and generation rates over its whole workload."""
    overall = figures.get("all", {})
    prompt, generated = overall.get("prompt_tokens_per_second", 0.0), overall.get("generation_tokens_per_second", 0.0)
    if not prompt or not generated:
        raise ConfigError("bench llm reported no llama.cpp timings (a hosted model?): give --speeds PROMPT,GENERATED")
    return Speeds(float(prompt), float(generated), "bench llm")


def cost_report(summary: Mapping[str, Any], speeds: Speeds) -> dict[str, Any]:
    """An optimize run's summary (``optimize --json``) as what its learning cost the model: per phase and in all,
    the calls, prompt tokens processed and served from the cache, tokens generated and their model-seconds, each
    also per task; with the starting and learned docs' scores."""
    tokens = summary["tokens_by_phase"]
    tasks = max(1, int(summary.get("n") or 0))
    phases = [phase for phase in LEARNING_PHASES if phase in tokens] + sorted(
        phase for phase in tokens if phase not in (*LEARNING_PHASES, "all"))
    rows = {}
    for phase in [*phases, "all"]:
        row = tokens[phase]
        processed, generated = int(row.get("server_prompt_processed", 0)), int(row.get("server_generated", 0))
        figures = {"calls": int(row.get("calls", 0)), "prompt_processed": processed,
                   "prompt_cached": int(row.get("server_prompt_cached", 0)), "generated": generated,
                   "model_seconds": round(speeds.seconds(processed, generated), 1)}
        figures |= {f"{name}_per_task": round(value / tasks, 1) for name, value in figures.items()}
        rows[phase] = figures
    timed = int(tokens["all"].get("server_calls", 0))
    return {"run_id": summary.get("run_id"), "optimizer": summary.get("optimizer"), "env": summary.get("env"),
            "setting": summary.get("setting"), "n": summary.get("n"), "before": summary.get("before"),
            "after": summary.get("after"), "test": summary.get("test"),
            "speeds": {"prompt": speeds.prompt, "generated": speeds.generated, "source": speeds.source},
            "timed_calls": timed, "by_phase": rows, "seconds": summary.get("seconds")}


def report_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The report's phases as table rows."""
    return [{"phase": phase, **{key: row[key] for key in ("calls", "prompt_processed", "prompt_cached", "generated",
                                                              "model_seconds", "model_seconds_per_task")}}
            for phase, row in report["by_phase"].items()]


def read_summary(source: str) -> dict[str, Any]:
    """An ``optimize --json`` output (a file), or ``ledger:KEY``: the summary an optimize run's ledger entry keeps;
    refused on one line when it is neither."""
    if source.startswith("ledger:"):
        from otbench.run.ledger import starting_with

        key = source.removeprefix("ledger:")
        found = [entry for entry in starting_with(key) if "summary.json" in entry.artifacts] if len(key) >= 8 else []
        if len(found) != 1:
            raise ConfigError(f"--summary {source}: {len(found)} ledger entries with a summary have keys beginning "
                              f"with {key!r} (give eight characters or more of one: otbench results list)")
        summary = found[0].artifacts["summary.json"]
    else:
        try:
            summary = json.loads(Path(source).read_text())
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--summary {source}: not an optimize --json output ({exc})") from None
    if not isinstance(summary, dict) or "tokens_by_phase" not in summary or "all" not in summary["tokens_by_phase"]:
        raise ConfigError(f"--summary {source}: not an optimize --json output (no tokens_by_phase)")
    return summary
