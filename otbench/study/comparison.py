"""A comparison table built from its rows' runs: every metric with its interval, each row's paired difference
to ``base`` and to the reference optimizer's row (``+TO``) on the primary metric, marked where it holds after Holm's adjustment across the
table, and warnings when the table cannot tell its rows apart.

Rows are scored on the same tasks, so differences are paired task by task (:mod:`otbench.evals.outcomes`); a row
pooled over several samples (``--seeds``) has its samples as clusters and reports its between-sample spread.
The statistics come from each run's per-task outcomes (:mod:`otbench.run.outcomes`), so a finished
comparison is recomputed from MLflow without running anything; a run logged before those were kept is
shown with its figure and without interval or test, and the table says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from otbench.evals import stats
from otbench.evals.outcomes import MetricRule, Outcomes, difference, gap_share, rules_of, sample_values, value_of
from otbench.evals.stats import Difference, Interval
from otbench.optimizers.registry import reference_label
from otbench.run import outcomes as run_outcomes

REFERENCES = {"vs_base": "base", f"vs_{reference_label().lstrip('+')}": reference_label()}
"""The difference columns: every row against base docs, and against the reference optimizer's default row
(:data:`otbench.optimizers.registry.REFERENCE`: ``vs_TO``)."""
LEGACY_MARK = "†"
"""Marks a row whose runs kept no per-task outcomes (logged before they were kept)."""
CODE_VERSION_TAGS = ("otbench.code", "mlflow.source.git.commit")
"""Where a run says which commit it ran on: otbench's own tag (``-dirty`` with uncommitted changes), else the one MLflow
records for a run started from a git checkout (``MLFLOW_GIT_COMMIT``, spelled out so that building a table does not
import MLflow)."""


@dataclass(frozen=True)
class RowRuns:
    """One row of a comparison and the runs behind it: one per task sample, in sample order."""

    label: str
    optimizer: str
    runs: tuple[Any, ...]
    samples: tuple[int, ...]
    values: tuple[Mapping[str, Any], ...]
    """Per run, what the row reads from it besides outcomes (its metrics, tokens, docs figures)."""
    outcomes: tuple[Outcomes | None, ...] = ()
    """Per run, its per-task outcomes (None for a run logged before they were kept)."""

    @property
    def pooled(self) -> Outcomes | None:
        """Every sample's outcomes together; None when one of the runs kept none."""
        if not self.outcomes or any(part is None for part in self.outcomes):
            return None
        return Outcomes.pooled(part for part in self.outcomes if part is not None)


@dataclass(frozen=True)
class Table:
    """The rows with their figures and the differences between them."""

    rows: list[dict[str, Any]]
    """One dict per row: metrics, ``METRIC_ci_low``/``_ci_high``/``_n``/``_interval``, ``vs_base``/``vs_TO``
    (a :meth:`~otbench.evals.stats.Difference.as_dict`, or None), ``gap_share`` and the row's other figures."""
    metrics: list[str]
    intervals: dict[str, dict[str, Interval]]
    """Row label -> metric -> its interval."""
    differences: dict[str, dict[str, Difference]]
    """Row label -> difference column -> the paired difference (adjusted by Holm across the table)."""
    warnings: list[str] = field(default_factory=list)


def read_outcomes(run: Any, sample: int) -> Outcomes | None:
    """The outcomes a row takes from one of its runs (its result split), as tasks of the ``sample`` the run serves
    (:meth:`Outcomes.as_sample`: a reused whole-split run may have recorded another seed); None when it kept none."""
    kept = run_outcomes.read(run)
    return kept.row.as_sample(sample) if kept is not None and kept.result in kept.splits else None


def build(env: Any, rows: Sequence[RowRuns]) -> Table:
    """The comparison of ``rows`` in ``env``: figures, intervals, differences (Holm) and warnings."""
    rules = rules_of(env)
    metric_names = [name for name in env.metric_names
                    if all(name in values for row in rows for values in row.values)]
    primary = env.primary_metric
    by_label = {row.label: row for row in rows}
    intervals = {row.label: _row_intervals(row, rules, metric_names) for row in rows}
    differences = _differences(rows, by_label, rules[primary])
    table_rows = []
    for row in rows:
        shown: dict[str, Any] = {"row": row.label, "optimizer": row.optimizer}
        for name in metric_names:
            found = intervals[row.label][name]
            shown |= {name: found.value, f"{name}_ci_low": _number(found.low), f"{name}_ci_high": _number(found.high),
                      f"{name}_n": found.n, f"{name}_interval": found.method}
        if len(row.samples) > 1:
            by_sample = _by_sample(row, primary, rules[primary])
            shown |= {f"{primary}_by_sample": by_sample,
                      f"{primary}_sd": _number(_spread(list(by_sample.values())))}
        for column in REFERENCES:
            found_difference = differences.get(row.label, {}).get(column)
            shown[column] = found_difference.as_dict() if found_difference is not None else None
        share = _gap_share(row, by_label, rules[primary])
        shown["gap_share"] = share.as_dict() if share is not None else None
        shown["outcomes"] = row.pooled is not None
        table_rows.append(shown | _summed(row))
    table = Table(table_rows, metric_names, intervals, differences)
    return replace(table, warnings=_warnings(table, rows, primary, rules[primary]))


def _number(value: float) -> float | None:
    """JSON has no NaN: an interval that could not be computed is null."""
    return value if math.isfinite(value) else None


def _row_intervals(row: RowRuns, rules: Mapping[str, MetricRule], names: Sequence[str]) -> dict[str, Interval]:
    pooled = row.pooled
    found = {}
    for name in names:
        logged = [float(values[name]) for values in row.values]
        if pooled is not None:
            computed = run_outcomes.intervals(pooled, {name: rules[name]}).get(name)
            if computed is not None:
                # one run: the figure as it logged it (its interval from its outcomes); pooled: over every task
                found[name] = computed if len(logged) > 1 else replace(computed, value=logged[0])
                continue
        reason = "none: " + (run_outcomes.NO_OUTCOMES if pooled is None else "no task reports it")
        found[name] = stats.no_interval(sum(logged) / len(logged), reason)
    return found


def _by_sample(row: RowRuns, metric: str, rule: MetricRule) -> dict[str, float]:
    pooled = row.pooled
    if pooled is not None:
        return {str(sample): value for sample, value in sample_values(pooled, rule).items()}
    return {str(sample): float(values[metric]) for sample, values in zip(row.samples, row.values, strict=True)}


def _spread(values: list[float]) -> float:
    import numpy as np

    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def _summed(row: RowRuns) -> dict[str, Any]:
    """Tokens over the row's samples, docs figures averaged over them, and where its runs came from."""
    first = row.values[0]
    shown: dict[str, Any] = {"tokens": sum(int(values["tokens"]) for values in row.values)}
    for name in ("docs_sem", "docs_lex", "docs_faults"):
        if name in first:
            numbers = [values[name] for values in row.values if isinstance(values[name], (int, float))]
            shown[name] = round(sum(numbers) / len(numbers), 4) if numbers else first[name]
    origins = [str(values.get("run", "")) for values in row.values]
    shown["run"] = origins[0] if len(set(origins)) == 1 else ", ".join(
        f"{origins.count(origin)} {origin}" for origin in dict.fromkeys(origins))
    shown["run_id"] = ",".join(run.info.run_id for run in row.runs)
    return shown


def _differences(rows: Sequence[RowRuns], by_label: Mapping[str, RowRuns],
                 rule: MetricRule) -> dict[str, dict[str, Difference]]:
    found: dict[tuple[str, str], Difference] = {}
    for row in rows:
        for column, reference in REFERENCES.items():
            other = by_label.get(reference)
            if other is None or row.label == reference or (column != "vs_base" and row.label == "base"):
                continue  # base against the reference row is that row against base, tested once
            mine, theirs = row.pooled, other.pooled
            if mine is None or theirs is None:
                found[(row.label, column)] = Difference(math.nan, math.nan, math.nan, math.nan, 0, 0,
                                                        run_outcomes.NO_OUTCOMES)
                continue
            found[(row.label, column)] = difference(mine, theirs, rule)
    adjusted = dict(zip(found, stats.holm(list(found.values())), strict=True))
    table: dict[str, dict[str, Difference]] = {}
    for (label, column), value in adjusted.items():
        table.setdefault(label, {})[column] = value
    return table


def _gap_share(row: RowRuns, by_label: Mapping[str, RowRuns], rule: MetricRule) -> Interval | None:
    base, gold = by_label.get("base"), by_label.get("gold")
    if base is None or gold is None or row.label in ("base", "gold"):
        return None
    mine, low, high = row.pooled, base.pooled, gold.pooled
    if mine is None or low is None or high is None:
        return None
    return gap_share(mine, low, high, rule)


def code_versions(rows: Sequence[RowRuns]) -> dict[str, list[str]]:
    """Short commit -> the rows with a run recorded on it (``-dirty`` kept: a run on uncommitted changes is not the
    commit's code). ``compare`` reuses any finished run of a row's definition, whatever code logged it, so a table can
    mix versions; runs that recorded no commit are left out."""
    found: dict[str, list[str]] = {}
    for row in rows:
        for run in row.runs:
            commit = next((run.data.tags[tag] for tag in CODE_VERSION_TAGS if run.data.tags.get(tag)), None)
            short = commit[:7] + ("-dirty" if commit.endswith("-dirty") else "") if commit else None
            if short and row.label not in found.setdefault(short, []):
                found[short].append(row.label)
    return found


def _warnings(table: Table, rows: Sequence[RowRuns], primary: str, rule: MetricRule) -> list[str]:
    """What keeps the table from separating its rows: too few clusters for any paired test to hold, or no
    difference holding, with the smallest difference its size could detect; rows without outcomes; rows whose
    runs come from different versions of the code."""
    warnings = []
    versions = code_versions(rows)
    if len(versions) > 1:
        listed = "; ".join(f"{commit}: {', '.join(labels)}" for commit, labels in versions.items())
        warnings.append(f"the rows' runs were recorded on {len(versions)} versions of the code ({listed}): a "
                        "difference between rows of different versions may come from the code as well as the docs "
                        "(run the older rows' commands again, or delete their runs, for a table of one version)")
    legacy = [row.label for row in rows if row.pooled is None]
    if legacy:
        warnings.append(f"{', '.join(legacy)}: {run_outcomes.NO_OUTCOMES}; shown without interval or paired test "
                        f"({LEGACY_MARK}); run them again to compare them")
    tested = [d for columns in table.differences.values() for d in columns.values() if math.isfinite(d.p_value)]
    if not tested:
        return warnings
    strictest = stats.ALPHA / len(tested)  # Holm's first step
    unreachable = [d for d in tested if stats.smallest_p_value(d.test, d.clusters) >= strictest]
    if unreachable and len(unreachable) == len(tested):
        clusters = min(d.clusters for d in tested)
        warnings.append(f"this table cannot separate its rows: on {clusters} independent units ("
                        f"{'samples' if len({s for row in rows for s in row.samples}) > 1 else 'tasks'}) no paired "
                        f"test can reach p < {strictest:.3g} (alpha {stats.ALPHA} over {len(tested)} tests, Holm); "
                        "more tasks or samples are needed (compare --plan)")
        return warnings
    if not any(d.holds() for d in tested):
        base = next((row for row in rows if row.label == "base"), None)
        pooled = base.pooled if base is not None else None
        n = len(pooled.tasks) if pooled is not None else 0
        detail = ""
        if pooled is not None and is_pass_fail(pooled, rule):
            rate = value_of(pooled, rule)
            detail = (f"; at base's rate {rate:.3f} its {n} tasks per row detect only a rise of "
                      f"{stats.detectable_difference(n, rate):.3f} (80% power, alpha {stats.ALPHA})")
        tests = f"{len(tested)} test{'' if len(tested) == 1 else 's'}"
        warnings.append(f"no difference in this table holds (alpha {stats.ALPHA}, Holm over {tests}){detail}: read its "
                        "rows as indistinguishable (compare --plan sizes a table that can tell)")
    return warnings


def is_pass_fail(outcomes: Outcomes, rule: MetricRule) -> bool:
    """Whether the metric is a share of tasks passed (every task scores 0 or 1)."""
    from otbench.evals.outcomes import Mean

    return isinstance(rule, Mean) and all(task.metrics.get(rule.key, 0.0) in (0.0, 1.0) for task in outcomes.tasks)


def difference_spread(row: Outcomes, reference: Outcomes, rule: MetricRule) -> float:
    """The standard deviation of the per-task differences between two rows (what a paired test's power rests on);
    NaN for a statistic that is not a sum over tasks."""
    from otbench.evals.outcomes import Statistic, per_task_differences

    return math.nan if isinstance(rule, Statistic) else _spread(per_task_differences(row, reference, rule))


def cell(row: Mapping[str, Any], metric: str) -> str:
    """A metric's printed cell: ``0.667 [0.488, 0.808]``; ``0.667 †`` for a row without per-task outcomes."""
    found = Interval(float(row[metric]), _nan(row.get(f"{metric}_ci_low")), _nan(row.get(f"{metric}_ci_high")),
                     int(row.get(f"{metric}_n") or 0), 0, str(row.get(f"{metric}_interval", "")))
    if row.get("outcomes", True):
        return found.text()
    return f"{found.text().rsplit(' ', 1)[0]} {LEGACY_MARK}"


def difference_cell(row: Mapping[str, Any], column: str) -> str:
    """A difference's printed cell: ``+0.600 [0.433, 0.767] *`` (``*``: holds after Holm); blank where none."""
    found = row.get(column)
    if not found:
        return ""
    if not isinstance(found["value"], (int, float)) or not math.isfinite(found["value"]):
        return LEGACY_MARK if found["test"] == run_outcomes.NO_OUTCOMES else "-"
    shown = Difference.from_dict(found)
    return shown.text()


def _nan(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else math.nan


def display_rows(table: Table, primary: str) -> list[dict[str, Any]]:
    """The rows as printed and as Markdown shows them: metrics with intervals, differences with marks."""
    shown = []
    for row in table.rows:
        printed = {**row}
        for name in table.metrics:
            printed[name] = cell(row, name)
        for column in REFERENCES:
            printed[column] = difference_cell(row, column)
        if f"{primary}_by_sample" in row:
            by_sample = row[f"{primary}_by_sample"].values()
            printed[f"{primary}_by_sample"] = " / ".join(f"{value:.3g}" for value in by_sample)
        share = row.get("gap_share")
        printed["gap_share"] = Interval.from_dict(share).text() if share else ""
        shown.append(printed)
    return shown


def legend(table: Table, primary: str) -> str:
    """What the marks and difference columns mean, printed under a table."""
    reference, column = reference_label(), list(REFERENCES)[1]
    return (f"[low, high]: 95% interval; vs_base / {column}: paired difference in {primary} to base / {reference} on the same "
            f"tasks, * where it holds (p < {stats.ALPHA} after Holm over the table's tests); "
            f"{LEGACY_MARK}: no per-task outcomes (run logged before they were kept)")


def markdown(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A Markdown table of already formatted rows."""
    def text(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.3f}"
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{value:,}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(text(row.get(column, "")) for column in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def flat_rows(table: Table) -> list[dict[str, Any]]:
    """The rows with one column per figure (CSV and MLflow's table artefact): each difference as its value,
    ends, p-values and whether it holds; the gap share as its value and ends."""
    flat = []
    for row in table.rows:
        shown = {key: value for key, value in row.items() if key not in (*REFERENCES, "gap_share")
                 and not isinstance(value, dict)}
        for column in REFERENCES:
            found = row.get(column) or {}
            shown |= {column: found.get("value"), f"{column}_low": found.get("low"),
                      f"{column}_high": found.get("high"), f"{column}_p": found.get("p_value"),
                      f"{column}_p_adjusted": found.get("p_adjusted"), f"{column}_holds": found.get("holds")}
        share = row.get("gap_share") or {}
        shown |= {"gap_share": share.get("value"), "gap_share_low": share.get("low"),
                  "gap_share_high": share.get("high")}
        flat.append({key: _number(value) if isinstance(value, float) else value for key, value in shown.items()})
    return flat
