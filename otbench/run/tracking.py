"""A run tracked in MLflow: started with its provenance and colour, ended by its outcome, its result and every
optimizer iteration logged.

Every evaluate and optimize run logs its result under the same names, ``result/METRIC`` and ``result/tokens``
(:func:`log_result`); an optimizer's iterations are logged by :class:`MlflowIterationTracker`, with the checkpoint
``--resume`` continues from (:mod:`otbench.run.checkpoints`). The store itself is opened by
:mod:`otbench.mlflow_store`; run names and colours, provenance and the UI's views are :mod:`otbench.run.naming`'s,
:mod:`otbench.run.provenance`'s and :mod:`otbench.run.views`'.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import otbench  # noqa: F401  (offline-safe environment before mlflow loads)
from otbench.run.checkpoints import CHECKPOINT_STEP, COVERAGE_CHECKPOINT, DEFINITION, OBSERVED
from otbench.run.naming import RUN_COLOR_TAG, run_color
from otbench.run.provenance import CODE_TAG, MACHINE_TAG, VERSION_TAG, code_commit, package_version, this_machine

if TYPE_CHECKING:
    from otbench.evals.stats import Interval

RESULT_PREFIX = "result/"
"""A run's result metrics: the environment's metrics of the docs it ends with, on the tasks it is judged on."""
LEARNING_PREFIX = "learning/"
"""An optimize run's scores of each iteration on the tasks it learns on (the train split offline): ``learning/E``
beside ``result/E``, never a bare ``E`` a reader could take for the result. Runs logged before kept them bare."""
INTERVAL_SUFFIXES = ("_n", "_ci_low", "_ci_high")
"""What :func:`interval_metrics` appends to a metric's name: a metric's interval parts, logged beside it."""


def interval_metrics(prefix: str, found: Mapping[str, Interval]) -> dict[str, float]:
    """``{prefix}E_ci_low``, ``..._ci_high``, ``..._n`` of each interval (the value itself is logged as before)."""
    metrics: dict[str, float] = {}
    for name, value in found.items():
        metrics[f"{prefix}{name}_n"] = float(value.n)
        if value.known:
            metrics |= {f"{prefix}{name}_ci_low": value.low, f"{prefix}{name}_ci_high": value.high}
    return metrics


def _scalar(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


@contextmanager
def _ended_by_its_outcome(run: Any) -> Iterator[None]:
    """The active run ends FAILED if the block raises, KILLED on Ctrl-C or SIGTERM (resumable), keeping
    what it logged; its LM calls are its traces (:mod:`otbench.llm.tracing`)."""
    import mlflow

    from otbench.llm.tracing import traced_run

    try:
        with traced_run(run.info.run_id):
            yield
    except BaseException as exc:
        mlflow.end_run(status="KILLED" if isinstance(exc, KeyboardInterrupt) else "FAILED")
        raise


@contextmanager
def tracked_run(name: str, *, tags: dict[str, Any], params: dict[str, Any], nested: bool = False) -> Iterator[Any]:
    """A new run, ended by its outcome (:func:`_ended_by_its_outcome`).

    ``nested`` makes it a child of the active run (a sweep's trials under the sweep).
    """
    import mlflow

    stamped = {**tags, MACHINE_TAG: json.dumps(this_machine(), sort_keys=True), VERSION_TAG: package_version(),
               CODE_TAG: code_commit() or "unknown"}
    with mlflow.start_run(run_name=name, tags={k: _scalar(v) for k, v in stamped.items()}, nested=nested) as run:
        mlflow.set_tag(RUN_COLOR_TAG, run_color(run.info.experiment_id, run.info.run_id))
        mlflow.log_params({k: _scalar(v)[:500] for k, v in params.items()})
        with _ended_by_its_outcome(run):
            yield run


@contextmanager
def resumed_run(run_id: str, *, tags: Mapping[str, Any]) -> Iterator[Any]:
    """An earlier run continued (``--resume``), given ``tags`` anew (its definition as the current format reads it),
    traced and ended like the first time: stopped again, it is KILLED (and resumable again), not FAILED."""
    import mlflow

    with mlflow.start_run(run_id=run_id) as run, _ended_by_its_outcome(run):
        mlflow.set_tags({k: _scalar(v) for k, v in tags.items()})
        yield run


def log_definition(definition: dict[str, Any]) -> None:
    """What defines an optimize run (its definition's JSON), logged when it starts: a run stopped before its first
    checkpoint can still be resumed (it starts over in the same MLflow run; the LM cache serves the calls it had
    made)."""
    import mlflow

    mlflow.log_dict({"definition": definition}, DEFINITION)


START_DOCS_PHASE = "start_docs"
"""The phase the starting docs' "before" scoring of an optimize run is charged to: a measurement for the report,
not the method's cost, so :func:`cost_tokens` leaves it out."""


def cost_tokens(tokens_by_phase: Mapping[str, Any]) -> int:
    """What a run's row cost, paid and cache-served (an earlier run's cache serves a method's calls as well):
    every phase but :data:`START_DOCS_PHASE`."""
    total, measured = tokens_by_phase["all"], tokens_by_phase.get(START_DOCS_PHASE, {})
    return sum(int(total.get(key, 0)) - int(measured.get(key, 0)) for key in ("total_tokens", "cached_tokens"))


def log_result(metrics: dict[str, float], tokens: int, intervals: Mapping[str, Any] | None = None) -> None:
    """Log the active run's result as ``result/METRIC`` and ``result/tokens`` (paid and cache-served): the
    same names for an evaluation's scores and an optimizer's final docs, so they line up in MLflow's tables and
    charts. ``compare`` reads the same values (evaluate's metrics, optimize's ``final_``/``test_`` ones).
    Each metric's interval (:class:`otbench.evals.stats.Interval`) goes beside it: ``result/METRIC_ci_low``,
    ``result/METRIC_ci_high`` and ``result/METRIC_n``."""
    import mlflow

    shown = {name: value for name, value in (intervals or {}).items() if name in metrics}
    mlflow.log_metrics({f"{RESULT_PREFIX}{name}": float(value) for name, value in metrics.items()}
                       | interval_metrics(RESULT_PREFIX, shown) | {f"{RESULT_PREFIX}tokens": float(tokens)})


def learning_name(metric: str) -> str:
    """The name a score of an optimizer's iteration is logged under (:data:`LEARNING_PREFIX`)."""
    return f"{LEARNING_PREFIX}{metric}"


def learning_history(run_id: str, metric: str) -> list[Any]:
    """``metric``'s scores of every iteration of an optimize run, by step: logged as ``learning/METRIC``, or bare by
    runs logged before (a run resumed across the change has both, each step once)."""
    import mlflow

    client = mlflow.MlflowClient()
    found = {point.step: point for point in client.get_metric_history(run_id, metric)}
    found |= {point.step: point for point in client.get_metric_history(run_id, learning_name(metric))}
    return [found[step] for step in sorted(found)]


STEP_MARKER = "tokens_all_total"
"""A metric in every step's batch (the token ledger's total): the steps a run has logged are its steps."""


def logged_steps(run_id: str) -> set[int]:
    """The iteration steps whose metrics ``run_id`` holds: a resumed run does not log them again."""
    import mlflow

    return {metric.step for metric in mlflow.MlflowClient().get_metric_history(run_id, STEP_MARKER)}


def log_trajectories(trajectories: Iterable[Any], artifact_file: str) -> None:
    """Keep a command's trajectories on the active run as JSON lines (read back by :mod:`otbench.run.outcomes`)."""
    import mlflow

    mlflow.log_text("\n".join(json.dumps(t.to_dict(), default=str) for t in trajectories), artifact_file)


def log_table(rows: list[dict[str, Any]], artifact_file: str) -> None:
    """Log rows as an MLflow table artefact (JSON that the UI renders as a table)."""
    import mlflow
    import pandas as pd

    mlflow.log_table(pd.DataFrame(rows), artifact_file=artifact_file)


def log_environment_tables(env: Any, trajectories: list[Any], prefix: str = "") -> dict[str, list[dict[str, Any]]]:
    """An environment's own tables of these trajectories (its ``breakdown``, where it has one: Wild's accuracy and
    errors by hidden intention and switches), each logged to the active run as a table ``PREFIX+NAME.json``."""
    breakdown = getattr(env, "breakdown", None)
    tables: dict[str, list[dict[str, Any]]] = breakdown(trajectories) if breakdown is not None and trajectories else {}
    for name, rows in tables.items():
        log_table(rows, f"{prefix}{name}.json")
    return tables


class MlflowIterationTracker:
    """Logs every optimizer iteration to the active MLflow run.

    Per step: the optimizer's metrics (the environment's, ``learned``, and the tasks scored, ``n``, under
    :data:`LEARNING_PREFIX`: they are the learning split's, not the result), the robustness of the step's tool use (:mod:`otbench.evals.robustness`)
    and cumulative tokens by phase; as artefacts, the docs
    evaluated at that step (the optimized toolsets only, when the docs say which), what changed
    since the step before as a per-tool diff (``docs_diff.md``; the first step is compared with
    ``start_docs``), the trajectories, the editor exchanges as markdown; and ``checkpoint.json``
    (overwritten) from which ``--resume`` continues. The checkpoint also carries the run's wall
    time so far (``elapsed_seconds``, counting ``earlier_seconds`` of the runs it resumes), so a
    resumed run reports its whole time against its whole token ledger, and ``live_state()``'s entries
    (state that changes as the run goes, such as a state controller's attempt counts).

    A step is logged once whatever moment a stop lands: its metrics (one batch) come first and its
    checkpoint last, so a run stopped in between redoes the step when resumed; ``logged_steps`` (the
    steps already in the resumed run's history) are not given metrics a second time. A resumed run's
    ``start_docs`` are its checkpoint's, written after ``start_step``: its first diff is against that step.
    """

    def __init__(self, ledger: Any, *, learned: Iterable[str] = (), extra_checkpoint: dict[str, Any] | None = None,
                 earlier_seconds: float = 0.0, start_docs: dict[str, Any] | None = None,
                 live_state: Callable[[], dict[str, Any]] | None = None,
                 logged_steps: set[int] | None = None, start_step: int | None = None) -> None:
        self.ledger = ledger
        self.learned = set(learned)
        self.logged_steps = set(logged_steps or ())
        self.extra_checkpoint = extra_checkpoint or {}
        self.live_state = live_state or dict
        self.earlier_seconds = earlier_seconds
        self.started = time.perf_counter()
        self.previous_docs = start_docs
        self.previous_step = start_step
        self.last_checkpoint: dict[str, Any] | None = None

    def elapsed_seconds(self) -> float:
        return self.earlier_seconds + time.perf_counter() - self.started

    def log_iteration(self, record: Any) -> None:
        import mlflow

        from otbench.core.trajectory import json_text
        from otbench.evals.robustness import robustness
        from otbench.run.artefacts import docs_diff_markdown, exchanges_markdown, optimized_part

        folder = f"iterations/step_{record.step:02d}"
        if record.step not in self.logged_steps:
            # the optimizer's metrics first: MLflow's compare page plots the first metric the first run logged
            scores = {learning_name(k) if k in self.learned or k == "n" else k: float(v)
                      for k, v in record.metrics.items()}
            mlflow.log_metrics({**scores, **robustness(record.trajectories),
                                **{k: float(v) for k, v in self.ledger.flat_metrics().items()},
                                **self.ledger.server_metrics()}, step=record.step)
            self.logged_steps.add(record.step)
        docs = optimized_part(record.toolbox.to_json())
        mlflow.log_dict(docs, f"{folder}/docs.json")
        if self.previous_docs is not None:
            since = "the starting docs" if self.previous_step is None else f"step {self.previous_step}"
            mlflow.log_text(docs_diff_markdown(optimized_part(self.previous_docs), docs,
                                               title=f"step {record.step} against {since}"), f"{folder}/docs_diff.md")
        self.previous_docs, self.previous_step = docs, record.step
        mlflow.log_text("\n".join(json.dumps(t.to_dict(), default=str) for t in record.trajectories) + "\n",
                        f"{folder}/trajectories.jsonl")
        mlflow.log_text(exchanges_markdown([e.to_dict() for e in record.exchanges], title=f"step {record.step}"),
                        f"{folder}/editor.md")
        mlflow.log_text("".join(json_text({"toolset": toolset, **result.to_dict()}) + "\n"
                                for toolset, result in getattr(record, "observed", ())), f"{folder}/{OBSERVED}")
        self.last_checkpoint = {**record.checkpoint, **self.extra_checkpoint, **self.live_state(),
                                CHECKPOINT_STEP: record.step}
        self._write_checkpoint()

    def keep_state(self, state: dict[str, Any]) -> None:
        """Add ``state`` to the last checkpoint (what the compile decided after its last iteration), with the tokens
        and seconds spent so far: a resume from it does not pay for those decisions again."""
        if self.last_checkpoint is not None:
            self.last_checkpoint = {**self.last_checkpoint, **state}
            self._write_checkpoint()

    def _write_checkpoint(self) -> None:
        import mlflow

        checkpoint = {**(self.last_checkpoint or {}), "tokens": self.ledger.snapshot(),
                      "elapsed_seconds": self.elapsed_seconds()}
        mlflow.log_dict(checkpoint, "checkpoint.json")
        keep_coverage_checkpoint(checkpoint)


def keep_coverage_checkpoint(checkpoint: dict[str, Any]) -> None:
    """Keep ``checkpoint`` as the run's coverage checkpoint where it is one of a coverage pass's steps (it holds the
    pass's evidence): the optimizer's own steps then overwrite ``checkpoint.json`` but not it."""
    import mlflow

    from otbench.optimizers.base import COVERAGE_EVIDENCE, OBSERVED_CALLS

    if COVERAGE_EVIDENCE in checkpoint:
        mlflow.log_dict({key: value for key, value in checkpoint.items() if key != OBSERVED_CALLS}, COVERAGE_CHECKPOINT)
