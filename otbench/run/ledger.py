"""The results ledger: every run a page cites, kept with the code, so results outlive the machine they ran on.

The ledger is a folder of the repository (``results/``, or ``$OTBENCH_RESULTS``) holding one small JSON file per
run, named by its definition key (``runs/KEY.json``): the definition, the code version it ran on, every task's
outcome, the final docs, each iteration's metrics, tokens by phase, seconds, the model server's measured speed
and the machine. An interrupted run is kept as far as it got, with what a resume needs (an optimize run's last
checkpoint, the calls its finished iterations saw and the test tasks it scored; an evaluation's finished tasks;
with finished tasks, the tokens spent so far), so a run longer than one machine's life continues on the next.
Trajectories and traces stay in MLflow.

Entries are made from MLflow runs (:func:`entry_of`), and made MLflow runs again on any checkout
(:func:`load`): ordinary runs with their params, metrics by step, intervals and artefacts, which the MLflow UI
compares and ``compare`` and ``reproduce`` reuse (:mod:`otbench.run.lookup` loads an entry when a definition it
is asked for has no run in the local store). The format is :data:`SCHEMA`; :func:`verify` checks a ledger.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from otbench.errors import ConfigError, DataError
from otbench.paths import results_dir
from otbench.run import tracking
from otbench.run.definition import RunDefinition, split_sizes

SCHEMA = "otbench.results/1"
"""The entries' format: its name and version, the first field of every entry."""
RUNS = "runs"
"""The ledger's folder of entries, one ``KEY.json`` a run."""
LEDGER_TAG = "otbench.ledger"
"""Tag of a run loaded from the ledger: the entry's key."""
KEPT_ARTIFACTS = ("outcomes.json", "tokens.json", "summary.json", "docs/final_docs.json", "invented_claims.json",
                  "doc_contamination.json", "val_candidates.json")
"""A run's small artefacts an entry keeps (what comparisons read: outcomes, tokens, final docs, claims)."""
KEPT_TAGS = ("setting", "chosen_docs", "mlflow.runName")
"""Tags an entry keeps beside those its definition makes."""
STATUSES = ("finished", "interrupted")
LEDGER = "ledger:"
"""How docs name the final docs an entry keeps: ``ledger:KEY`` (its key, or the eight characters or more of it people
quote), learned docs any checkout of the repository has (``evaluate --docs``, ``export``)."""
RUN_DOCS_ARTIFACT = "docs/final_docs.json"
"""Where a run keeps its final docs."""
_KEY = re.compile(r"^[0-9a-f]{20}$")


@dataclass(frozen=True)
class Entry:
    """One run as the ledger keeps it (see the module's docstring for each part)."""

    definition: RunDefinition
    status: str
    """``finished``, or ``interrupted`` (kept with what a resume needs)."""
    code: dict[str, Any]
    """The code version it ran on: ``commit`` (git) and ``version`` (the package's)."""
    machine: dict[str, Any]
    """Where it ran: ``cores`` (usable), ``processor``, ``system``."""
    started: int
    """When it started, in milliseconds since the epoch (as MLflow keeps it)."""
    seconds: float | None
    """Its wall time (a resumed run's over all its sessions); None where it did not log one."""
    model_speed: dict[str, float]
    """The model server's measured speed over the run: prompt and generated tokens a second, prefix-cache share."""
    tokens_by_phase: dict[str, Any]
    metrics: dict[str, float]
    """Every metric's last value."""
    history: dict[str, list[list[float]]]
    """Metrics logged by step (an optimizer's iterations): name -> ``[step, value]`` pairs."""
    params: dict[str, str]
    tags: dict[str, str]
    artifacts: dict[str, Any]
    """Its small artefacts by path (:data:`KEPT_ARTIFACTS`): JSON as data."""
    resume: dict[str, Any] = field(default_factory=dict)
    """Interrupted runs: the artefacts a resume reads, by path (JSON as data, JSON lines as lists)."""
    view: dict[str, Any] = field(default_factory=dict)
    """Its environment's metrics (``metrics``, ``primary``): the MLflow UI's saved view of the environment's runs
    is made from them when the entry is loaded."""

    @property
    def key(self) -> str:
        return self.definition.key

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"schema": SCHEMA, "key": self.key, "status": self.status,
                                "definition": self.definition.to_json(), "code": self.code, "machine": self.machine,
                                "started": self.started, "seconds": self.seconds, "model_speed": self.model_speed,
                                "tokens_by_phase": self.tokens_by_phase, "metrics": self.metrics,
                                "history": self.history, "params": self.params, "tags": self.tags,
                                "artifacts": self.artifacts}
        if self.resume:
            data["resume"] = self.resume
        if self.view:
            data["view"] = self.view
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        if data.get("schema") != SCHEMA:
            raise DataError(f"not a results entry of format {SCHEMA}: {str(data.get('schema'))[:80]!r}")
        return cls(definition=RunDefinition.from_json(data["definition"]), status=data["status"], code=data["code"],
                   machine=data["machine"], started=int(data["started"]), seconds=data.get("seconds"),
                   model_speed=data.get("model_speed", {}), tokens_by_phase=data.get("tokens_by_phase", {}),
                   metrics=data.get("metrics", {}), history=data.get("history", {}), params=data.get("params", {}),
                   tags=data.get("tags", {}), artifacts=data.get("artifacts", {}), resume=data.get("resume", {}),
                   view=data.get("view", {}))

    @property
    def name(self) -> str:
        """Its MLflow run name."""
        return str(self.tags.get("mlflow.runName") or f"{self.definition.method}-{self.key}")


# -- reading and writing the folder -----------------------------------------------------------------------------
def entry_path(key: str, root: Path | None = None) -> Path:
    return (root or results_dir()) / RUNS / f"{key}.json"


def entries(root: Path | None = None) -> Iterator[Entry]:
    """Every entry of the ledger, in key order (none where there is no ledger)."""
    folder = (root or results_dir()) / RUNS
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        yield read(path)


def read(path: Path) -> Entry:
    """One entry file, refused on one line when it is not one."""
    try:
        return Entry.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DataError(f"{path}: not a results entry ({type(error).__name__}: {str(error)[:200]})") from None


def starting_with(key: str, root: Path | None = None) -> list[Entry]:
    """The entries whose key begins with ``key`` (a whole key, or the eight characters or more people quote)."""
    return [entry for entry in entries(root) if entry.key.startswith(key)]


def docs_entry(spec: str, root: Path | None = None) -> Entry:
    """The entry ``ledger:KEY`` names: the one finished entry whose key begins with KEY, keeping final docs; refused on
    one line otherwise."""
    key = spec.removeprefix(LEDGER)
    found = [entry for entry in starting_with(key, root) if entry.status == "finished"] if len(key) >= 8 else []
    if len(found) != 1:
        raise DataError(f"--docs {spec}: {len(found)} finished ledger entries' keys begin with {key!r}: give more of "
                        "the key" if found else f"--docs {spec}: no finished ledger entry's key begins with {key!r} "
                        "(eight characters or more of a key: otbench results list)")
    if RUN_DOCS_ARTIFACT not in found[0].artifacts:
        raise DataError(f"--docs {spec}: that entry keeps no final docs (an optimize run's entry does)")
    return found[0]


def canonical_docs(spec: str | None) -> str | None:
    """Docs as a run's definition names them: ``ledger:`` with the entry's whole key, anything else as given."""
    return f"{LEDGER}{docs_entry(spec).key}" if spec is not None and spec.startswith(LEDGER) else spec


def find(definition: RunDefinition, root: Path | None = None) -> Entry | None:
    """The entry of ``definition``, if the ledger has one."""
    path = entry_path(definition.key, root)
    return read(path) if path.is_file() else None


def write(entry: Entry, root: Path | None = None, *, replace: bool = False) -> tuple[Path, str]:
    """Keep ``entry``; returns its file and what happened (``added``, ``replaced``, ``kept``). A finished entry
    replaces an interrupted one of the same run; an entry never replaces a finished one unless ``replace``."""
    path = entry_path(entry.key, root)
    action = "added"
    if path.is_file():
        existing = read(path)
        if existing.status == "finished" and not replace:
            return path, "kept"
        if existing.status == "finished" and entry.status != "finished":
            return path, "kept"
        action = "replaced"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(entry.to_json(), indent=1, sort_keys=True, default=str) + "\n")
    os.replace(temporary, path)
    return path, action


# -- from an MLflow run ------------------------------------------------------------------------------------------
def entry_of(run_id: str) -> Entry:
    """The entry of an MLflow run of the current store (an evaluation or an optimize run, finished or
    interrupted with something to resume); refused on one line otherwise."""
    import mlflow

    from otbench.envs.registry import make_environment
    from otbench.run.lookup import definition_of

    try:
        run = mlflow.get_run(run_id)
    except mlflow.exceptions.MlflowException:
        raise ConfigError(f"no run {run_id!r} in this store") from None
    defined = definition_of(run)
    if defined is None:
        raise ConfigError(f"run {run_id} is not an evaluate or optimize run otbench can read")
    if "mlflow.parentRunId" in run.data.tags:
        raise ConfigError(f"run {run_id} is a sweep's trial: tuning, not a result to keep")
    with make_environment(defined.environment_options()) as env:  # sized as its splits say (a whole split: no seed)
        defined = defined.sized(split_sizes(env))
        view = {"metrics": list(env.metric_names), "primary": env.primary_metric}
    status = "finished" if run.info.status == "FINISHED" else "interrupted"
    resume = _resume_state(run, defined) if status == "interrupted" else {}
    if status == "interrupted" and not resume:
        raise ConfigError(f"run {run_id} stopped before anything a resume could continue from was kept")
    client = mlflow.MlflowClient()
    metrics = dict(run.data.metrics)
    history = {}
    for name in metrics:
        logged = client.get_metric_history(run_id, name)
        if len(logged) > 1 or any(metric.step for metric in logged):
            history[name] = [[metric.step, metric.value]
                             for metric in sorted(logged, key=lambda m: (m.step, m.timestamp))]
    artifacts = {path: found for path in KEPT_ARTIFACTS if (found := _artifact(run_id, path)) is not None}
    kept = artifacts.get("tokens.json") or artifacts.get("summary.json") or {}
    machine = run.data.tags.get(tracking.MACHINE_TAG)
    return Entry(definition=defined, status=status,
                 code={"commit": run.data.tags.get(tracking.CODE_TAG) or run.data.tags.get("mlflow.source.git.commit"),
                       "version": run.data.tags.get(tracking.VERSION_TAG)},
                 machine=json.loads(machine) if machine else {**tracking.this_machine(), "noted": "when added"},
                 started=int(run.info.start_time), seconds=metrics.get("seconds"),
                 model_speed=_model_speed(metrics), tokens_by_phase=dict(kept.get("tokens_by_phase", {})),
                 metrics=metrics, history=history, params=dict(run.data.params),
                 tags={name: run.data.tags[name] for name in KEPT_TAGS if name in run.data.tags},
                 artifacts=artifacts, resume=resume, view=view)


def _model_speed(metrics: dict[str, float]) -> dict[str, float]:
    """The server's figures over every phase (``llm_all_*``), else the agent's."""
    for phase in ("all", "agent"):
        found = {name: metrics[f"llm_{phase}_{name}"] for name in
                 ("prompt_tokens_per_second", "generation_tokens_per_second", "cache_share", "calls")
                 if f"llm_{phase}_{name}" in metrics}
        if found:
            return found
    return {}


def _artifact(run_id: str, path: str) -> Any | None:
    from otbench.run.outcomes import artifact_text

    text = artifact_text(run_id, path)
    if text is None:
        return None
    if path.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text) if path.endswith(".json") else text


def _resume_state(run: Any, defined: RunDefinition) -> dict[str, Any]:
    """What a resume of an interrupted run reads: an optimize run's checkpoint, its definition, the calls its
    finished iterations saw and the test tasks it had scored; an evaluation's finished tasks; with either's finished
    tasks, what it had spent when it last kept them."""
    import mlflow

    from otbench.run.evaluation import PARTIAL, SPENT

    run_id = run.info.run_id
    if defined.command == "evaluate":
        finished = _artifact(run_id, PARTIAL) or _artifact(run_id, "trajectories.jsonl")
        spent = _artifact(run_id, SPENT)  # a run killed outright logged no tokens.json: the resume counts on from this
        return {PARTIAL: finished, **({SPENT: spent} if spent is not None else {})} if finished else {}
    state: dict[str, Any] = {}
    for path in ("checkpoint.json", tracking.DEFINITION, PARTIAL, SPENT):  # the last two: a test scoring under way
        found = _artifact(run_id, path)
        if found is not None:
            state[path] = found
    last = state.get("checkpoint.json", {}).get(tracking.CHECKPOINT_STEP)
    if last is not None:
        client = mlflow.MlflowClient()
        for folder in client.list_artifacts(run_id, "iterations"):
            step = int(folder.path.rsplit("_", 1)[1])
            calls = _artifact(run_id, f"{folder.path}/{tracking.OBSERVED}") if step <= int(last) else None
            if calls is not None:
                state[f"{folder.path}/{tracking.OBSERVED}"] = calls
    return state


# -- into an MLflow store ----------------------------------------------------------------------------------------
def loaded_run(entry: Entry) -> Any | None:
    """The run of the current store that ``entry`` was loaded as (with the same status), if any."""
    import mlflow

    experiment = mlflow.get_experiment_by_name(tracking.EXPERIMENT)
    if experiment is None:
        return None
    status = "attributes.status = 'FINISHED'" if entry.status == "finished" else "attributes.status != 'FINISHED'"
    found = mlflow.MlflowClient().search_runs([experiment.experiment_id],
                                              f"tags.`{LEDGER_TAG}` = '{entry.key}' AND {status}",
                                              order_by=["attributes.start_time DESC"], max_results=1)
    return found[0] if found else None


def load(entry: Entry) -> str:
    """Make ``entry`` a run of the current MLflow store (configured by the caller), as it was logged: params,
    tags, metrics by step, artefacts, start and end; an interrupted entry is a KILLED run a resume continues.
    Loading an entry twice gives the one run; returns its id."""
    import mlflow
    from mlflow.entities import Metric, Param

    done = loaded_run(entry)
    if done is not None:
        return str(done.info.run_id)
    client = mlflow.MlflowClient()
    experiment = mlflow.get_experiment_by_name(tracking.EXPERIMENT)
    if experiment is None:
        raise DataError("no otbench experiment in this store: configure the store first")
    setting_name = entry.tags.get("setting", entry.definition.setting)
    tags = {**{name: _text(value) for name, value in entry.definition.tags(setting_name).items() if value is not None},
            **{name: value for name, value in entry.tags.items()}, LEDGER_TAG: entry.key,
            tracking.MACHINE_TAG: json.dumps(entry.machine, sort_keys=True)}
    if entry.code.get("commit"):
        tags[tracking.CODE_TAG] = str(entry.code["commit"])
    if entry.code.get("version"):
        tags[tracking.VERSION_TAG] = str(entry.code["version"])
    run = client.create_run(experiment.experiment_id, start_time=entry.started, tags=tags, run_name=entry.name)
    run_id = run.info.run_id
    client.set_tag(run_id, tracking.RUN_COLOR_TAG, tracking.run_color(experiment.experiment_id, run_id))
    stamp = entry.started
    metrics = [Metric(name, float(value), stamp, 0) for name, value in entry.metrics.items() if name not in entry.history]
    # MLflow's value of a metric is its point of the highest step, then the latest time, then the highest value: a
    # resumed run logs its summary at step 0 once per segment, so each point gets a later time than the one before
    metrics += [Metric(name, float(value), stamp + order, int(step)) for name, steps in entry.history.items()
                for order, (step, value) in enumerate(steps)]
    params = [Param(name, str(value)) for name, value in entry.params.items()]
    for start in range(0, len(metrics), 900):  # MLflow takes at most 1000 metrics, 100 params a batch
        client.log_batch(run_id, metrics=metrics[start:start + 900])
    for start in range(0, len(params), 90):
        client.log_batch(run_id, params=params[start:start + 90])
    for path, content in {**entry.artifacts, **entry.resume}.items():
        _log(client, run_id, path, content)
    if entry.view:
        tracking.share_view(entry.definition.env, tuple(entry.view["metrics"]), str(entry.view["primary"]))
    end = entry.started + int(1000 * (entry.seconds or 0))
    client.set_terminated(run_id, status="FINISHED" if entry.status == "finished" else "KILLED", end_time=end)
    return str(run_id)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _log(client: Any, run_id: str, path: str, content: Any) -> None:
    if path.endswith(".jsonl"):
        client.log_text(run_id, "".join(json.dumps(item, default=str) + "\n" for item in content), path)
    elif isinstance(content, str):
        client.log_text(run_id, content, path)
    else:
        client.log_dict(run_id, content, path)


# -- checks ------------------------------------------------------------------------------------------------------
def verify(root: Path | None = None) -> list[str]:
    """What is wrong with the ledger, one line each (empty: nothing): files that are not entries of the format,
    keys that do not match their definitions or their file names, statuses, code versions."""
    from otbench.run.lookup import definition_from_json

    folder = (root or results_dir()) / RUNS
    problems = []
    for path in sorted(folder.glob("*")) if folder.is_dir() else []:
        if path.suffix != ".json" or not _KEY.match(path.stem):
            problems.append(f"{path.name}: not an entry file (KEY.json, a 20-character hex key)")
            continue
        try:
            data = json.loads(path.read_text())
            entry = Entry.from_json(data)
        except (OSError, ValueError, KeyError, TypeError, DataError) as error:
            problems.append(f"{path.name}: {str(error)[:200]}")
            continue
        if data.get("key") != entry.key or path.stem != entry.key:
            problems.append(f"{path.name}: its key is not its definition's ({entry.key})")
        if definition_from_json(data["definition"]).key != entry.key:
            problems.append(f"{path.name}: its definition reads back as another run")
        if entry.status not in STATUSES:
            problems.append(f"{path.name}: status {entry.status!r} is not one of {', '.join(STATUSES)}")
        if entry.status == "interrupted" and not entry.resume:
            problems.append(f"{path.name}: interrupted, with nothing to resume from")
        if not entry.code.get("commit"):
            problems.append(f"{path.name}: no code version")
        if entry.status == "finished" and "outcomes.json" not in entry.artifacts:
            problems.append(f"{path.name}: finished, with no per-task outcomes")
    return problems
