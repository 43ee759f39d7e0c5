"""Per-task outcomes of a run, and how each reported metric is computed from them.

A run keeps every task's own scores (its trajectory's ``metrics``) with the sample the task was drawn
in, so any figure can be recomputed, given an interval, and compared task by task with another run
scored on the same tasks, long after the run ended. How a metric is made from per-task scores is an
environment's declaration (``metric_rules``; a plain mean of the same-named score when it declares
none):

- :class:`Mean`: the mean of a per-task score (BFCL's E, BrowseComp's accuracy);
- :class:`Ratio`: a sum over tasks divided by another (Chess: optimal moves over moves, so moves are
  counted in the games they were played in: a game is a cluster);
- :class:`Statistic`: anything else of the tasks (streaming Elo), resampled by cluster.

Tasks are independent units unless several samples are pooled (``--seeds``): each sample is then one
cluster, as the docs a row learned on a sample serve all of that sample's tasks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from otbench.evals import stats
from otbench.evals.stats import Difference, Interval


@dataclass(frozen=True)
class TaskOutcome:
    """One task's scores in one run."""

    task: str
    """The task's id (pairs runs scored on the same tasks)."""
    sample: int
    """The seed of the task sample it was drawn in."""
    metrics: Mapping[str, float]
    """The environment's per-task scores (a trajectory's ``metrics``)."""
    usage: Mapping[str, float] = field(default_factory=dict)
    """What the task cost: ``tokens`` (paid and cache-served), ``paid_tokens``, ``seconds``, ``tool_calls`` (empty where
    unmeasured)."""

    @property
    def key(self) -> tuple[int, str]:
        return self.sample, self.task

    def to_json(self) -> dict[str, Any]:
        kept = {"task": self.task, "sample": self.sample, "metrics": dict(self.metrics)}
        return kept | ({"usage": dict(self.usage)} if self.usage else {})


class _Scored(Protocol):
    task_id: str
    metrics: dict[str, float]


@dataclass(frozen=True)
class Outcomes:
    """The tasks one row was judged on (one run, or several runs on several samples pooled)."""

    tasks: tuple[TaskOutcome, ...]

    @classmethod
    def of(cls, trajectories: Iterable[_Scored], sample: int) -> Outcomes:
        return cls(tuple(TaskOutcome(t.task_id, sample, dict(t.metrics), dict(getattr(t, "usage", {})))
                         for t in trajectories))

    @classmethod
    def from_json(cls, records: Iterable[Mapping[str, Any]], sample: int = 0) -> Outcomes:
        """Read :meth:`to_json`'s records; ``sample`` for records written without one."""
        return cls(tuple(TaskOutcome(str(r["task"]), int(r.get("sample", sample)),
                                     {k: float(v) for k, v in r["metrics"].items() if _is_number(v)},
                                     {k: float(v) for k, v in dict(r.get("usage", {})).items() if _is_number(v)})
                         for r in records))

    @classmethod
    def pooled(cls, parts: Iterable[Outcomes]) -> Outcomes:
        return cls(tuple(task for part in parts for task in part.tasks))

    def to_json(self) -> list[dict[str, Any]]:
        return [task.to_json() for task in self.tasks]

    @property
    def samples(self) -> tuple[int, ...]:
        return tuple(sorted({task.sample for task in self.tasks}))

    def of_sample(self, sample: int) -> Outcomes:
        return Outcomes(tuple(task for task in self.tasks if task.sample == sample))

    def as_sample(self, sample: int) -> Outcomes:
        """Every task as one of ``sample``: one run's tasks, whatever seed its records name (a run on a whole split
        recorded the seed it was given, though any seed draws those tasks, and pairs with any other such run)."""
        return Outcomes(tuple(replace(task, sample=sample) for task in self.tasks))


def _is_number(value: Any) -> bool:
    """A score (numbers and pass/fail bits), not a label a trajectory may also carry."""
    return isinstance(value, (int, float))


# -- how a metric is made from per-task scores --------------------------------------------------------------------
@dataclass(frozen=True)
class Mean:
    """The mean over tasks of the per-task score ``key`` (tasks without it do not count)."""

    key: str


@dataclass(frozen=True)
class Ratio:
    """``scale`` times the sum over tasks of ``numerator`` over the sum of ``denominator``: a share of the
    tasks' parts (moves), each task a cluster of them."""

    numerator: str
    denominator: str
    scale: float = 1.0


@dataclass(frozen=True)
class Statistic:
    """Any other function of the counted tasks' scores (streaming Elo); tasks without ``requires`` do not count."""

    function: Callable[[Sequence[Mapping[str, float]]], float]
    requires: str
    resampled: Callable[[Sequence[Mapping[str, float]]], float] | None = None
    """The same statistic made cheaper for the thousands of resamples an interval takes (fewer game orders);
    None: ``function`` itself."""

    def of_resample(self, metrics: Sequence[Mapping[str, float]]) -> float:
        return float((self.resampled or self.function)(metrics))


MetricRule = Mean | Ratio | Statistic


class _Measured(Protocol):
    metric_names: tuple[str, ...]


def rules_of(env: _Measured) -> dict[str, MetricRule]:
    """Every metric of ``env`` with its rule: the environment's ``metric_rules`` where it declares one, else the
    mean of the same-named per-task score."""
    declared: Mapping[str, MetricRule] = getattr(env, "metric_rules", {})
    return {name: declared.get(name, Mean(name)) for name in env.metric_names}


def _required(rule: MetricRule) -> tuple[str, ...]:
    if isinstance(rule, Mean):
        return (rule.key,)
    if isinstance(rule, Ratio):
        return rule.numerator, rule.denominator
    return (rule.requires,)


def _counted(outcomes: Outcomes, rule: MetricRule) -> list[TaskOutcome]:
    keys = _required(rule)
    return [task for task in outcomes.tasks if all(key in task.metrics for key in keys)]


def _parts(task: TaskOutcome, rule: Mean | Ratio) -> tuple[float, float]:
    if isinstance(rule, Mean):
        return task.metrics[rule.key], 1.0
    return task.metrics[rule.numerator], task.metrics[rule.denominator]


def _scale(rule: MetricRule) -> float:
    return rule.scale if isinstance(rule, Ratio) else 1.0


def _cluster_of(tasks: Sequence[TaskOutcome]) -> list[Any]:
    """Each task's cluster: the task itself, or its sample when several samples are pooled."""
    pooled = len({task.sample for task in tasks}) > 1
    return [task.sample if pooled else task.key for task in tasks]


def _binary(values: Iterable[float]) -> bool:
    return all(value in (0.0, 1.0) for value in values)


def value_of(outcomes: Outcomes, rule: MetricRule) -> float:
    """The metric over the counted tasks (NaN when none counts)."""
    tasks = _counted(outcomes, rule)
    if not tasks:
        return math.nan
    if isinstance(rule, Statistic):
        return float(rule.function([task.metrics for task in tasks]))
    parts = [_parts(task, rule) for task in tasks]
    denominator = sum(den for _, den in parts)
    return _scale(rule) * sum(num for num, _ in parts) / denominator if denominator else math.nan


def interval(outcomes: Outcomes, rule: MetricRule) -> Interval:
    """The metric with its 95% interval (:mod:`otbench.evals.stats` says which method fits which data)."""
    tasks = _counted(outcomes, rule)
    if not tasks:
        return stats.no_interval(math.nan, "no tasks")
    clusters = _cluster_of(tasks)
    if isinstance(rule, Statistic):
        groups = _grouped(tasks, clusters)

        def resampled(indices: np.ndarray) -> float:
            return rule.of_resample([task.metrics for index in indices for task in groups[int(index)]])

        return stats.cluster_bootstrap(resampled, len(groups), value_of(outcomes, rule), len(tasks))
    parts = [_parts(task, rule) for task in tasks]
    numerators, denominators = [num for num, _ in parts], [den for _, den in parts]
    independent = len(set(clusters)) == len(tasks)
    if isinstance(rule, Mean) and independent and _binary(numerators):
        return stats.wilson(int(sum(numerators)), len(numerators))
    return stats.ratio(numerators, denominators, clusters, scale=_scale(rule))


def _grouped(tasks: Sequence[TaskOutcome], clusters: Sequence[Any]) -> list[list[TaskOutcome]]:
    groups: dict[Any, list[TaskOutcome]] = {}
    for task, cluster in zip(tasks, clusters, strict=True):
        groups.setdefault(cluster, []).append(task)
    return list(groups.values())


def sample_values(outcomes: Outcomes, rule: MetricRule) -> dict[int, float]:
    """The metric on each sample alone: the between-sample spread of a pooled row."""
    return {sample: value_of(outcomes.of_sample(sample), rule) for sample in outcomes.samples}


# -- rows compared task by task -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Paired:
    """Rows aligned on the tasks all of them counted, grouped into clusters."""

    rows: tuple[list[list[TaskOutcome]], ...]
    """Per row, per cluster, its tasks (the same tasks in every row)."""
    n: int

    @property
    def clusters(self) -> int:
        return len(self.rows[0]) if self.rows else 0

    def sums(self, row: int, rule: Mean | Ratio) -> tuple[np.ndarray, np.ndarray]:
        """Per cluster, the sums of the rule's numerator and denominator in ``row``."""
        sums = [[sum(part) for part in zip(*(_parts(task, rule) for task in cluster), strict=True)]
                for cluster in self.rows[row]]
        return np.array([s[0] for s in sums], dtype=float), np.array([s[1] for s in sums], dtype=float)


def _pair(rows: Sequence[Outcomes], rule: MetricRule) -> _Paired:
    counted = [{task.key: task for task in _counted(row, rule)} for row in rows]
    keys = sorted(set.intersection(*(set(row) for row in counted))) if counted else []
    if not keys:
        return _Paired(tuple([] for _ in rows), 0)
    clusters = _cluster_of([counted[0][key] for key in keys])
    order = list(dict.fromkeys(clusters))
    aligned = tuple([[row[key] for key, cluster in zip(keys, clusters, strict=True) if cluster == wanted]
                     for wanted in order] for row in counted)
    return _Paired(aligned, len(keys))


def per_task_differences(row: Outcomes, reference: Outcomes, rule: Mean | Ratio) -> list[float]:
    """Per cluster of the tasks both rows counted, the row's figure minus the reference's."""
    paired = _pair((row, reference), rule)
    if not paired.n:
        return []
    num_a, den_a = paired.sums(0, rule)
    num_b, den_b = paired.sums(1, rule)
    with np.errstate(divide="ignore", invalid="ignore"):
        return [float(value) for value in _scale(rule) * (num_a / den_a - num_b / den_b)]


def _ratio_of(numerators: np.ndarray, denominators: np.ndarray, indices: np.ndarray, scale: float) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return scale * numerators[indices].sum(axis=-1) / denominators[indices].sum(axis=-1)


def difference(row: Outcomes, reference: Outcomes, rule: MetricRule) -> Difference:
    """``row`` minus ``reference`` on the tasks both counted: exact McNemar for pass/fail tasks, else a paired
    permutation test over clusters; a paired bootstrap interval."""
    paired = _pair((row, reference), rule)
    if paired.n == 0:
        return Difference(math.nan, math.nan, math.nan, math.nan, 0, 0, "no shared tasks")
    clusters = paired.clusters
    if isinstance(rule, Statistic):
        return _statistic_difference(paired, rule)
    scale = _scale(rule)
    num_a, den_a = paired.sums(0, rule)
    num_b, den_b = paired.sums(1, rule)
    every = np.arange(clusters)
    value = float(_ratio_of(num_a, den_a, every, scale) - _ratio_of(num_b, den_b, every, scale))

    def resampled(indices: np.ndarray, axis: int = -1) -> Any:
        return _ratio_of(num_a, den_a, indices, scale) - _ratio_of(num_b, den_b, indices, scale)

    low, high = stats.paired_bootstrap(resampled, clusters)
    tasks_a = [task for cluster in paired.rows[0] for task in cluster]
    tasks_b = [task for cluster in paired.rows[1] for task in cluster]
    outcomes_a = [_parts(task, rule)[0] for task in tasks_a]
    outcomes_b = [_parts(task, rule)[0] for task in tasks_b]
    if isinstance(rule, Mean) and clusters == paired.n and _binary(outcomes_a) and _binary(outcomes_b):
        return Difference(value, low, high, stats.mcnemar(outcomes_a, outcomes_b), paired.n, clusters, "exact McNemar")
    num, den = np.concatenate([num_a, num_b]), np.concatenate([den_a, den_b])

    def swapped(a: np.ndarray, b: np.ndarray, axis: int = -1) -> Any:
        return _ratio_of(num, den, a, scale) - _ratio_of(num, den, b, scale)

    p = stats.paired_permutation(swapped, clusters)
    return Difference(value, low, high, p, paired.n, clusters, "paired permutation")


def _statistic_difference(paired: _Paired, rule: Statistic) -> Difference:
    clusters = paired.clusters
    table = paired.rows[0] + paired.rows[1]  # the row's clusters, then the reference's

    def of(indices: Iterable[Any]) -> float:
        return rule.of_resample([task.metrics for index in indices for task in table[int(index)]])

    def swapped(a: np.ndarray, b: np.ndarray, axis: int = -1) -> Any:
        return np.apply_along_axis(of, -1, a) - np.apply_along_axis(of, -1, b)

    def resampled(indices: np.ndarray, axis: int = -1) -> Any:
        return np.apply_along_axis(of, -1, indices) - np.apply_along_axis(of, -1, indices + clusters)

    value = (rule.function([task.metrics for cluster in paired.rows[0] for task in cluster])
             - rule.function([task.metrics for cluster in paired.rows[1] for task in cluster]))
    low, high = stats.paired_bootstrap(resampled, clusters)
    return Difference(value, low, high, stats.paired_permutation(swapped, clusters), paired.n, clusters,
                      "paired permutation")


def gap_share(row: Outcomes, base: Outcomes, gold: Outcomes, rule: MetricRule) -> Interval:
    """How much of the gap from ``base`` to ``gold`` the ``row`` closes, ``(row - base) / (gold - base)``, on the
    tasks all three counted, with a paired bootstrap interval over clusters (resamples where gold does not beat
    base leave the share undefined and are not counted)."""
    if isinstance(rule, Statistic):
        return stats.no_interval(math.nan, "not defined for this metric")
    paired = _pair((row, base, gold), rule)
    if paired.n == 0:
        return stats.no_interval(math.nan, "no shared tasks")
    scale = _scale(rule)
    sums = [paired.sums(index, rule) for index in range(3)]
    every = np.arange(paired.clusters)

    def share(indices: np.ndarray, axis: int = -1) -> Any:
        r, b, g = (_ratio_of(num, den, indices, scale) for num, den in sums)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(g - b > 0, (r - b) / (g - b), np.nan)

    value = float(share(every))
    if not math.isfinite(value):
        return stats.no_interval(value, "gold does not beat base", paired.n)
    low, high = stats.paired_bootstrap(share, paired.clusters)
    if paired.clusters < 2:
        return stats.Interval(value, low, high, paired.n, paired.clusters, "none: one cluster")
    if not (math.isfinite(low) and math.isfinite(high)):
        return stats.Interval(value, low, high, paired.n, paired.clusters,
                              "none: in some resamples gold does not beat base")
    return stats.Interval(value, low, high, paired.n, paired.clusters, "paired cluster bootstrap")
