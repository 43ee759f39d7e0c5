"""How runs are shown in MLflow's UI (3.17): a saved view per environment.

The UI's defaults are decided as follows:

- its runs table shows the attributes Source, Models and Dataset; a metric is a column only once
  chosen in the browser (kept in that browser's local storage) or by a saved view, an experiment tag
  ``mlflow.sharedViewState.ID`` that the Views menu lists and ``?viewStateShareKey=ID`` opens. Each
  environment gets one (:func:`share_view`): its result metrics and what defines a run as columns,
  charts of the results and a parallel-coordinates plot of method against the primary metric;
- every evaluate and optimize run logs its result under the same names, ``result/METRIC`` and
  ``result/tokens`` (:func:`otbench.run.tracking.log_result`), so runs of both commands are one column and one
  chart each; a run's colour is :func:`otbench.run.naming.run_color`'s.
"""

from __future__ import annotations

import json
import time
from typing import Any

from otbench.mlflow_store import EXPERIMENT
from otbench.run.tracking import RESULT_PREFIX

VIEW_TAG_PREFIX = "mlflow.sharedViewState."


def view_id(env: str) -> str:
    """The id of environment ``env``'s saved view (``?viewStateShareKey=`` opens it)."""
    return f"otbench-{env}"


def viewed_environments(experiment_tags: dict[str, str]) -> list[str]:
    """The environments with a saved view among an experiment's tags."""
    prefix = f"{VIEW_TAG_PREFIX}{view_id('')}"
    return sorted(key.removeprefix(prefix) for key in experiment_tags if key.startswith(prefix))


def view_state(env: str, metric_names: tuple[str, ...], primary_metric: str) -> dict[str, Any]:
    """The view of ``env``'s evaluate and optimize runs, as MLflow's UI serialises one: the search (this
    environment, no comparison runs), columns (the result metrics, what defines a run) and charts (each result,
    the primary metric against tokens, and a parallel-coordinates plot of method against the primary metric)."""
    results = [f"{RESULT_PREFIX}{name}" for name in (*metric_names, "tokens")]
    primary, tokens = f"{RESULT_PREFIX}{primary_metric}", f"{RESULT_PREFIX}tokens"
    section = f"{env}-results"
    columns = [*(f"metrics.`{metric}`" for metric in results),
               *(f"params.`{param}`" for param in ("method", "setting", "limit", "seed", "lm"))]

    def chart(number: int, kind: str, **fields: Any) -> dict[str, Any]:
        return {"uuid": f"{env}-chart-{number}", "type": kind, "runsCountToCompare": 20, "metricSectionId": section,
                "deleted": False, "isGenerated": False, **fields}

    charts = [chart(0, "PARALLEL", selectedParams=["method"], selectedMetrics=[primary, tokens], showAllRuns=True),
              chart(1, "SCATTER", xaxis={"key": tokens, "type": "METRIC"}, yaxis={"key": primary, "type": "METRIC"},
                    runsCountToCompare=100),
              *(chart(2 + number, "BAR", metricKey=metric) for number, metric in enumerate(results))]
    return {
        "searchFilter": f"tags.env = '{env}' AND tags.command != 'compare'", "orderByKey": "attributes.start_time",
        "orderByAsc": False, "startTime": "ALL", "lifecycleFilter": "Active", "modelVersionFilter": "All Runs",
        "datasetsFilter": [],
        "selectedColumns": columns, "columnOrder": columns,
        "compareRunCharts": charts,
        "compareRunSections": [{"uuid": section, "name": f"{env} results", "display": True, "isReordered": False,
                                "deleted": False, "isGenerated": False}],
        "isAccordionReordered": True, "hideEmptyCharts": True,
    }


def share_view(env: str, metric_names: tuple[str, ...], primary_metric: str) -> str:
    """Save (or refresh) environment ``env``'s view of the runs as a saved view of the experiment, listed in the
    UI's Views menu; returns its id. Written as MLflow's UI writes one: a JSON envelope holding the state.

    Workers sharing a store all call this as they start: a view already current is left as it is, and a write
    that loses the race to another worker's identical write (a SQL store refuses the second insert of the
    key) is not an error, since the view it wanted is there."""
    import mlflow

    experiment = mlflow.get_experiment_by_name(EXPERIMENT)
    if experiment is None:
        raise ValueError(f"no {EXPERIMENT!r} experiment: configure() first")
    key = f"{VIEW_TAG_PREFIX}{view_id(env)}"
    state = json.dumps(view_state(env, metric_names, primary_metric))
    saved = _saved_envelope(experiment.tags.get(key))
    if saved.get("state") == state:
        return view_id(env)
    now = int(time.time() * 1000)
    created = saved.get("createdAt") if isinstance(saved.get("createdAt"), int) else now
    envelope = {"name": f"otbench: {env} runs compared", "createdAt": created, "updatedAt": now, "state": state}
    client = mlflow.MlflowClient()
    try:
        client.set_experiment_tag(experiment.experiment_id, key, json.dumps(envelope))
    except mlflow.exceptions.MlflowException:
        if key not in client.get_experiment(experiment.experiment_id).tags:
            raise
    return view_id(env)


def _saved_envelope(tag_value: str | None) -> dict[str, Any]:
    """A saved view's envelope as stored, or empty when there is none or it is not one (edited by hand)."""
    if tag_value is None:
        return {}
    try:
        envelope = json.loads(tag_value)
    except json.JSONDecodeError:
        return {}
    return envelope if isinstance(envelope, dict) else {}


def view_url(base_url: str, experiment_id: str, env: str) -> str:
    """The runs page of the UI at ``base_url`` opened on environment ``env``'s saved view."""
    return f"{base_url}/#/experiments/{experiment_id}/runs?viewStateShareKey={view_id(env)}"
