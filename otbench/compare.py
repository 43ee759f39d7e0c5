"""``python -m otbench.compare``: documentation optimizers side by side (the paper's Table 2).

Rows: the environment's own (opaque) docs ``base``, the true docs ``gold``, and one row per
optimizer (``+TO``, ``+P2P``, ``+ET``...): the environment's metrics, the total tokens the row
cost (optimization + evaluation), and how close its docs are to the gold docs (Table 6).

Every row is an MLflow run of ``evaluate`` (base, gold) or ``optimize`` (optimizer rows). A
finished run with the same definition is reused; a missing one is run here through the command's
own ``main``, all of them sharing one embedded model server. Online environments (BFCL) evaluate
while they learn, so an optimize run's final metrics are its row; offline environments learn on
the train split, so the row is the learned docs scored on the test split (``test_*`` metrics),
and base and gold are evaluated on the same test sample. The table is printed and logged as a
``compare`` run (table, CSV, markdown, plots).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optimizers import knobs as knob_rules
from optimizers.registry import OPTIMIZERS
from otbench import evaluate, optimize, tracking
from otbench.cli import OneLineParser, add_lm_arguments, add_tracking_arguments, lm_options, positive_int, run_main
from otbench.envs.base import sample_tasks
from otbench.envs.registry import add_environment_arguments, check_environment_arguments, make_environment
from otbench.errors import ConfigError, DataError, OtbenchError
from otbench.llm.session import check_models, one_embedded_server
from otbench.report import format_table

_COMMANDS = {"evaluate": evaluate.main, "optimize": optimize.main}
# Options the commands log in another form, compared through the run's tags instead: an offline
# environment's setting is its own, not BFCL's --setting; optimize logs the resolved mode and
# editor model; evaluate logs no --docs as "".
_COMPARED_AS_TAGS = {"env", "setting", "mode", "editor_lm", "docs"}
# Options added after runs were logged without them, with the value those runs had in effect: a
# ToolObserver run from before --variant existed ran the paper's protocol. (Other optimizers'
# runs do not log ToolObserver's knobs at all.) Any run from before --faults existed ran without faults.
_UNLOGGED_MEANT = {"toolobserver": {"variant": "paper"}}
_UNLOGGED_BY_EVERY_RUN = {"faults": "null"}


@dataclass
class RowPlan:
    """One row of the comparison: the command that produces it and what a reusable run looks like.

    A run matches when it carries all of ``tags`` and ``params`` and when every parameter of
    ``if_logged`` that it logged has the same value: ``if_logged`` is the row's command line as
    the command parses it, so any option a command logs (its optimizer's knobs included) takes
    part, and evaluate, which logs fewer parameters than optimize, is matched on those it logs.
    """

    label: str
    optimizer: str
    command: str
    argv: list[str]
    tags: dict[str, str]
    params: dict[str, str]
    if_logged: dict[str, str] = field(default_factory=dict)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m otbench.compare", description=__doc__.splitlines()[0])
    add_environment_arguments(parser)
    parser.add_argument("--optimizers", default=",".join(OPTIMIZERS),
                        help=f"comma-separated optimizer rows (default all: {','.join(OPTIMIZERS)})")
    parser.add_argument("--limit", type=positive_int, default=optimize.DEFAULT_LIMIT,
                        help=f"tasks optimized on (online: also evaluated on) (default {optimize.DEFAULT_LIMIT})")
    parser.add_argument("--test-limit", type=positive_int, default=optimize.DEFAULT_LIMIT,
                        help=f"offline environments: test tasks every row is scored on (default {optimize.DEFAULT_LIMIT})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the task samples (default 0)")
    for name, spec in OPTIMIZERS.items():  # each optimizer's knobs, passed on to its own row
        if spec.knobs is not None:
            knob_rules.add_arguments(parser.add_argument_group(name), spec.knobs)
    parser.add_argument("--probe", action="store_true",
                        help="also a '(probe)' row for each optimizer offered the shared --probe (fair to ToolObserver's)")
    parser.add_argument("--num-threads", type=positive_int, default=1, help="tasks run concurrently in missing runs")
    parser.add_argument("--plots", type=Path, default=Path("reports"), help="directory for the PNG plots (default reports/)")
    parser.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress bars in missing runs")
    add_lm_arguments(parser, editor=True)
    add_tracking_arguments(parser)
    return parser


def chosen_optimizers(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in OPTIMIZERS]
    if unknown:
        raise ConfigError(f"unknown optimizer {unknown[0]!r}; choose from {', '.join(OPTIMIZERS)}")
    return list(dict.fromkeys(names))


def as_logged(value: Any) -> str:
    """A value the way the commands log it as an MLflow parameter or tag."""
    if isinstance(value, Path):
        return str(value)
    return value if isinstance(value, str) else json.dumps(value)


def _group_options(parser: argparse.ArgumentParser, title: str) -> list[argparse.Action]:
    return [action for group in parser._action_groups if group.title == title for action in group._group_actions]


def forwarded(parser: argparse.ArgumentParser, values: dict[str, Any], titles: tuple[str, ...],
              skip: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Command-line arguments that pass on every non-default option of the named option groups."""
    argv: list[str] = []
    for title in titles:
        for action in _group_options(parser, title):
            value = values.get(action.dest, action.default)
            if action.dest in skip or value == action.default:
                continue
            option = action.option_strings[-1] if action.option_strings[-1].startswith("--") else action.option_strings[0]
            argv += [option] if isinstance(action, argparse._StoreTrueAction) else [option, str(value)]
    return argv


def run_definition(command: str, argv: list[str]) -> dict[str, str]:
    """What a run of ``command`` with ``argv`` computes: its parsed options, as the command logs them."""
    values = vars({"evaluate": evaluate, "optimize": optimize}[command].build_parser().parse_args(argv))
    return {key: as_logged(value) for key, value in values.items() if key not in optimize.HOW_IT_RUNS | _COMPARED_AS_TAGS}


def plan_rows(parser: argparse.ArgumentParser, args: argparse.Namespace, env: Any) -> list[RowPlan]:
    """base, gold and one row per chosen optimizer, each with its command line and run definition."""
    online = env.learning == "online"
    evaluated_on = args.limit if online else args.test_limit
    own = vars(args)
    common = ["--seed", str(args.seed), "--num-threads", str(args.num_threads), "--json",
              *(["--quiet"] if args.quiet else []), *forwarded(parser, own, ("tracking",))]
    lm_evaluate = forwarded(parser, own, ("language models",), skip={"editor_lm", "editor_api_base"})
    lm_optimize = forwarded(parser, own, ("language models",))

    def evaluate_row(label: str, values: dict[str, Any], docs: list[str], setting: str, optimizer_tag: str) -> RowPlan:
        argv = ["--agent", "llm", "--limit", str(evaluated_on), *docs, *common,
                *forwarded(parser, values, ("environment",)), *lm_evaluate]
        return RowPlan(
            label=label, optimizer=label, command="evaluate", argv=argv,  # optimizer: base or gold
            tags={"command": "evaluate", "env": env.name, "setting": setting, "agent": "llm", "lm": args.lm,
                  "optimizer": optimizer_tag},
            params={"limit": str(evaluated_on), "seed": str(args.seed)},
            if_logged=run_definition("evaluate", argv),
        )

    if online:  # per-task docs are tied to the setting's tool names: the true docs are the gold setting
        if "setting" not in own:
            raise ConfigError(f"{env.name}: an online environment needs a --setting option for its gold row")
        gold = evaluate_row("gold", {**own, "setting": "gold"}, [], "gold", "base")
    else:  # shared tools keep their names: the true docs replace the setting's docs
        gold = evaluate_row("gold", own, ["--docs", "gold"], env.setting, "gold")
    rows = [evaluate_row("base", own, [], env.setting, "base"), gold]

    for name in chosen_optimizers(args.optimizers):
        spec = OPTIMIZERS[name]
        # the optimizer's own defaults except for knobs given here; the paper's protocol (no success bits)
        knobs = forwarded(parser, own, (name,)) if spec.knobs is not None else []
        probed = ((" (probe)", ("--probe",)),) if args.probe and spec.offers_probe else ()
        for suffix, variant in (*spec.rows, *probed):
            argv = ["--optimizer", name, "--limit", str(args.limit), "--test-limit", str(args.test_limit), *common,
                    *forwarded(parser, own, ("environment",)), *knobs, *variant, *lm_optimize]
            rows.append(_optimizer_row(spec.label + suffix, name, argv, args, env))
    return rows


def _optimizer_row(label: str, name: str, argv: list[str], args: argparse.Namespace, env: Any) -> RowPlan:
    online = env.learning == "online"
    return RowPlan(
        label=label, optimizer=name, command="optimize", argv=argv,
        tags={"command": "optimize", "optimizer": name, "mode": env.learning, "env": env.name,
              "setting": env.setting, "lm": args.lm, "editor_lm": args.editor_lm or args.lm, "seed": str(args.seed)},
        params={"limit": str(args.limit)} | ({} if online else {"test_limit": str(args.test_limit)}),
        if_logged=run_definition("optimize", argv),
    )


def find_run(plan: RowPlan) -> Any | None:
    """The latest finished run that matches ``plan``, or None."""
    import mlflow

    experiment = mlflow.get_experiment_by_name(tracking.EXPERIMENT)
    if experiment is None:  # nothing was ever logged to this store
        return None
    clauses = [f"tags.{key} = {_quoted(value)}" for key, value in plan.tags.items()]
    clauses += [f"params.{key} = {_quoted(value)}" for key, value in plan.params.items()]
    clauses.append("attributes.status = 'FINISHED'")
    runs = mlflow.MlflowClient().search_runs([experiment.experiment_id], " AND ".join(clauses),
                                             order_by=["attributes.start_time DESC"])
    for run in runs:
        if "mlflow.parentRunId" in run.data.tags:  # a sweep's trial: part of a tuning study, not a row
            continue
        logged = {**_UNLOGGED_BY_EVERY_RUN, **_UNLOGGED_MEANT.get(plan.optimizer, {}), **run.data.params}
        if all(logged[key] == value for key, value in plan.if_logged.items() if key in logged):
            return run
    return None


def _quoted(value: str) -> str:
    if "'" in value:
        raise ConfigError(f"cannot search MLflow for a value with a quote in it: {value!r}")
    return f"'{value}'"


def run_missing(plan: RowPlan) -> Any:
    """Run the row's command through its ``main`` and return the MLflow run it logged."""
    import mlflow

    print(f"compare: no finished run for {plan.label}; running {plan.command} {' '.join(plan.argv)}", file=sys.stderr)
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):
            _COMMANDS[plan.command](plan.argv)
    except OtbenchError as exc:  # the same kind of error, saying which row
        exc.args = (f"row {plan.label}: {exc}",)
        raise
    summary = json.loads(captured.getvalue().strip().splitlines()[-1])
    return mlflow.get_run(summary["run_id"])


def row_results(plan: RowPlan, run: Any, env: Any) -> dict[str, Any]:
    """The metrics and total tokens of one row, read from its run.

    Tokens come from the run's token ledger (optimize's summary includes the offline test
    evaluation that follows its last step): paid plus cache-served tokens, what the method uses
    whatever an earlier run left in the cache (an optimizer's first rollouts replay the base
    evaluation). Runs logged before the ledger kept cached tokens count paid tokens only.
    """
    metrics = run.data.metrics
    if plan.command == "evaluate":
        prefix, ledger = "", _artifact_json(run.info.run_id, "tokens.json")
    else:  # an online run learned under faults also scored its final docs in the test phase: that is its row
        tested = f"test_{env.primary_metric}" in metrics
        prefix = "final_" if env.learning == "online" and not tested else "test_"
        ledger = _artifact_json(run.info.run_id, "summary.json")
    if f"{prefix}{env.primary_metric}" not in metrics:
        raise DataError(f"run {run.info.run_id} ({plan.label}) has no {prefix}{env.primary_metric} metric")
    total = ledger["tokens_by_phase"]["all"]
    # a split reports only the metrics it defines (chess: evaluation change on exploration games only)
    present = [name for name in env.metric_names if f"{prefix}{name}" in metrics]
    contaminated = metrics.get("doc_contamination") if plan.command == "optimize" else 0.0
    return {name: metrics[f"{prefix}{name}"] for name in present} | {
        "tokens": int(total["total_tokens"] + total.get("cached_tokens", 0)),
        "docs_faults": "-" if contaminated is None else round(contaminated, 4)}


def _artifact_json(run_id: str, path: str) -> Any:
    import mlflow

    return json.loads(Path(mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=path)).read_text())


def docs_fidelity(plans: list[RowPlan], runs: dict[str, Any], env: Any, toolsets: list[str]) -> dict[str, Any]:
    """Similarity to the gold docs per row, over the tools of ``toolsets``: the environment's own docs
    (base), the gold docs, and each optimizer's final docs applied as ``evaluate --docs`` applies them."""
    from evals.fidelity import fidelity
    from otbench.docs_io import apply_docs

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
    import mlflow

    client = mlflow.MlflowClient()
    histories = {}
    for plan in plans:
        if plan.command == "optimize":
            history = sorted(client.get_metric_history(runs[plan.label].info.run_id, metric), key=lambda m: m.step)
            if history:
                histories[plan.label] = [(m.step, m.value) for m in history]
    return histories


def write_plots(rows: list[dict[str, Any]], histories: dict[str, list[tuple[int, float]]], env: Any,
                directory: Path) -> list[Path]:
    from otbench.plots import plot_metric_by_iteration, plot_metric_vs_tokens

    metric, name = env.primary_metric, f"{env.name}-{env.setting}"
    # offline optimizers log their iterations on the train split; the rows are scored on the test split
    split, row_split = ("", "") if env.learning == "online" else (" (train split)", " (test split)")
    return [
        plot_metric_by_iteration(histories, metric, f"{name}: {metric} by iteration{split}",
                                 directory / f"{name}-{metric}-by-iteration.png",
                                 references={f"{row['row']}{row_split}": row[metric] for row in rows
                                             if row["optimizer"] in ("base", "gold")}),
        plot_metric_vs_tokens({row["row"]: (row["tokens"], row[metric]) for row in rows}, metric,
                              f"{name}: {metric} vs tokens", directory / f"{name}-{metric}-vs-tokens.png"),
    ]


def add_token_ratios(rows: list[dict[str, Any]], reference: str = "+TO") -> bool:
    """Give every row ``tokens_vs_to``, its tokens over the ``reference`` row's (the paper reports
    ToolObserver's cost against Play2Prompt's this way); False when that row is absent or cost nothing."""
    tokens = next((row["tokens"] for row in rows if row["row"] == reference), 0)
    if not tokens:
        return False
    for row in rows:
        row["tokens_vs_to"] = round(row["tokens"] / tokens, 2)
    return True


def markdown_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    def cell(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row[column]) for column in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def log_comparison(args: argparse.Namespace, env: Any, rows: list[dict[str, Any]], columns: list[str],
                   plots: list[Path]) -> str:
    """A ``compare`` run holding the table (JSON table, CSV, markdown) and the plots; returns its id.

    Its ``run_ids`` parameter lists the rows' runs, so ``otbench.ui_check`` can open them side by side.
    """
    import mlflow
    import pandas as pd

    tags = {"command": "compare", "env": env.name, "setting": env.setting, "lm": args.lm,
            "editor_lm": args.editor_lm or args.lm, "seed": args.seed, "fault_family": fault_family(env)}
    params = {"limit": args.limit, "test_limit": args.test_limit, "optimizers": args.optimizers,
              "rows": ",".join(row["row"] for row in rows), "run_ids": ",".join(row["run_id"] for row in rows),
              "faults": args.faults}
    model = tracking.model_label(args.lm, embedded_model=args.embedded_model, gguf=args.gguf)
    name = tracking.run_name("compare", env.name, env.setting, f"n{args.limit}", model)
    with tracking.tracked_run(name, tags=tags, params=params) as run:
        mlflow.log_metric("fault_rate", fault_rate(env))
        tracking.log_table(rows, "comparison.json")
        mlflow.log_text(pd.DataFrame(rows, columns=columns).to_csv(index=False), "comparison.csv")
        mlflow.log_text(markdown_table(rows, columns), "comparison.md")
        for path in plots:
            mlflow.log_artifact(str(path), "plots")
    return run.info.run_id


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


def plot_against_fault_rate(args: argparse.Namespace, env: Any, run_id: str) -> Path:
    """The primary metric of every row against the fault rate, over the finished comparisons of the same
    definition (environment, setting, models, seed, limits) and fault family as run ``run_id``, the latest
    at each rate; logged to that run too."""
    import mlflow

    from otbench.plots import plot_metric_vs_fault_rate

    run = mlflow.get_run(run_id)
    family = run.data.tags["fault_family"]
    same = " AND ".join([*(f"tags.{key} = {_quoted(run.data.tags[key])}" for key in ("env", "setting", "lm",
                                                                                       "editor_lm", "seed")),
                         "tags.command = 'compare'", f"params.limit = {_quoted(run.data.params['limit'])}",
                         f"params.test_limit = {_quoted(run.data.params['test_limit'])}"])
    found = mlflow.MlflowClient().search_runs([run.info.experiment_id], same,
                                              order_by=["attributes.start_time DESC"])
    by_rate: dict[float, Any] = {}
    for other in found:
        if other.info.run_id != run_id and other.info.status != "FINISHED":
            continue
        if other.data.tags.get("fault_family", "none") in (family, "none"):
            by_rate.setdefault(other.data.metrics.get("fault_rate", 0.0), other)
    lines: dict[str, list[tuple[float, float]]] = {}
    for rate, other in sorted(by_rate.items()):
        table = _artifact_json(other.info.run_id, "comparison.json")
        for row in (dict(zip(table["columns"], values, strict=True)) for values in table["data"]):
            if isinstance(row.get(env.primary_metric), (int, float)):
                lines.setdefault(row["row"], []).append((rate, float(row[env.primary_metric])))
    name = f"{env.name}-{env.setting}"
    path = plot_metric_vs_fault_rate(lines, env.primary_metric, f"{name}: {env.primary_metric} vs fault rate ({family})",
                                     args.plots / f"{name}-{env.primary_metric}-vs-fault-rate.png")
    with mlflow.start_run(run_id=run_id):
        mlflow.log_artifact(str(path), "plots")
    return path


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # one bar per row's artefact is noise
    parser = build_parser()
    args = parser.parse_args(argv)
    chosen_optimizers(args.optimizers)
    check_environment_arguments(args)
    check_models(lm_options(args))
    tracking.configure(args.tracking_uri, directory=args.mlruns)
    with make_environment(args) as env:
        plans = plan_rows(parser, args, env)
        runs: dict[str, Any] = {}
        reused: dict[str, bool] = {}
        with one_embedded_server():  # missing runs share one model server instead of loading it each
            for plan in plans:
                found = find_run(plan)
                reused[plan.label] = found is not None
                runs[plan.label] = found or run_missing(plan)
        scored = sample_tasks(env.tasks("test"), args.limit if env.learning == "online" else args.test_limit, args.seed)
        fidelity = docs_fidelity(plans, runs, env, list(dict.fromkeys(env.toolset_of(task) for task in scored)))
        rows = [{"row": plan.label, "optimizer": plan.optimizer, **row_results(plan, runs[plan.label], env),
                 "docs_sem": round(fidelity[plan.label].semantic, 4), "docs_lex": round(fidelity[plan.label].lexical, 4),
                 "run": "reused" if reused[plan.label] else "ran", "run_id": runs[plan.label].info.run_id}
                for plan in plans]
        metric_columns = [name for name in env.metric_names if all(name in row for row in rows)]
        ratios = ["tokens_vs_to"] if add_token_ratios(rows) else []
        columns = ["row", *metric_columns, "tokens", *ratios, "docs_sem", "docs_lex", "docs_faults", "run", "run_id"]
        plots = write_plots(rows, iteration_histories(plans, runs, env.primary_metric), env, args.plots)
        compare_run = log_comparison(args, env, rows, columns, plots)
        if args.faults is not None:  # with the clean comparisons of the same definition at rate 0
            plots.append(plot_against_fault_rate(args, env, compare_run))
        header = {"env": env.name, "setting": env.setting, "learning": env.learning, "metrics": metric_columns}
    if args.json:
        print(json.dumps({**header, "limit": args.limit, "test_limit": args.test_limit, "seed": args.seed,
                          "rows": rows, "plots": [str(p) for p in plots], "run_id": compare_run}))
        return 0
    print(f"{header['env']} / {header['setting']}: {', '.join(header['metrics'])}; tokens = optimization + evaluation "
          "(paid + cache-served)" + ("; tokens_vs_to = tokens / +TO's" if "tokens_vs_to" in columns else "")
          + "; docs_sem / docs_lex = similarity of the row's docs to the gold docs"
          + "; docs_faults = share of learned sentences stating faults as tool behaviour")
    print(format_table(rows, columns))
    print(f"plots: {', '.join(str(p) for p in plots)}   MLflow run: {compare_run}")
    return 0


if __name__ == "__main__":
    run_main(main)
