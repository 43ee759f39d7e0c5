"""Documentation optimizers side by side (the paper's Table 2): the rows, their runs, the table.

Rows: the environment's own (opaque) docs ``base``, the true docs ``gold``, and each optimizer's rows (its spec's:
``+TO (paper)``, ``+TO``, ``+P2P``, ``+ET (probe)``...): the environment's metrics, the total tokens the row
cost (optimization + evaluation), and how close its docs are to the gold docs (Table 6).

Every row is a run's definition (:class:`RowPlan`). A finished run with the same definition is reused (from the
local MLflow store, or the results ledger: :mod:`otbench.run.lookup`); a missing one is executed here
(:mod:`otbench.run.evaluation`, :mod:`otbench.run.optimization`), all of them sharing one embedded model server.
Online environments (BFCL) evaluate while they learn, so an optimize run's final metrics are its row; offline
environments learn on the train split, so the row is the learned docs scored on the test split (``test_*``
metrics), and base and gold are evaluated on the same test sample. The table is logged as a ``compare`` run
(table, CSV, markdown, plots).

Every figure carries its 95% interval, and each row its paired difference to ``base`` and to the reference
optimizer's row on the primary metric, marked where it holds after Holm's adjustment across the table
(:mod:`otbench.study.comparison`); several task samples are pooled as clusters, and :func:`plan` says what a
comparison of a given size can detect before any model time is spent.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from otbench import mlflow_store
from otbench.envs.base import sample_tasks
from otbench.envs.registry import EnvironmentOptions, learning_of, make_environment, resolve
from otbench.errors import ConfigError, DataError, OtbenchError
from otbench.llm.session import LMOptions, check_models, one_embedded_server
from otbench.optimizers.registry import OPTIMIZERS, reference_label, spec_of
from otbench.run import definition as defining
from otbench.run import lookup as run_lookup
from otbench.run import naming, tracking
from otbench.run.definition import RunDefinition, seed_text, split_sizes
from otbench.run.settings import RunSettings, TrackingOptions
from otbench.store import require_store
from otbench.study import comparison

DEFAULT_LIMIT = 10
"""Tasks a comparison optimizes on (and, offline, scores every row on) unless told."""


@dataclass(frozen=True)
class CompareOptions:
    """A comparison: the environment, the optimizer rows, the task samples; and how missing rows are run."""

    environment: EnvironmentOptions = field(default_factory=EnvironmentOptions)
    optimizers: tuple[str, ...] = tuple(OPTIMIZERS)
    limit: int = DEFAULT_LIMIT
    """Tasks optimized on (online: also evaluated on)."""
    test_limit: int = DEFAULT_LIMIT
    """Offline environments: test tasks every row is scored on."""
    val_limit: int | None = None
    """Offline environments: every optimizer row keeps the docs that scored best on this many other train tasks."""
    seed: int = 0
    seeds: tuple[int, ...] = ()
    """Several task samples (their seeds): every row is run on each and pooled, a sample being a cluster;
    empty: the one sample ``seed``."""
    knobs: Mapping[str, Any] = field(default_factory=dict)
    """Optimizer name -> its knobs for its rows (the others run with their declared defaults)."""
    probe: bool = False
    """Also a ``(probe)`` row for each optimizer offered the shared probe."""
    probe_only: bool = False
    """Those optimizers' rows only with the shared probe (no row without it): a comparison on the same ground."""
    ablations: bool = False
    """Also, for each optimizer with improvements of its own, a row with each of them that acts in the
    environment's learning mode switched off, one at a time (``+TO --no-facts``...)."""
    lm: LMOptions = field(default_factory=LMOptions)
    tracking: TrackingOptions = field(default_factory=TrackingOptions)
    num_threads: int = 4
    """Tasks run concurrently in the runs it makes, each on a slot of the embedded server of its own: on 2 cores 4
    slots give about 1.7x the tokens an hour of one (``python -m otbench.bench slots``); replies at temperature 0
    may differ with the batch a call shares, scores hardly (docs/reproduce.md)."""
    plots: Path = Path("reports")
    progress: bool = True
    sandbox_workers: int | None = None
    out: Path = Path("learned_docs")
    """Where the optimize runs it makes write their final docs."""

    def settings(self) -> RunSettings:
        """How the runs it makes are carried out."""
        return RunSettings(lm=self.lm, tracking=self.tracking, num_threads=self.num_threads,
                           sandbox_workers=self.sandbox_workers, progress=self.progress, out=self.out)

    @property
    def samples(self) -> tuple[int, ...]:
        """The seeds of the task samples every row is scored on."""
        return self.seeds or (self.seed,)


@dataclass(frozen=True)
class CompareResult:
    """The comparison table (one row per docs: metrics with intervals, paired differences to base and +TO,
    tokens, fidelity to the gold docs, the row's runs) and what keeps it from separating its rows."""

    env: str
    setting: str
    learning: str
    metrics: list[str]
    limit: int
    test_limit: int
    seed: int
    rows: list[dict[str, Any]]
    plots: list[str]
    run_id: str
    columns: list[str]
    """The printed table's columns, in order."""
    seeds: list[int] = field(default_factory=list)
    """The task samples every row was scored on."""
    warnings: list[str] = field(default_factory=list)
    """Why the table cannot tell (some of) its rows apart, and rows without per-task outcomes."""
    printed: list[dict[str, Any]] = field(default_factory=list)
    """The rows as printed: metrics with their intervals, differences with their marks."""
    legend: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The comparison as ``--json`` prints it."""
        return {name: value for name, value in dataclasses.asdict(self).items()
                if name not in ("columns", "printed", "legend")}


@dataclass(frozen=True)
class RowPlan:
    """One row of the comparison on one task sample: the definition of the run that produces it, by which a
    finished run is reused (:mod:`otbench.run.lookup`, the results ledger)."""

    label: str
    optimizer: str
    """The optimizer's name; ``base`` or ``gold`` for the evaluated rows."""
    definition: RunDefinition

    @property
    def command(self) -> str:
        return self.definition.command


def plan_rows(options: CompareOptions, env: Any) -> list[RowPlan]:
    """base, gold and each chosen optimizer's rows (its spec's: :meth:`~otbench.optimizers.spec.OptimizerSpec.rows`),
    each with its run's definition, sized by the opened environment's splits."""
    online = env.learning == "online"
    evaluated_on = options.limit if online else options.test_limit
    evaluated_by = replace(options.lm, editor_lm=None, editor_api_base=None)
    sizes = split_sizes(env)
    environment = resolve(options.environment)

    def evaluate_row(label: str, evaluated: EnvironmentOptions, docs: str | None) -> RowPlan:
        defined = defining.evaluation(evaluated, agent="llm", docs=docs, limit=evaluated_on, seed=options.seed,
                                      lm=evaluated_by)
        return RowPlan(label, label, defined.sized(sizes))  # optimizer: base or gold

    if online:  # per-task docs are tied to the setting's tool names: the true docs are the gold setting
        gold = evaluate_row("gold", resolve(replace(environment, setting="gold")), None)
    else:  # shared tools keep their names: the true docs replace the setting's docs
        gold = evaluate_row("gold", environment, "gold")
    rows = [evaluate_row("base", environment, None), gold]
    for name in options.optimizers:
        spec = spec_of(name)
        # the optimizer's own defaults except for knobs given here; the paper's protocol (no success bits)
        chosen = options.knobs.get(name) or spec.knobs_from({})
        for knobs in spec.rows(chosen, env.learning, probe=options.probe, probe_only=options.probe_only,
                               ablations=options.ablations):
            defined = defining.optimization(environment, optimizer=spec, knobs=knobs, mode=env.learning,
                                            limit=options.limit, seed=options.seed, test_limit=options.test_limit,
                                            val_limit=options.val_limit, lm=options.lm).sized(sizes)
            rows.append(RowPlan(defined.method, name, defined))
    return rows


def find_run(plan: RowPlan) -> Any | None:
    """The latest finished run of the row's definition, or None."""
    return run_lookup.find(plan.definition)


def run_missing(plan: RowPlan, settings: RunSettings) -> Any:
    """Run the row (an evaluation or an optimize run of its definition) and return the MLflow run it logged."""
    import mlflow

    from otbench.run import evaluation, optimization

    sample = plan.definition.sample
    print(f"compare: no finished run for {plan.label}; running {plan.command} (limit={sample.limit} "
          f"seed={seed_text(sample.seed)})", file=sys.stderr)
    try:
        if plan.command == "evaluate":
            run_id = evaluation.execute(plan.definition, settings).run_id
        else:
            run_id = optimization.execute(plan.definition, settings).run_id
    except OtbenchError as exc:  # the same kind of error, saying which row
        exc.args = (f"row {plan.label}: {exc}",)
        raise
    return mlflow.get_run(run_id)


def row_results(plan: RowPlan, run: Any, env: Any) -> dict[str, Any]:
    """The metrics and total tokens of one row, read from its run (:func:`row_values`)."""
    artifact = "tokens.json" if plan.command == "evaluate" else "summary.json"
    return row_values(plan.command, run.data.metrics, _artifact_json(run.info.run_id, artifact)["tokens_by_phase"],
                      env, f"run {run.info.run_id} ({plan.label})")


def row_values(command: str, metrics: Mapping[str, float], tokens_by_phase: Mapping[str, Any], env: Any,
               label: str) -> dict[str, Any]:
    """A row's metrics and total tokens, from a run's metrics and token ledger (an MLflow run's, a results
    entry's).

    Tokens come from the run's token ledger (optimize's summary includes the offline test
    evaluation that follows its last step): paid plus cache-served tokens, what the method uses
    whatever an earlier run left in the cache (an optimizer's first rollouts replay the base
    evaluation). Runs logged before the ledger kept cached tokens count paid tokens only.
    """
    if command == "evaluate":
        prefix = ""
    else:  # an online run learned under faults also scored its final docs in the test phase: that is its row
        tested = f"test_{env.primary_metric}" in metrics
        prefix = "final_" if env.learning == "online" and not tested else "test_"
    if f"{prefix}{env.primary_metric}" not in metrics:
        raise DataError(f"{label} has no {prefix}{env.primary_metric} metric")
    # a split reports only the metrics it defines (chess: evaluation change on exploration games only)
    present = [name for name in env.metric_names if f"{prefix}{name}" in metrics]
    contaminated = metrics.get("doc_contamination") if command == "optimize" else 0.0
    return {name: metrics[f"{prefix}{name}"] for name in present} | {
        "tokens": tracking.cost_tokens(tokens_by_phase),
        "docs_faults": "-" if contaminated is None else round(contaminated, 4)}


def _artifact_json(run_id: str, path: str) -> Any:
    import mlflow

    return json.loads(Path(mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=path)).read_text())


def docs_fidelity(plans: list[RowPlan], runs: dict[str, Any], env: Any, toolsets: list[str]) -> dict[str, Any]:
    """Similarity to the gold docs per row, over the tools of ``toolsets``: the environment's own docs
    (base), the gold docs, and each optimizer's final docs applied as ``evaluate --docs`` applies them."""
    from otbench.evals.fidelity import fidelity
    from otbench.run.docs_io import apply_docs

    gold = env.toolbox("gold")
    scores = {}
    for plan in plans:
        docs = gold if plan.label == "gold" else env.toolbox()
        if plan.command == "optimize":
            apply_docs(docs, f"runs:/{runs[plan.label].info.run_id}")
        scores[plan.label] = fidelity(docs, gold, toolsets)
    return scores


def iteration_histories(plans: list[RowPlan], runs: dict[str, Any], metric: str) -> dict[str, list[tuple[int, float]]]:
    """Per optimizer row, ``metric`` at every logged iteration step of its optimize run."""
    histories = {}
    for plan in plans:
        if plan.command == "optimize":
            history = tracking.learning_history(runs[plan.label].info.run_id, metric)
            if history:
                histories[plan.label] = [(m.step, m.value) for m in history]
    return histories


def write_plots(rows: list[dict[str, Any]], histories: dict[str, list[tuple[int, float]]], env: Any,
                directory: Path) -> list[Path]:
    """The comparison's figures, each metric value drawn with its 95% interval where the row has one."""
    from otbench.study.plots import plot_metric_by_iteration

    metric, name = env.primary_metric, f"{env.name}-{env.setting}"
    # offline optimizers log their iterations on the train split; the rows are scored on the test split
    split, row_split = ("", "") if env.learning == "online" else (" (train split)", " (test split)")
    return [
        plot_metric_by_iteration(histories, metric, f"{name}: {metric} by iteration{split}",
                                 directory / f"{name}-{metric}-by-iteration.png",
                                 references={f"{row['row']}{row_split}": row[metric] for row in rows
                                             if row["optimizer"] in ("base", "gold")}),
        *row_plots(rows, env, directory, name),
    ]


def row_plots(rows: list[dict[str, Any]], env: Any, directory: Path, name: str, title: str | None = None) -> list[Path]:
    """The figures a comparison's rows give by themselves, without MLflow's histories: the primary metric against
    tokens, and by row with its 95% interval (filled where the difference to base holds); files ``NAME-METRIC-...``."""
    from otbench.study.plots import plot_metric_by_row, plot_metric_vs_tokens

    metric, title = env.primary_metric, title or name
    bounds = {row["row"]: (row.get(f"{metric}_ci_low"), row.get(f"{metric}_ci_high")) for row in rows}
    known = {label: (float(low), float(high)) for label, (low, high) in bounds.items()
             if low is not None and high is not None}
    held = {row["row"] for row in rows if (row.get("vs_base") or {}).get("holds")}
    vs_tokens, by_row = row_plot_paths(directory, name, metric)
    return [
        plot_metric_vs_tokens({row["row"]: (row["tokens"], row[metric]) for row in rows}, metric,
                              f"{title}: {metric} vs tokens", vs_tokens, known),
        plot_metric_by_row({row["row"]: row[metric] for row in rows}, metric, f"{title}: {metric} by row",
                           by_row, known, held),
    ]


def row_plot_paths(directory: Path, name: str, metric: str) -> tuple[Path, Path]:
    """Where :func:`row_plots` draws its figures: metric against tokens, then by row."""
    return directory / f"{name}-{metric}-vs-tokens.png", directory / f"{name}-{metric}-by-row.png"


def add_token_ratios(rows: list[dict[str, Any]]) -> bool:
    """Give every row ``tokens_vs_to``, its tokens over the reference optimizer's row's
    (:data:`otbench.optimizers.registry.REFERENCE`; the paper reports costs against one another this way); False
    when that row is absent or cost nothing."""
    reference = reference_label()
    tokens = next((row["tokens"] for row in rows if row["row"] == reference), 0)
    if not tokens:
        return False
    for row in rows:
        row["tokens_vs_to"] = round(row["tokens"] / tokens, 2)
    return True


def log_comparison(options: CompareOptions, env: Any, table: comparison.Table, printed: list[dict[str, Any]],
                   columns: list[str], plots: list[Path], *, nested: bool = False) -> str:
    """A ``compare`` run holding the table (JSON table and CSV with one column per figure, Markdown as printed with
    its legend and warnings) and the plots; returns its id. ``nested``: a child of the active run (a grid's).

    Its ``run_ids`` parameter lists the rows' runs, so ``otbench.ui_check`` can open them side by side.
    """
    import mlflow
    import pandas as pd

    lm = options.lm
    samples = ",".join(str(seed) for seed in options.samples)
    tags = {"command": "compare", "env": env.name, "setting": env.setting, "lm": lm.lm,
            "editor_lm": lm.editor_lm or lm.lm, "seed": samples, "fault_family": fault_family(env)}
    rows = table.rows
    params = {"limit": options.limit, "test_limit": options.test_limit, "optimizers": ",".join(options.optimizers),
              "rows": ",".join(row["row"] for row in rows), "run_ids": ",".join(row["run_id"] for row in rows),
              "faults": options.environment.faults}
    model = naming.model_label(lm.lm, embedded_model=lm.embedded_model, gguf=lm.gguf)
    name = naming.run_name("compare", env.name, env.setting, f"n{options.limit}", model)
    flat = comparison.flat_rows(table)
    with tracking.tracked_run(name, tags=tags, params=params, nested=nested) as run:
        mlflow.log_metric("fault_rate", fault_rate(env))
        tracking.log_table(flat, "comparison.json")
        mlflow.log_text(pd.DataFrame(flat).to_csv(index=False), "comparison.csv")
        mlflow.log_text(comparison.markdown(printed, columns) + "\n" + comparison.legend(table, env.primary_metric)
                        + "".join(f"\n\nwarning: {warning}" for warning in table.warnings) + "\n", "comparison.md")
        for path in plots:
            mlflow.log_artifact(str(path), "plots")
    return str(run.info.run_id)


def fault_rate(env: Any) -> float:
    """The chance a call meets a fault under ``env``'s policy (0 without one): the fault-rate plot's axis."""
    controller = getattr(env, "faults", None)
    return controller.policy.total_rate if controller is not None else 0.0


def fault_family(env: Any) -> str:
    """What comparisons at several fault rates share: the policy's kinds and phases without its rate
    (``flaky@exploration``); ``none`` without faults, which joins every family at rate 0."""
    controller = getattr(env, "faults", None)
    if controller is None or not controller.policy.total_rate:
        return "none"
    policy = controller.policy
    return f"{'+'.join(sorted(policy.rates))}@{'+'.join(sorted(policy.phases))}"


def plot_against_fault_rate(plots: Path, env: Any, run_id: str) -> Path:
    """The primary metric of every row against the fault rate, over the finished comparisons of the same
    definition (environment, setting, models, seed, limits) and fault family as run ``run_id``, the latest
    at each rate; logged to that run too."""
    import mlflow

    from otbench.study.plots import plot_metric_vs_fault_rate

    run = mlflow.get_run(run_id)
    family = run.data.tags["fault_family"]
    same = " AND ".join([*(f"tags.{key} = {run_lookup.quoted(run.data.tags[key])}" for key in ("env", "setting", "lm",
                                                                                       "editor_lm", "seed")),
                         "tags.command = 'compare'", f"params.limit = {run_lookup.quoted(run.data.params['limit'])}",
                         f"params.test_limit = {run_lookup.quoted(run.data.params['test_limit'])}"])
    found = mlflow.MlflowClient().search_runs([run.info.experiment_id], same,
                                              order_by=["attributes.start_time DESC"])
    by_rate: dict[float, Any] = {}
    for other in found:
        if other.info.run_id != run_id and other.info.status != "FINISHED":
            continue
        if other.data.tags.get("fault_family", "none") in (family, "none"):
            by_rate.setdefault(other.data.metrics.get("fault_rate", 0.0), other)
    lines: dict[str, list[tuple[float, float]]] = {}
    bounds: dict[str, dict[float, tuple[float, float]]] = {}
    metric = env.primary_metric
    for rate, other in sorted(by_rate.items()):
        table = _artifact_json(other.info.run_id, "comparison.json")
        for row in (dict(zip(table["columns"], values, strict=True)) for values in table["data"]):
            if isinstance(row.get(metric), (int, float)):
                lines.setdefault(row["row"], []).append((rate, float(row[metric])))
                low, high = row.get(f"{metric}_ci_low"), row.get(f"{metric}_ci_high")
                if isinstance(low, (int, float)) and isinstance(high, (int, float)):  # comparisons of old: none
                    bounds.setdefault(row["row"], {})[rate] = (float(low), float(high))
    name = f"{env.name}-{env.setting}"
    path = plot_metric_vs_fault_rate(lines, metric, f"{name}: {metric} vs fault rate ({family})",
                                     plots / f"{name}-{metric}-vs-fault-rate.png", bounds)
    with mlflow.start_run(run_id=run_id):
        mlflow.log_artifact(str(path), "plots")
    return path


def check(options: CompareOptions) -> CompareOptions:
    """The options with the environment's defaults filled in, refused on one line before anything slow loads."""
    unknown = [name for name in options.optimizers if name not in OPTIMIZERS]
    if unknown:
        raise ConfigError(f"unknown optimizer {unknown[0]!r}; choose from {', '.join(OPTIMIZERS)}")
    ablated = [name for name in OPTIMIZERS if OPTIMIZERS[name].has_ablations]
    if options.ablations and not any(name in ablated for name in options.optimizers):
        raise ConfigError(f"--ablations switches off an optimizer's improvements, and none of --optimizers has any: "
                          f"add {' or '.join(ablated)} to --optimizers")
    if len(set(options.samples)) != len(options.samples):
        raise ConfigError(f"--seeds names a sample twice: {','.join(str(seed) for seed in options.samples)}")
    environment = resolve(options.environment)
    if options.val_limit and learning_of(environment.env) == "online":
        raise ConfigError(f"--val-limit: {environment.env} learns docs per task (online), so no docs learned here "
                          "apply to other tasks; drop --val-limit")
    return replace(options, environment=environment)


def run(options: CompareOptions) -> CompareResult:
    """Reuse or run every row on every sample, score it, and log the comparison as a ``compare`` run; bad options
    are refused before anything slow (data, model, MLflow store) loads."""
    options = check(options)
    check_models(options.lm)
    settings = options.settings()
    from otbench.run import ledger

    with make_environment(options.environment) as env:
        plans = {seed: plan_rows(replace(options, seed=seed), env) for seed in options.samples}
        for sample_plans in plans.values():  # a row's ledger entry that fails its checks is refused before any write
            for plan in sample_plans:
                ledger.find(plan.definition)
        mlflow_store.configure(options.tracking.uri, directory=options.tracking.directory)
        runs: dict[tuple[str, int], Any] = {}
        reused: dict[tuple[str, int], bool] = {}
        with one_embedded_server():  # missing runs share one model server instead of loading it each
            for seed, sample_plans in plans.items():
                for plan in sample_plans:
                    found = find_run(plan)
                    reused[(plan.label, seed)] = found is not None
                    runs[(plan.label, seed)] = found or run_missing(plan, settings)
        return tabulate(options, env, plans, runs, reused)


def tabulate(options: CompareOptions, env: Any, plans: Mapping[int, list[RowPlan]], runs: Mapping[tuple[str, int], Any],
             reused: Mapping[tuple[str, int], bool], *, nested: bool = False, fidelity: bool = True) -> CompareResult:
    """The comparison of finished runs (one per row and sample): the table, its plots and its ``compare`` run;
    ``fidelity``: with each row's docs scored against the gold docs (``docs_sem``, ``docs_lex``: an embedding model's
    minutes and memory on a full BFCL setting)."""
    rows = row_runs(options, env, plans, runs, reused, fidelity=fidelity)
    table = comparison.build(env, rows)
    ratios = ["tokens_vs_to"] if add_token_ratios(table.rows) else []
    primary = env.primary_metric
    spread = [f"{primary}_by_sample"] if len(options.samples) > 1 else []
    columns = ["row", *table.metrics, *comparison.REFERENCES, *spread, "tokens", *ratios,
               *(("docs_sem", "docs_lex") if fidelity else ()), "docs_faults", "run", "run_id"]
    printed = comparison.display_rows(table, primary)
    first = plans[options.samples[0]]
    histories = iteration_histories(first, {plan.label: runs[(plan.label, options.samples[0])] for plan in first},
                                    primary)
    plots = write_plots(table.rows, histories, env, options.plots)
    compare_run = log_comparison(options, env, table, printed, columns, plots, nested=nested)
    if options.environment.faults is not None:  # with the clean comparisons of the same definition at rate 0
        plots.append(plot_against_fault_rate(options.plots, env, compare_run))
    return CompareResult(env.name, env.setting, env.learning, table.metrics, options.limit, options.test_limit,
                         options.seed, table.rows, [str(path) for path in plots], compare_run, columns,
                         list(options.samples), table.warnings, printed, comparison.legend(table, primary))


def row_runs(options: CompareOptions, env: Any, plans: Mapping[int, list[RowPlan]],
             runs: Mapping[tuple[str, int], Any], reused: Mapping[tuple[str, int], bool], *,
             fidelity: bool = True) -> list[comparison.RowRuns]:
    """Every row with its runs on each sample, what it reads from each (metrics, tokens, docs fidelity where asked,
    whether it was reused) and each run's per-task outcomes."""
    evaluated_on = options.limit if env.learning == "online" else options.test_limit
    values: dict[str, list[dict[str, Any]]] = {}
    for seed, sample_plans in plans.items():
        scored = sample_tasks(env.tasks("test"), evaluated_on, seed)
        sample_runs = {plan.label: runs[(plan.label, seed)] for plan in sample_plans}
        scores = docs_fidelity(sample_plans, sample_runs, env, list(dict.fromkeys(env.toolset_of(t) for t in scored))) \
            if fidelity else {}
        for plan in sample_plans:
            close = {"docs_sem": round(scores[plan.label].semantic, 4),
                     "docs_lex": round(scores[plan.label].lexical, 4)} if fidelity else {}
            values.setdefault(plan.label, []).append({**row_results(plan, sample_runs[plan.label], env), **close,
                                                      "run": "reused" if reused[(plan.label, seed)] else "ran"})
    first = plans[options.samples[0]]
    return [comparison.RowRuns(
        plan.label, plan.optimizer, tuple(runs[(plan.label, seed)] for seed in options.samples), options.samples,
        tuple(values[plan.label]),
        tuple(comparison.read_outcomes(runs[(plan.label, seed)], seed) for seed in options.samples)) for plan in first]


@dataclass(frozen=True)
class PowerPlan:
    """What a comparison of a given size can tell apart, worked out before any model time is spent
    (:mod:`otbench.evals.stats`: two proportions for a pass/fail metric, a paired t test otherwise)."""

    env: str
    setting: str
    metric: str
    pass_fail: bool
    """Whether the metric is a share of tasks passed (else a continuous figure, planned from ``spread``)."""
    tasks: int
    """Tasks each row is scored on (over every sample)."""
    samples: int
    tests: int
    """Paired tests in the table: Holm's strictest step is at alpha / tests."""
    base_rate: float
    base_from: str
    """Where ``base_rate`` (and ``spread``) came from: assumed, or a finished run's outcomes."""
    spread: float | None
    """Continuous metrics: the standard deviation of the per-task differences between two rows."""
    available: int
    """Tasks the environment has in the split rows are scored on."""
    detectable: dict[str, float]
    """alpha -> the smallest difference the size detects with 80% power."""
    wanted: float | None = None
    needed: dict[str, float] = field(default_factory=dict)
    """alpha -> tasks per row that detect ``wanted`` with 80% power."""

    def lines(self) -> list[str]:
        """The plan as ``compare --plan`` prints it."""
        kind = "pass/fail" if self.pass_fail else f"continuous, per-task differences' spread {self.spread:.3g}"
        lines = [f"plan: {self.env} / {self.setting}, {self.metric} ({kind}); {self.tasks} tasks per row"
                 + (f" over {self.samples} samples" if self.samples > 1 else "")
                 + f" ({self.available} available); {self.tests} paired tests in the table (Holm)",
                 f"base rate {self.base_rate:.3f} ({self.base_from})"]
        for alpha, value in self.detectable.items():
            lines.append(f"smallest detectable difference, 80% power at alpha {alpha}: {value:.3f}")
        for alpha, value in self.needed.items():
            reach = "" if value <= self.available else f": more than the {self.available} this environment has"
            lines.append(f"tasks per row to detect {self.wanted:+.3f} at alpha {alpha}: "
                         + (f"{value:,.0f}{reach}" if math.isfinite(value) else "none (no difference)"))
        if self.samples > 1:
            lines.append("samples pooled as clusters: the paired tests count samples, not tasks; plan on tasks per "
                         "sample with one sample, then add samples")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def plan(options: CompareOptions, *, base_rate: float | None = None, wanted: float | None = None,
         spread: float | None = None) -> PowerPlan:
    """``compare --plan``: for the comparison ``options`` describe, the smallest difference it can detect and the
    tasks a ``wanted`` difference needs, from an assumed ``base_rate`` (else the base row's finished run, found
    as ``compare`` would reuse it; nothing is run). Continuous metrics take the ``spread`` of per-task
    differences, else the one between the finished base and +TO rows."""
    from otbench.evals import stats
    from otbench.evals.outcomes import Mean, rules_of, value_of

    options = check(options)
    if base_rate is None:  # read from the store's finished base run: a store that does not exist holds none
        require_store(options.tracking.uri, options.tracking.directory, "--plan without --base-rate")
    if wanted is not None and base_rate is not None and not -base_rate < wanted <= 1 - base_rate:
        raise ConfigError(f"--difference {wanted:g}: a share of tasks goes from {base_rate:g} to at most 1 and at least "
                          f"0, so the difference lies in ({-base_rate:g}, {1 - base_rate:g}]")
    mlflow_store.configure(options.tracking.uri, directory=options.tracking.directory)
    with make_environment(options.environment) as env:
        plans = plan_rows(replace(options, seed=options.samples[0]), env)
        rule = rules_of(env)[env.primary_metric]
        per_sample = options.limit if env.learning == "online" else options.test_limit
        available = len(env.tasks("test"))
        tasks = min(per_sample, available) * len(options.samples)
        reference = reference_label()
        found = {plan.label: find_run(plan) for plan in plans if plan.label in ("base", reference)}
        observed = {label: run for label, run in found.items() if run is not None}
        read = {label: comparison.read_outcomes(run, options.samples[0]) for label, run in observed.items()}
        outcomes = {label: kept for label, kept in read.items() if kept is not None}
        base_outcomes = outcomes.get("base")
        # before any run, a mean of per-task scores is planned as pass/fail unless a spread says it is continuous;
        # a share of moves (a ratio) never is
        pass_fail = ((isinstance(rule, Mean) and spread is None) if base_outcomes is None
                     else comparison.is_pass_fail(base_outcomes, rule))
        if base_rate is not None:
            rate, source = base_rate, "assumed: --base-rate"
        elif base_outcomes is not None:
            rate, source = value_of(base_outcomes, rule), f"observed: base run {observed['base'].info.run_id}"
        else:
            raise ConfigError("no finished base run of this comparison to read a base rate from; give --base-rate")
        tests = max(1, 2 * len(plans) - 3)  # each row against base, and all but base against +TO
        levels = {f"{stats.ALPHA}": stats.ALPHA, f"{stats.ALPHA / tests:.3g} (Holm's strictest)": stats.ALPHA / tests}
        if pass_fail and wanted is not None and not -rate < wanted <= 1 - rate:
            raise ConfigError(f"--difference {wanted:g}: from a base rate of {rate:.3f} a share of tasks can move by "
                              f"more than {-rate:.3f} and at most {1 - rate:.3f}")
        if pass_fail:
            detectable = {label: stats.detectable_difference(tasks, rate, alpha=alpha)
                          for label, alpha in levels.items()}
            needed = {label: stats.tasks_needed(rate, wanted, alpha=alpha) for label, alpha in levels.items()} \
                if wanted is not None else {}
        else:
            if spread is None:
                if "base" not in outcomes or reference not in outcomes:
                    raise ConfigError(f"{env.primary_metric} is not pass/fail: give --spread (the standard deviation "
                                      f"of per-task differences), or finish the base and {reference} rows first")
                spread = comparison.difference_spread(outcomes[reference], outcomes["base"], rule)
                source += f"; spread observed against {reference} run {observed[reference].info.run_id}"
            detectable = {label: stats.detectable_mean_difference(tasks, spread, alpha=alpha)
                          for label, alpha in levels.items()}
            needed = {label: stats.units_needed(wanted, spread, alpha=alpha) for label, alpha in levels.items()} \
                if wanted is not None else {}
        return PowerPlan(env.name, env.setting, env.primary_metric, pass_fail, tasks, len(options.samples), tests, rate,
                         source, spread, available, detectable, wanted, needed)


