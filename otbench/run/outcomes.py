"""Per-task outcomes as a run artefact, and every reported figure with its interval in MLflow.

``evaluate`` and ``optimize`` keep each task's scores (``outcomes.json``: the task sample, and per split
the tasks of ``before``/``after``/``test`` for optimize, ``result`` for evaluate), so ``compare`` and
``reproduce`` recompute a row's intervals and its paired differences from the run alone, without
running anything again. A run's result metrics are logged with their intervals under one naming,
for every metric of every environment: ``result/E``, ``result/E_ci_low``, ``result/E_ci_high``,
``result/E_n``.

Runs logged before outcomes were kept are read here, once: an evaluation's per-task table
(``per_task.json``) and an offline optimize run's test trajectories hold the same scores; an online
optimize run from then has none, and its row is reported without an interval.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otbench.evals.outcomes import MetricRule, Outcomes, interval
from otbench.evals.stats import Interval

OUTCOMES_ARTIFACT = "outcomes.json"
RESULT = "result"
"""The split that is a run's result: an evaluation's only one, an optimize run's test split (else its final docs)."""
NO_OUTCOMES = "no per-task outcomes (run logged before they were kept)"
PARTIAL = "partial_trajectories.jsonl"
"""Artefact of a scoring under way (an evaluation's, or an optimize run's of its test tasks): the tasks finished so
far, one trajectory a line."""
SPENT = "partial_tokens.json"
"""Artefact of a scoring under way: the run's tokens by phase (``tokens_by_phase``) and seconds (``seconds``; not
in those kept before it was) when :data:`PARTIAL` was last written."""


@dataclass(frozen=True)
class RunOutcomes:
    """The per-task outcomes a run kept, by split, and which split is its result."""

    splits: Mapping[str, Outcomes]
    result: str

    @property
    def row(self) -> Outcomes:
        """The outcomes the run is judged by (a comparison's row)."""
        return self.splits[self.result]

    def to_json(self) -> dict[str, Any]:
        return {"result": self.result, "splits": {name: part.to_json() for name, part in self.splits.items()}}


def intervals(outcomes: Outcomes, rules: Mapping[str, MetricRule]) -> dict[str, Interval]:
    """Every metric that ``outcomes`` reports, with its interval."""
    found = {name: interval(outcomes, rule) for name, rule in rules.items()}
    return {name: value for name, value in found.items() if value.n}


def log(outcomes: RunOutcomes) -> None:
    """Keep the run's per-task outcomes as ``outcomes.json`` on the active run."""
    import mlflow

    mlflow.log_dict(outcomes.to_json(), OUTCOMES_ARTIFACT)


def from_trajectory_lines(lines: Iterable[str], sample: int) -> Outcomes:
    """Outcomes from trajectories logged as JSON lines (``trajectories.jsonl``)."""
    records = [json.loads(line) for line in lines if line.strip()]
    return Outcomes.from_json(({"task": r["task_id"], "metrics": r.get("metrics", {})} for r in records), sample)


def read(run: Any) -> RunOutcomes | None:
    """The per-task outcomes of an MLflow run (``mlflow.entities.Run``), or None when it kept none.

    Runs logged before ``outcomes.json`` existed are read from what they did keep: an evaluation's
    ``per_task.json`` table, an offline optimize run's ``test_trajectories.jsonl``.
    """
    logged = str(run.data.params.get("seed", run.data.tags.get("seed", 0)) or 0)
    sample = int(logged) if logged.lstrip("-").isdigit() else 0  # "all": a whole split, drawn with any seed
    kept = artifact_text(run.info.run_id, OUTCOMES_ARTIFACT)
    if kept is not None:
        document = json.loads(kept)
        splits = {name: Outcomes.from_json(records, sample) for name, records in document["splits"].items()}
        return RunOutcomes(splits, document["result"])
    command = run.data.tags.get("command")
    if command == "evaluate":
        table = artifact_text(run.info.run_id, "per_task.json")
        if table is None:
            return None
        document = json.loads(table)
        rows = [dict(zip(document["columns"], values, strict=True)) for values in document["data"]]
        metric_names = [c for c in document["columns"] if c not in ("task_id", "calls", "parse_error")]
        records = [{"task": row["task_id"], "metrics": {k: row[k] for k in metric_names if _score(row.get(k))}}
                   for row in rows]
        return RunOutcomes({RESULT: Outcomes.from_json(records, sample)}, RESULT)
    if command == "optimize":
        lines = artifact_text(run.info.run_id, "test_trajectories.jsonl")
        if lines is None:
            return None
        return RunOutcomes({"test": from_trajectory_lines(lines.splitlines(), sample)}, "test")
    return None


def _score(value: Any) -> bool:
    """A per-task score in a logged table (a task without that score has an empty cell: None or NaN)."""
    return isinstance(value, (int, float)) and not math.isnan(value)


def artifact_text(run_id: str, path: str) -> str | None:
    """A text artefact of a run, None when it has none by that path."""
    import mlflow

    try:
        local = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=path)
    except Exception:  # noqa: BLE001 - MLflow raises several types for an artefact that is not there
        return None
    return Path(local).read_text()
