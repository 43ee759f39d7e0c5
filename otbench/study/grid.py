"""The paper's Table 2 as one resumable grid of cells, on one machine or several.

A cell is one row of one setting on one task sample: an evaluation or an optimize run with its definition
(:mod:`otbench.run.definition`). Each worker walks the grid cheapest cell first; a finished cell is reused, an interrupted
optimize run of the cell is resumed from its checkpoint, a missing cell is run, each by the worker that claims it
first (:mod:`otbench.study.claims`: PostgreSQL advisory locks with a storage URL, file locks on one machine).
Stopping a worker loses at most the step it was in; running the grid again, anywhere, continues it. Workers on
several machines share it through the same database and MLflow server that sweeps use.

When every cell has finished, one worker writes the report (``REPORT.md`` and the plots, and a ``reproduce``
MLflow run whose children are the comparisons): per setting the comparison table (every metric with its
interval, paired differences to base and the reference row marked where they hold), the paper's figures beside
ours as the share of the base-gold gap each row recovers, and the tokens and hours of every cell.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import socket
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

from otbench import mlflow_store
from otbench.envs.registry import EnvironmentOptions, make_environment, resolve
from otbench.errors import ConfigError, DataError, OtbenchError
from otbench.llm.session import LMOptions, check_models, one_embedded_server
from otbench.optimizers.registry import OPTIMIZERS, spec_of
from otbench.run import checkpoints, naming, tracking
from otbench.run import lookup as run_lookup
from otbench.run.settings import RunSettings, TrackingOptions
from otbench.study import comparing, paper
from otbench.study.claims import Claims, claims_for


@dataclass(frozen=True)
class Section:
    """One setting of the grid: its environment and options, the rows wanted, and the sample sizes."""

    env: str
    setting: str
    rows: tuple[str, ...]
    """Row labels as ``compare`` names them (``base``, ``gold``, ``+TO (paper)``, ``+ET (probe)``...)."""
    limit: int
    """Tasks optimized on (online: also judged on)."""
    test_limit: int = 10
    """Offline environments: test tasks every row is judged on."""
    own: Mapping[str, Any] = field(default_factory=dict)
    """The environment's own options (``max_calls``, ``max_moves``...)."""
    knobs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Optimizer name -> its knobs for its rows, by option name (the others run at their declared defaults)."""
    cost: Mapping[str, int] = field(default_factory=dict)
    """Row label -> its tokens, as estimated or measured (thousands): workers take the cheapest missing cell
    first, so each session of the grid finishes as many cells as it can."""

    @property
    def name(self) -> str:
        return f"{self.env}/{self.setting}"

    def optimizers(self) -> tuple[str, ...]:
        """The optimizers whose rows the section wants, by their row labels."""
        by_label = {spec.label: name for name, spec in OPTIMIZERS.items()}
        wanted = [by_label.get(label.split(" ", 1)[0]) for label in self.rows if label not in ("base", "gold")]
        unknown = [label for label, name in zip(self.rows[2:], wanted, strict=False) if name is None]
        if None in wanted:
            raise ConfigError(f"{self.name}: no optimizer makes the row {unknown[0]!r}")
        return tuple(dict.fromkeys(name for name in wanted if name is not None))

    def judged_on(self, online: bool) -> int:
        return self.limit if online else self.test_limit


_BFCL_ALL = 150  # exec_simple 100 + exec_multiple 50: every test
_FEW_GEPA = {"gepa": {"gepa_budget": 4}}
SIZES: dict[str, tuple[Section, ...]] = {
    "full": (
        Section("bfcl", "names_only", ("base", "gold", "+TO (paper)", "+TO", "+ET (probe)", "+GEPA (probe)"),
                limit=_BFCL_ALL, knobs=_FEW_GEPA,
                cost={"base": 43, "gold": 66, "+TO (paper)": 250, "+TO": 136, "+ET (probe)": 175, "+GEPA (probe)": 411}),
        Section("bfcl", "names_params", ("base", "gold", "+TO (paper)", "+TO", "+P2P", "+ET (probe)", "+GEPA (probe)"),
                limit=_BFCL_ALL, knobs=_FEW_GEPA,
                cost={"base": 54, "gold": 66, "+TO (paper)": 292, "+TO": 73, "+P2P": 1420, "+ET (probe)": 177,
                      "+GEPA (probe)": 362}),
        Section("bfcl", "names_desc", ("base", "gold", "+TO"), limit=_BFCL_ALL,
                cost={"base": 50, "gold": 66, "+TO": 228}),
        Section("browsecomp", "domains", ("base", "gold", "+TO"), limit=10, test_limit=100, own={"max_calls": 6},
                cost={"base": 1370, "gold": 1400, "+TO": 1600}),
        Section("chess", "phase", ("base", "gold", "+TO"), limit=8, test_limit=12, own={"max_moves": 20},
                knobs={"toolobserver": {"iterations": 1}}, cost={"base": 152, "gold": 281, "+TO": 244}),
    ),
    "small": (
        Section("bfcl", "names_only", ("base", "gold", "+TO (paper)", "+TO", "+ET (probe)", "+GEPA (probe)"),
                limit=5, knobs={"gepa": {"gepa_budget": 2}}),
        Section("bfcl", "names_params", ("base", "gold", "+TO (paper)", "+TO", "+P2P", "+ET (probe)", "+GEPA (probe)"),
                limit=5, knobs={"gepa": {"gepa_budget": 2}}),
        Section("bfcl", "names_desc", ("base", "gold", "+TO"), limit=5),
        Section("browsecomp", "domains", ("base", "gold", "+TO"), limit=3, test_limit=5, own={"max_calls": 4}),
        Section("chess", "phase", ("base", "gold", "+TO"), limit=2, test_limit=2, own={"max_moves": 8},
                knobs={"toolobserver": {"iterations": 1}}),
    ),
}
"""The grids by size: ``full`` is the paper's Table 2 at the sizes that can tell its rows apart on a small model
(all 150 BFCL tests; 100 BrowseComp questions; 12 chess games), ``small`` the same rows on a few tasks."""


@dataclass(frozen=True)
class ReproduceOptions:
    """The grid (a size, narrowed by ``only``, resized by ``limits``), the samples, where workers meet."""

    size: str = "full"
    only: tuple[str, ...] = ()
    """Environments (``bfcl``) or settings (``bfcl/names_only``) to keep; empty: the whole grid."""
    limits: Mapping[str, int] = field(default_factory=dict)
    """Environment -> tasks every row is judged on (online: also optimized on), replacing the size's."""
    seeds: tuple[int, ...] = (1,)
    """Task samples every cell is run on (pooled as clusters)."""
    storage: str | None = None
    """A PostgreSQL URL where workers on several machines claim cells (None: file claims, one machine)."""
    sections: tuple[Section, ...] | None = None
    """A grid of one's own instead of the size's (library use)."""
    lm: LMOptions = field(default_factory=LMOptions)
    tracking: TrackingOptions = field(default_factory=TrackingOptions)
    num_threads: int = 4
    """Tasks run concurrently in each cell, as in a comparison's runs (:class:`otbench.study.comparing.CompareOptions`)."""
    report: Path = Path("reports/reproduce")
    progress: bool = True
    wait_seconds: float = 30.0
    """How long a worker waits before looking again when every missing cell is held by another worker."""

    def grid(self) -> tuple[Section, ...]:
        """The sections this grid runs, checked."""
        if self.sections is None and self.size not in SIZES:
            raise ConfigError(f"unknown size {self.size!r}; choose from {', '.join(SIZES)}")
        sections = self.sections if self.sections is not None else SIZES[self.size]
        names = {section.env for section in sections} | {section.name for section in sections}
        unknown = [name for name in self.only if name not in names]
        if unknown:
            raise ConfigError(f"--only {unknown[0]!r} is in no section; choose from {', '.join(sorted(names))}")
        unknown = [env for env in self.limits if env not in {section.env for section in sections}]
        if unknown:
            raise ConfigError(f"--limits names {unknown[0]!r}, which the grid does not run")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ConfigError("--seeds must name at least one sample, each once")
        kept = [section for section in sections if not self.only or section.env in self.only
                or section.name in self.only]
        for section in kept:
            section.optimizers()
        return tuple(kept)


@dataclass(frozen=True)
class Cell:
    """One row of one section on one task sample: the run that makes it."""

    section: Section
    seed: int
    plan: comparing.RowPlan

    @property
    def key(self) -> str:
        return self.plan.definition.key

    @property
    def label(self) -> str:
        return f"{self.section.name} {self.plan.label} (sample {self.seed})"


@dataclass(frozen=True)
class ReproduceResult:
    """The grid's cells (state, run, tokens, hours), its report, and what could not be run."""

    cells: list[dict[str, Any]]
    report: str | None
    """The Markdown report written (None when another worker writes it, or cells are missing)."""
    run_id: str | None
    """The ``reproduce`` MLflow run holding the report (the parent of the comparisons)."""
    sections: list[dict[str, Any]] = field(default_factory=list)
    """Each section's comparison, as ``compare --json`` prints it."""
    paper: list[dict[str, Any]] = field(default_factory=list)
    """Each row beside the paper: value and share of the base-gold gap, ours with its interval."""
    failed: dict[str, str] = field(default_factory=dict)
    """Cell -> why it could not run here."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _sized(section: Section, options: ReproduceOptions, online: bool) -> Section:
    wanted = options.limits.get(section.env)
    if wanted is None:
        return section
    return replace(section, limit=wanted) if online else replace(section, test_limit=wanted)


def compare_options(section: Section, options: ReproduceOptions) -> comparing.CompareOptions:
    """The comparison a section is: its rows' optimizers, probed rows if it wants any, its samples."""
    return comparing.CompareOptions(
        environment=EnvironmentOptions(section.env, section.setting, own=dict(section.own)),
        optimizers=section.optimizers(), limit=section.limit, test_limit=section.test_limit, seed=options.seeds[0],
        seeds=options.seeds, knobs={name: spec_of(name).knobs_from(values) for name, values in section.knobs.items()},
        probe=any("(probe)" in label for label in section.rows), lm=options.lm, tracking=options.tracking,
        num_threads=options.num_threads, plots=options.report, progress=options.progress)


@contextmanager
def open_grid(options: ReproduceOptions) -> Iterator[tuple[list[tuple[Section, Any]], list[Cell]]]:
    """Every section with its environment (opened for the block) and every cell, in grid order: sections, then
    samples, then rows as the section lists them. A cell two sections share (BFCL's gold row) is listed once."""
    grid = options.grid()
    for section in grid:
        resolve(EnvironmentOptions(section.env, section.setting, own=dict(section.own)))
    with ExitStack() as stack:
        sections, cells, seen = [], [], set()
        for section in grid:
            env = stack.enter_context(make_environment(EnvironmentOptions(section.env, section.setting,
                                                                          own=dict(section.own))))
            section = _sized(section, options, env.learning == "online")
            sections.append((section, env))
            for seed in options.seeds:
                plans = {plan.label: plan for plan in comparing.plan_rows(
                    replace(compare_options(section, options), seed=seed), env)}
                for label in section.rows:
                    if label not in plans:
                        raise ConfigError(f"{section.name}: compare makes no row {label!r}; "
                                          f"its rows: {', '.join(plans)}")
                    cell = Cell(section, seed, plans[label])
                    if cell.key not in seen:
                        seen.add(cell.key)
                        cells.append(cell)
        yield sections, cells


def state_of(cell: Cell) -> tuple[str, Any | None]:
    """``finished`` (with its run), ``interrupted`` (with the run to resume or replace) or ``missing``."""
    found = comparing.find_run(cell.plan)
    if found is not None:
        return "finished", found
    stale = run_lookup.unfinished(cell.plan.definition)
    return ("interrupted", stale[0]) if stale else ("missing", None)


def run_cell(cell: Cell, settings: RunSettings) -> Any:
    """Run a claimed cell: continue its interrupted run when it has one (an optimize run from its checkpoint, an
    evaluation from its finished tasks; either may have come from the results ledger), else run it afresh; runs of
    the cell left unfinished by workers that died (the claim says no one holds them) end KILLED."""
    import mlflow

    from otbench.run import evaluation, optimization

    client = mlflow.MlflowClient()
    stale = run_lookup.unfinished(cell.plan.definition)
    resumed = next((run for run in stale if _resumable(run, cell.plan.command)), None)
    for run in stale:
        if run is not resumed and run.info.status == "RUNNING":
            client.set_terminated(run.info.run_id, status="KILLED")
    if resumed is None:
        return comparing.run_missing(cell.plan, settings)
    print(f"reproduce: {cell.label}: resuming run {resumed.info.run_id}", file=sys.stderr)
    if resumed.info.status == "RUNNING":  # left running by a worker that died: its claim is free
        client.set_terminated(resumed.info.run_id, status="KILLED")
    if cell.plan.command == "optimize":
        return mlflow.get_run(optimization.resume(resumed.info.run_id, settings).run_id)
    return mlflow.get_run(evaluation.execute(cell.plan.definition, settings, resume=resumed.info.run_id).run_id)


def _resumable(run: Any, command: str) -> bool:
    """Whether an unfinished run kept something to continue from (a checkpoint; finished tasks)."""
    if command == "evaluate":
        from otbench.run.outcomes import PARTIAL, artifact_text

        return bool(artifact_text(run.info.run_id, PARTIAL) or artifact_text(run.info.run_id, "trajectories.jsonl"))
    try:
        checkpoints.load_checkpoint(run.info.run_id)
    except DataError:
        return False
    return True


def work(cells: list[Cell], claims: Claims, options: ReproduceOptions) -> tuple[dict[str, str], set[str]]:
    """Claim and run missing cells until none is left (waiting while other workers hold the last ones); returns
    the cells that failed here, with why, and those this worker ran."""
    failed: dict[str, str] = {}
    ran: set[str] = set()
    worker = f"{socket.gethostname()}:{os.getpid()}"
    settings = RunSettings(lm=options.lm, tracking=options.tracking, num_threads=options.num_threads,
                           progress=options.progress)
    while True:
        pending = sorted((cell for cell in cells if cell.key not in failed and comparing.find_run(cell.plan) is None),
                         key=lambda cell: cell.section.cost.get(cell.plan.label, math.inf))
        if not pending:
            return failed, ran
        took = False
        for cell in pending:
            with claims.claim(cell.key) as held:
                if not held:
                    continue
                took = True
                if comparing.find_run(cell.plan) is None:  # not finished by another worker since we looked
                    done = len(cells) - len(pending)
                    print(f"reproduce [{done + 1}/{len(cells)}] {cell.label}: claimed by {worker}", file=sys.stderr)
                    started = time.perf_counter()
                    try:
                        run_cell(cell, settings)
                    except OtbenchError as error:
                        failed[cell.key] = f"{cell.label}: {error}"
                        print(f"reproduce: {failed[cell.key]}", file=sys.stderr)
                    else:
                        ran.add(cell.key)
                        print(f"reproduce: {cell.label}: finished in {time.perf_counter() - started:.0f} s",
                              file=sys.stderr)
                break
        if not took:
            print(f"reproduce: {len(pending)} cell(s) held by other workers; looking again in "
                  f"{options.wait_seconds:.0f} s", file=sys.stderr)
            time.sleep(options.wait_seconds)


def run(options: ReproduceOptions) -> ReproduceResult:
    """Run or reuse every cell of the grid (claiming each), then write the report once all have finished."""
    from otbench.run import ledger

    options.grid()
    check_models(options.lm)
    with open_grid(options) as (sections, cells):
        for cell in cells:  # an entry of a cell that fails its checks is refused, naming its file, before any write
            ledger.find(cell.plan.definition)
        mlflow_store.configure(options.tracking.uri, directory=options.tracking.directory)
        claims = claims_for(options.storage, _store_directory(options))
        with one_embedded_server():  # cells run here share one model server
            failed, ran = work(cells, claims, options)
        states = {cell.key: state_of(cell) for cell in cells}
        listed = [{**_cell_row(cell, *states[cell.key], sections), "run": "ran" if cell.key in ran else "reused"}
                  for cell in cells]
        if failed or any(state != "finished" for state, _ in states.values()):
            return ReproduceResult(listed, None, None, failed=failed)
        return write_report(options, sections, cells, {key: run for key, (_, run) in states.items()}, listed, claims,
                            ran)


def status(options: ReproduceOptions) -> list[dict[str, Any]]:
    """Every cell's state without running or writing anything: finished, interrupted or missing, from the store
    when it has the cell's run, else from the results ledger (read, not loaded); a ledger file that is not a sound
    entry of its cell makes the cell ``refused``, with the reason under ``problem``."""
    options.grid()
    readable = mlflow_store.open_existing(options.tracking.uri, directory=options.tracking.directory)
    with open_grid(options) as (sections, cells):
        return [_status_row(cell, sections, readable=readable) for cell in cells]


def _status_row(cell: Cell, sections: list[tuple[Section, Any]], *, readable: bool) -> dict[str, Any]:
    from otbench.run import ledger

    if readable:
        found = run_lookup.find_in_store(cell.plan.definition)
        if found is not None:
            return _cell_row(cell, "finished", found, sections)
        stale = run_lookup.unfinished_in_store(cell.plan.definition)
        if stale:
            return _cell_row(cell, "interrupted", stale[0], sections)
    try:
        entry = ledger.find(cell.plan.definition)
    except DataError as problem:
        return {**_cell_row(cell, "refused", None, sections), "from": "ledger", "problem": str(problem)}
    if entry is None:
        return _cell_row(cell, "missing", None, sections)
    row = {**_cell_row(cell, entry.status, None, sections), "from": "ledger"}
    if entry.status == "finished":
        tokens, seconds = ledger.spent(entry)
        row |= {"tokens": tokens, "hours": round(seconds / 3600, 3) if seconds is not None else math.nan}
    return row


def _store_directory(options: ReproduceOptions) -> Path:
    from otbench.paths import mlruns_dir

    return (options.tracking.directory or mlruns_dir()).resolve()


def _cell_row(cell: Cell, state: str, run: Any | None, sections: list[tuple[Section, Any]]) -> dict[str, Any]:
    """A cell as the status and cost tables show it: tokens (paid and cache-served) and hours once finished."""
    row: dict[str, Any] = {"section": cell.section.name, "row": cell.plan.label, "sample": cell.seed, "state": state,
                           "from": _source(run), "run_id": run.info.run_id if run is not None else ""}
    if state == "finished" and run is not None:
        env = next(env for section, env in sections if section.name == cell.section.name)
        row["tokens"] = comparing.row_results(cell.plan, run, env)["tokens"]
        seconds = run.data.metrics.get("seconds")
        row["hours"] = round(seconds / 3600, 3) if seconds is not None else math.nan
    return row


def _source(run: Any | None) -> str:
    """Where a cell's run comes from: the results ledger, or this store."""
    from otbench.run.ledger import LEDGER_TAG

    if run is None:
        return ""
    return "ledger" if LEDGER_TAG in run.data.tags else "store"


def _digest(values: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(values)).encode()).hexdigest()[:20]


def write_report(options: ReproduceOptions, sections: list[tuple[Section, Any]], cells: list[Cell],
                 runs: Mapping[str, Any], listed: list[dict[str, Any]], claims: Claims,
                 ran: set[str]) -> ReproduceResult:
    """The report of a finished grid, written by one worker (the one that claims it), and reused when a report of
    the very same runs exists."""
    import mlflow

    grid_key = _digest([cell.key for cell in cells])
    runs_key = _digest([run.info.run_id for run in runs.values()])
    with claims.claim(f"report-{grid_key}") as held:
        if not held:
            print("reproduce: another worker is writing the report", file=sys.stderr)
            return ReproduceResult(listed, None, None)
        experiment = mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT)
        done = mlflow.MlflowClient().search_runs(
            [experiment.experiment_id], f"tags.command = 'reproduce' AND tags.`otbench.grid` = '{grid_key}' AND "
            f"tags.`otbench.runs` = '{runs_key}' AND attributes.status = 'FINISHED'",
            order_by=["attributes.start_time DESC"]) if experiment is not None else []
        if done:
            kept = json.loads(mlflow.artifacts.load_text(f"runs:/{done[0].info.run_id}/reproduce.json"))
            return ReproduceResult(**{**kept, "cells": listed})
        options.report.mkdir(parents=True, exist_ok=True)
        tags = {"command": "reproduce", "otbench.grid": grid_key, "otbench.runs": runs_key, "size": options.size,
                "lm": options.lm.lm}
        params = {"sections": ",".join(section.name for section, _ in sections), "cells": len(cells),
                  "seeds": ",".join(str(seed) for seed in options.seeds)}
        model = naming.model_label(options.lm.lm, embedded_model=options.lm.embedded_model, gguf=options.lm.gguf)
        with tracking.tracked_run(naming.run_name("reproduce", options.size, model), tags=tags,
                                  params=params) as parent:
            compared, beside = [], []
            for section, env in sections:
                result = _compare_section(section, env, runs, ran, options)
                compared.append(result)
                beside += _beside_the_paper(section, env, result)
            text = _markdown(options, compared, beside, listed)
            path = options.report / "REPORT.md"
            path.write_text(text)
            mlflow.log_text(text, "REPORT.md")
            for result in compared:
                for plot in result.plots:
                    mlflow.log_artifact(plot, "plots")
            tracking.log_table(listed, "cells.json")
            outcome = ReproduceResult(listed, str(path), parent.info.run_id,
                                      [result.to_dict() for result in compared], beside)
            mlflow.log_dict({key: value for key, value in outcome.to_dict().items() if key != "cells"},
                            "reproduce.json")
            mlflow.log_metrics({"tokens": float(sum(row.get("tokens", 0) for row in listed)),
                                "hours": float(sum(row.get("hours", 0.0) for row in listed))})
        return outcome


def _compare_section(section: Section, env: Any, runs: Mapping[str, Any], ran: set[str],
                     options: ReproduceOptions) -> comparing.CompareResult:
    """The section's comparison table from its finished cells, logged as a child of the report's run; its plots
    go to the report's ``plots`` folder. Table 2 is the rows' metrics: the docs' closeness to the gold docs (the
    paper's Table 6) is ``compare``'s, which loads an embedding model for it (minutes and about 1 GB on a full BFCL
    setting), and is left out here."""
    plans: dict[int, list[comparing.RowPlan]] = {}
    found: dict[tuple[str, int], Any] = {}
    reused: dict[tuple[str, int], bool] = {}
    for seed in options.seeds:
        for plan in comparing.plan_rows(replace(compare_options(section, options), seed=seed), env):
            if plan.label in section.rows:
                plans.setdefault(seed, []).append(plan)
                found[(plan.label, seed)] = runs[plan.definition.key]
                reused[(plan.label, seed)] = plan.definition.key not in ran
    return comparing.tabulate(replace(compare_options(section, options), plots=options.report / "plots"), env, plans,
                            found, reused, nested=True, fidelity=False)


def _beside_the_paper(section: Section, env: Any, result: comparing.CompareResult) -> list[dict[str, Any]]:
    """Each row's figure and share of the base-gold gap, ours (with its interval) beside the paper's."""
    from otbench.evals.stats import Interval

    figures = paper.figures(section.env, section.setting)
    rows = []
    for row in result.rows:
        share = row.get("gap_share")
        ours = Interval.from_dict(share) if share else None
        theirs = figures.get(paper.paper_row(row["row"]))
        rows.append({"section": section.name, "row": row["row"], "metric": env.primary_metric,
                     "ours": row[env.primary_metric], "ours_ci_low": row.get(f"{env.primary_metric}_ci_low"),
                     "ours_ci_high": row.get(f"{env.primary_metric}_ci_high"),
                     "ours_gap_share": ours.as_dict() if ours is not None else None,
                     "paper": theirs, "paper_gap_share": paper.gap_share(section.env, section.setting, row["row"])})
    return rows


def _markdown(options: ReproduceOptions, compared: list[comparing.CompareResult], beside: list[dict[str, Any]],
              listed: list[dict[str, Any]]) -> str:
    from otbench.evals.stats import Interval
    from otbench.study.comparison import markdown

    lines = [(f"# OpaqueToolsBench Table 2, reproduced ({options.size} grid, model {options.lm.lm}, samples "
             f"{', '.join(str(seed) for seed in options.seeds)})"), ""]
    for result in compared:
        lines += [f"## {result.env} / {result.setting}", "",
                  markdown(result.printed, [c for c in result.columns if c != "run_id"]), result.legend, ""]
        lines += [f"> warning: {warning}" for warning in result.warnings]
        lines += ["", *(f"![{Path(plot).name}](plots/{quote(Path(plot).name)})" for plot in result.plots), ""]
    lines += [f"## Beside the paper ({paper.MODEL} as agent and editor)", "",
              ("Share of the gap from base docs to gold docs that a row closes, (row - base) / (gold - base): ours "
              "with its 95% paired bootstrap interval; the paper's from its Table 2."), ""]
    shown = []
    for row in beside:
        share = row["ours_gap_share"]
        theirs = row["paper_gap_share"]
        shown.append({"setting": row["section"], "row": row["row"],
                      "ours": f"{row['ours']:.3f}" if abs(row["ours"]) <= 1.5 else f"{row['ours']:.1f}",
                      "ours: share of gap": _share_text(Interval.from_dict(share)) if share else "",
                      f"{paper.MODEL}": "" if row["paper"] is None else f"{row['paper']:g}",
                      f"{paper.MODEL}: share of gap": "" if theirs is None else f"{theirs:.3f}"})
    lines += [markdown(shown, list(shown[0]) if shown else ["setting"]), paper.NOTE, ""]
    lines += ["## Cost of every cell", "", "Tokens are paid plus cache-served; hours are the run's wall time.", ""]
    lines += [markdown(listed, ["section", "row", "sample", "tokens", "hours", "run", "run_id"]),
              (f"Total: {sum(row.get('tokens', 0) for row in listed):,} tokens, "
              f"{sum(row.get('hours', 0.0) for row in listed):.2f} hours."), ""]
    return "\n".join(lines)


def _share_text(share: Any) -> str:
    """A share of the gap with its interval, or why there is none (``gold does not beat base``)."""
    return share.text(3) if math.isfinite(share.value) else f"- ({share.method})"


