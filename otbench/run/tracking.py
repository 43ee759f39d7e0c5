"""MLflow plumbing: a sqlite store under ``./mlruns`` and helpers every command uses.

MLflow's file store refuses to start without a flag and sqlite is MLflow's default, so the
store is ``mlruns/mlflow.db`` with artefacts in ``mlruns/artifacts``. ``--tracking-uri`` (or
``MLFLOW_TRACKING_URI``) points at any other MLflow server instead.

Runs are made to be compared in MLflow's UI (3.17), whose defaults are decided as follows:

- its runs table shows the attributes Source, Models and Dataset; a metric is a column only once
  chosen in the browser (kept in that browser's local storage) or by a saved view, an experiment tag
  ``mlflow.sharedViewState.ID`` that the Views menu lists and ``?viewStateShareKey=ID`` opens. Each
  environment gets one (:func:`share_view`): its result metrics and what defines a run as columns,
  charts of the results and a parallel-coordinates plot of method against the primary metric;
- every evaluate and optimize run logs its result under the same names, ``result/METRIC`` and
  ``result/tokens`` (:func:`log_result`), so runs of both commands are one column and one chart each;
- a run's colour is its ``mlflow.runColor`` tag, else a hash of its id into 29 colours, which gives
  runs of one experiment the same colour; every run is given the palette colour the experiment's
  latest runs use least (:func:`run_color`).

A new sqlite store is created (its tables migrated) by the first process that opens it; several
commands started together on a new store each began that migration and all but one failed
(``table _alembic_tmp_params already exists``). Opening a sqlite store therefore holds an
exclusive file lock next to its database (:func:`store_lock`) until the store and the experiment
exist: the first process creates them, the others wait for it, then find them made.

Where the store is, and whether a server answers, is :mod:`otbench.store`'s to say.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from filelock import FileLock

import otbench  # noqa: F401  (offline-safe environment before mlflow loads)
from otbench.paths import mlruns_dir
from otbench.store import SQLITE_PREFIX, sqlite_path, store_database, tracking_uri_in_use

EXPERIMENT = "otbench"
RESULT_PREFIX = "result/"
"""A run's result metrics: the environment's metrics of the docs it ends with, on the tasks it is judged on."""
LEARNING_PREFIX = "learning/"
"""An optimize run's scores of each iteration on the tasks it learns on (the train split offline): ``learning/E``
beside ``result/E``, never a bare ``E`` a reader could take for the result. Runs logged before kept them bare."""
RUN_COLOR_TAG = "mlflow.runColor"
RUN_COLORS = ("#c83243", "#137dae", "#308613", "#de7921", "#8a63bf", "#04867d", "#b45091", "#a6630c", "#434a93",
              "#facb66", "#1f272d", "#e65b77", "#3ba65e", "#4299e0", "#93320b", "#5f7281", "#8ddda8", "#f792a6",
              "#0e538b", "#be501e", "#115026", "#8acaff", "#9e102c", "#f2be88", "#445461", "#277c43", "#2272b4",
              "#c82d4c", "#8396a5")
"""MLflow UI's own run colours (its colour picker offers them), ordered so that neighbours differ in hue."""
VIEW_TAG_PREFIX = "mlflow.sharedViewState."


def store_uris(directory: Path | None = None) -> tuple[str, str]:
    """``(backend_store_uri, artifact_root)`` of the local store."""
    root = (directory or mlruns_dir()).resolve()
    root.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{root / 'mlflow.db'}", str(root / "artifacts")


@contextmanager
def store_lock(database: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``database``'s lock file (``mlflow.db.lock``) for the block.

    An operating-system lock (:class:`filelock.FileLock`: ``flock`` on POSIX, ``LockFileEx`` on Windows): every
    otbench process that opens the store takes it, and the kernel releases it when the holder dies, so a killed
    command never leaves the store locked.
    """
    database.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(database.with_name(f"{database.name}.lock")):
        yield


def _first_use_lock(uri: str) -> AbstractContextManager[None]:
    """The lock that serialises the creation of a sqlite store; none for a server or another database."""
    database = sqlite_path(uri)
    return store_lock(database) if database is not None else nullcontext()


def configure(tracking_uri: str | None = None, *, directory: Path | None = None, experiment: str = EXPERIMENT) -> str:
    """Point MLflow at the chosen store and experiment; returns the tracking URI in use.

    The store and the experiment are created here, under :func:`store_lock` for a sqlite store, so
    commands started at once on a new store do not race to create its tables.
    """
    import mlflow

    for noisy in ("mlflow", "alembic"):  # schema-migration chatter would break one-line errors
        logging.getLogger(noisy).setLevel(logging.WARNING)
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # a bar per artefact read is noise
    uri = tracking_uri_in_use(tracking_uri, directory)
    artifact_root = None
    if not uri:
        uri, artifact_root = store_uris(directory)
    database = sqlite_path(uri)
    if database is not None:
        check_store_file(database)
    mlflow.set_tracking_uri(uri)
    try:
        with _first_use_lock(uri):
            if database is not None and (not database.exists() or database.stat().st_size == 0):
                create_sqlite_store(database, artifact_root)
            if mlflow.get_experiment_by_name(experiment) is None:  # the first call creates (migrates) a new store
                location = f"{artifact_root}/{experiment}" if artifact_root else None
                try:
                    mlflow.create_experiment(experiment, artifact_location=location)
                except mlflow.exceptions.MlflowException:
                    if mlflow.get_experiment_by_name(experiment) is None:  # else another worker created it just now
                        raise
            mlflow.set_experiment(experiment)
    except mlflow.exceptions.MlflowException as error:  # a store MLflow cannot use: its reason, on one line
        from otbench.errors import SetupError

        raise SetupError(f"MLflow store {uri}: {' '.join(str(error.message).split())[:300]}") from None
    except Exception as error:  # noqa: BLE001 - the database driver's own errors (a damaged file), named on one line
        from otbench.errors import SetupError

        reason = " ".join(str(error).split("[SQL:")[0].split())[:160]
        raise SetupError(f"MLflow store {database or uri} cannot be read: {reason}; move it aside "
                         f"({_aside(database)}) to start a new one") from None
    return uri


def open_existing(tracking_uri: str | None = None, *, directory: Path | None = None) -> bool:
    """Point MLflow at the chosen store only if it already holds otbench's runs, creating and writing nothing (a
    status that "runs nothing" must not make a store either); returns whether there is one to read."""
    import mlflow

    for noisy in ("mlflow", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    database = store_database(tracking_uri, directory)
    if database is not None:
        if not database.is_file() or database.stat().st_size == 0:
            return False
        check_store_file(database)
    uri = tracking_uri_in_use(tracking_uri, directory) or f"{SQLITE_PREFIX}{database}"
    mlflow.set_tracking_uri(uri)
    try:
        return mlflow.get_experiment_by_name(EXPERIMENT) is not None
    except mlflow.exceptions.MlflowException as error:
        from otbench.errors import SetupError

        raise SetupError(f"MLflow store {uri}: {' '.join(str(error.message).split())[:300]}") from None


def create_sqlite_store(database: Path, artifact_root: str | None) -> None:
    """Create a new sqlite store whole or not at all: MLflow's migrations (about 9 s of them) run on a file beside
    ``database``, which is renamed into place once they are done. A store created where it is used and stopped half
    way (Ctrl-C during the migrations) kept some of its tables and was refused by every command after ("table ...
    already exists"); stopped now, it leaves no store, and the next command creates it again. Called under
    :func:`store_lock`, so a leftover file beside it is no other process's."""
    from mlflow.store.tracking import DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    building = database.with_name(f"{database.name}.new")
    for leftover in (building, building.with_name(f"{building.name}-journal")):
        leftover.unlink(missing_ok=True)
    uri = f"{SQLITE_PREFIX}{building}"
    try:
        SqlAlchemyStore(uri, artifact_root or DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH)
    finally:
        engine = SqlAlchemyStore._engine_map.pop(uri, None)
        if engine is not None:
            engine.dispose()
    os.replace(building, database)


SQLITE_HEADER = b"SQLite format 3\x00"


def _aside(database: Path | None) -> str:
    return f"mv {database} {database}.damaged" if database is not None else "point --mlruns at another folder"


def check_store_file(database: Path) -> None:
    """Refuse, on one line naming the file and the way out, a local store MLflow would fail on or silently replace:
    a file that is not an SQLite database, or an empty one beside artefacts (a new store would orphan them)."""
    from otbench.errors import SetupError

    if not database.exists():
        return
    if database.is_dir():
        raise SetupError(f"MLflow store {database}: a folder where the database file should be; move it aside")
    size = database.stat().st_size
    artefacts = database.parent / "artifacts"
    if size == 0:
        if artefacts.is_dir() and any(artefacts.iterdir()):
            raise SetupError(f"MLflow store {database} is empty while artefacts are kept beside it ({artefacts}): "
                             f"restore the database from a copy, or move the folder aside "
                             f"(mv {database.parent} {database.parent}.damaged) to start a new store")
        return
    with database.open("rb") as handle:
        if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise SetupError(f"MLflow store {database} is not an SQLite database (damaged?); move it aside "
                             f"({_aside(database)}) to start a new one")


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


MACHINE_TAG = "otbench.machine"
"""Tag every run carries: the machine it ran on (:func:`this_machine`, as JSON)."""
VERSION_TAG = "otbench.version"
"""Tag every run carries: the package's version (git's commit is MLflow's own ``mlflow.source.git.commit``)."""


def this_machine() -> dict[str, Any]:
    """The machine a run runs on, as runs and the results ledger keep it."""
    import platform

    from otbench.core.parallel import usable_cores

    return {"cores": usable_cores(), "processor": platform.processor() or platform.machine(),
            "system": platform.system()}


CODE_TAG = "otbench.code"
"""Tag every run carries: the git commit of the code it ran on, ``-dirty`` with uncommitted changes."""


@functools.cache
def code_commit() -> str | None:
    """This checkout's git commit, with ``-dirty`` when tracked files had uncommitted changes (None outside git), as
    the process first asks: the code a process runs is the code it loaded."""
    import subprocess

    here = Path(__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=here, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    return f"{commit}-dirty" if commit and git("status", "--porcelain", "--untracked-files=no") else commit


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("otbench")
    except PackageNotFoundError:
        return "unknown"


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

    stamped = {**tags, MACHINE_TAG: json.dumps(this_machine(), sort_keys=True), VERSION_TAG: _package_version(),
               CODE_TAG: code_commit() or "unknown"}
    with mlflow.start_run(run_name=name, tags={k: _scalar(v) for k, v in stamped.items()}, nested=nested) as run:
        mlflow.set_tag(RUN_COLOR_TAG, run_color(run.info.experiment_id, run.info.run_id))
        mlflow.log_params({k: _scalar(v)[:500] for k, v in params.items()})
        with _ended_by_its_outcome(run):
            yield run


@contextmanager
def resumed_run(run_id: str) -> Iterator[Any]:
    """An earlier run continued (``--resume``), traced and ended like the first time: stopped again, it is
    KILLED (and resumable again), not FAILED."""
    import mlflow

    with mlflow.start_run(run_id=run_id) as run, _ended_by_its_outcome(run):
        yield run


def retag(definition: Any) -> None:
    """Tag the active run with ``definition``'s key and JSON (:mod:`otbench.run.definition`): a resumed run's
    definition as the current format reads it."""
    import mlflow

    from otbench.run.definition import DEFINITION_TAG, KEY_TAG

    mlflow.set_tags({KEY_TAG: definition.key, DEFINITION_TAG: definition.canonical()})


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

    from otbench.run.outcomes import interval_metrics

    shown = {name: value for name, value in (intervals or {}).items() if name in metrics}
    mlflow.log_metrics({f"{RESULT_PREFIX}{name}": float(value) for name, value in metrics.items()}
                       | interval_metrics(RESULT_PREFIX, shown) | {f"{RESULT_PREFIX}tokens": float(tokens)})


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

        mlflow.log_dict({**(self.last_checkpoint or {}), "tokens": self.ledger.snapshot(),
                         "elapsed_seconds": self.elapsed_seconds()}, "checkpoint.json")


def resumable_checkpoint(run_id: str) -> dict[str, Any]:
    """:func:`load_checkpoint` of a run that has not finished; a finished one is refused, on one line and
    untouched (resuming it would log its final results and register its docs again)."""
    import mlflow

    from otbench.errors import ConfigError

    try:
        status = mlflow.get_run(run_id).info.status
    except Exception:  # noqa: BLE001 - MLflow raises several types for a run that is not there
        status = None
    if status == "FINISHED":
        raise ConfigError(f"--resume {run_id}: that run finished; there is nothing to continue")
    return load_checkpoint(run_id)


DEFINITION = "definition.json"

OBSERVED = "observed_calls.jsonl"
"""Artefact of each iteration: the calls the optimizer saw since the iteration before, one JSON object a line."""

CHECKPOINT_STEP = "step"
"""Checkpoint entry: the iteration it was written after, so a resume reads the calls of the iterations up to it."""


def log_definition(definition: dict[str, Any]) -> None:
    """What defines an optimize run (its definition's JSON), logged when it starts: a run stopped before its first
    checkpoint can still be resumed (it starts over in the same MLflow run; the LM cache serves the calls it had
    made)."""
    import mlflow

    mlflow.log_dict({"definition": definition}, DEFINITION)


def load_checkpoint(run_id: str) -> dict[str, Any]:
    """The last finished iteration of an optimize run, for ``--resume``, with the calls its finished iterations
    saw (``observed_calls``); for a run stopped before its first iteration finished, only its definition
    (``{"definition": ...}``, or ``{"args": ...}`` as runs logged it before definitions; no ``docs``)."""
    import mlflow

    from otbench.errors import DataError

    for artifact in ("checkpoint.json", DEFINITION):
        try:
            path = mlflow.artifacts.download_artifacts(artifact_uri=f"runs:/{run_id}/{artifact}")
        except Exception:  # noqa: BLE001, S112 - MLflow raises several types for a missing run or artefact
            continue
        checkpoint = dict(json.loads(Path(path).read_text()))
        if CHECKPOINT_STEP in checkpoint:
            from otbench.optimizers.base import OBSERVED_CALLS

            checkpoint[OBSERVED_CALLS] = _observed_calls(run_id, int(checkpoint[CHECKPOINT_STEP]))
        return checkpoint
    raise DataError(f"--resume {run_id}: no checkpoint in that run (is it an optimize run?)")


def _observed_calls(run_id: str, last_step: int) -> list[dict[str, Any]]:
    """The calls logged with the iterations up to ``last_step``, in order (a step after it was logged but not
    finished, and is done again by the resumed run)."""
    import mlflow

    client = mlflow.tracking.MlflowClient()
    steps = sorted((int(folder.path.rsplit("_", 1)[1]), folder.path)
                   for folder in client.list_artifacts(run_id, "iterations") if folder.is_dir)
    calls: list[dict[str, Any]] = []
    for step, folder in steps:
        if step > last_step:
            break
        try:
            path = mlflow.artifacts.download_artifacts(artifact_uri=f"runs:/{run_id}/{folder}/{OBSERVED}")
        except Exception:  # noqa: BLE001, S112 - a step logged before calls were kept has none
            continue
        calls.extend(json.loads(line) for line in Path(path).read_text().splitlines() if line)
    return calls
