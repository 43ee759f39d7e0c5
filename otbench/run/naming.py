"""How a run is told apart in MLflow's tables: its name (what it is, its models' short names, when it started) and
its colour.

MLflow's UI colours a run by its ``mlflow.runColor`` tag, else by a hash of its id into 29 colours, which gives runs
of one experiment the same colour; every run is given the palette colour the experiment's latest runs use least
(:func:`run_color`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


def model_label(lm: str, *, embedded_model: str = "qwen-1.5b", gguf: Path | str | None = None) -> str:
    """A model's short name for run names: ``qwen-1.5b``, a GGUF file's stem, ``gpt-5-mini`` for ``openai/gpt-5-mini``."""
    if lm != "embedded":
        return lm.rsplit("/", 1)[-1]
    return Path(gguf).stem if gguf else embedded_model


def run_name(*parts: Any) -> str:
    """A readable name that tells runs apart in MLflow's tables: what the run is, then when it started.

    Parts that are None or empty are left out; the time (to the second) keeps names of equal runs apart.
    """
    return "-".join([*(str(part) for part in parts if part not in (None, "")), time.strftime("%m%d-%H%M%S")])


RUN_COLOR_TAG = "mlflow.runColor"
RUN_COLORS = ("#c83243", "#137dae", "#308613", "#de7921", "#8a63bf", "#04867d", "#b45091", "#a6630c", "#434a93",
              "#facb66", "#1f272d", "#e65b77", "#3ba65e", "#4299e0", "#93320b", "#5f7281", "#8ddda8", "#f792a6",
              "#0e538b", "#be501e", "#115026", "#8acaff", "#9e102c", "#f2be88", "#445461", "#277c43", "#2272b4",
              "#c82d4c", "#8396a5")
"""MLflow UI's own run colours (its colour picker offers them), ordered so that neighbours differ in hue."""


def run_color(experiment_id: str, run_id: str) -> str:
    """The first colour of :data:`RUN_COLORS` that none of the experiment's latest runs (as many as there are
    colours, less one) has, else the one those runs used longest ago: runs shown together differ in colour.

    Two sweep workers starting a run at the same instant may pick the same colour.
    """
    import mlflow
    from mlflow.entities import ViewType

    latest = mlflow.MlflowClient().search_runs([experiment_id], order_by=["attributes.start_time DESC"],
                                               max_results=len(RUN_COLORS), run_view_type=ViewType.ALL)
    used = [run.data.tags.get(RUN_COLOR_TAG) for run in latest if run.info.run_id != run_id][: len(RUN_COLORS) - 1]
    free = [color for color in RUN_COLORS if color not in used]
    return free[0] if free else max(RUN_COLORS, key=used.index)
