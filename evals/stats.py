"""Uncertainty for the figures otbench reports: intervals, paired tests, multiple testing, power.

A row of a comparison is a handful of tasks (30 BFCL tests, 4 chess games), so every figure is
reported with a 95% interval, and two rows scored on the same tasks are compared task by task
(paired), which is far more sensitive than comparing their intervals. All of it rests on scipy and
statsmodels; this module only chooses the method that fits the data:

- a share of tasks passed, tasks independent: the Wilson interval (``statsmodels``'s
  ``proportion_confint``), which stays inside [0, 1] and is sound at 0/30;
- any other mean or ratio (partial scores, % of moves, tasks grouped in clusters): the estimate's
  cluster-robust standard error from a weighted least-squares fit on the intercept (``statsmodels``),
  with Student's t on (clusters - 1) degrees of freedom, so 4 games give a wide interval, as they should;
- any other statistic (streaming Elo): a percentile bootstrap that resamples clusters (``scipy``);
- a paired difference: exact McNemar on pass/fail tasks (``statsmodels``), otherwise a permutation
  test that swaps the two rows within each cluster (``scipy``); its interval is a paired bootstrap
  over clusters; p-values of one table are adjusted together by Holm's method;
- power: the smallest difference a size can detect and the size a difference needs, from
  ``statsmodels``' power solvers (two proportions through Cohen's h, or a paired t on differences).

Each function is seeded: the same data give the same interval and p-value on every run.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

CONFIDENCE = 0.95
"""Every interval is a 95% interval."""
ALPHA = 0.05
"""A difference holds when its Holm-adjusted p-value is below this."""
POWER = 0.8
"""The chance of detecting a difference that ``--plan`` sizes for."""
RESAMPLES = 1999
"""Bootstrap resamples (seeded)."""
PERMUTATIONS = 9999
"""Random permutations of a permutation test; with fewer possible arrangements every one is used (exact)."""
_SEED = 0

Statistic = Callable[..., Any]
"""A statistic of cluster indices (``statistic(indices, axis=-1)``, vectorised over leading axes)."""


@dataclass(frozen=True)
class Interval:
    """A reported figure with its 95% interval."""

    value: float
    """The figure itself, computed as the environment computes it."""
    low: float
    """Lower end of the interval (NaN when none could be computed)."""
    high: float
    """Upper end of the interval (NaN when none could be computed)."""
    n: int
    """Tasks the figure is computed over."""
    clusters: int
    """Independent units behind the interval: the tasks themselves, or the samples they were drawn in."""
    method: str
    """How the interval was computed (``wilson``, ``cluster-robust t``, ``cluster bootstrap``), or why there is none."""

    @property
    def known(self) -> bool:
        """Whether the interval could be computed."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Interval:
        """Read :meth:`as_dict` back (JSON writes a missing end as null)."""
        return cls(_float(values["value"]), _float(values["low"]), _float(values["high"]), int(values["n"]),
                   int(values["clusters"]), str(values["method"]))

    def bounds_text(self, digits: int | None = None) -> str:
        """``[0.488, 0.808]``, or ``[-]`` without an interval."""
        if not self.known:
            return "[-]"
        places = _places(self.value) if digits is None else digits
        return f"[{self.low:.{places}f}, {self.high:.{places}f}]"

    def text(self, digits: int | None = None) -> str:
        """``0.667 [0.488, 0.808]``: the figure and its interval, as tables print them."""
        places = _places(self.value) if digits is None else digits
        return f"{self.value:.{places}f} {self.bounds_text(places)}"


def no_interval(value: float, reason: str, n: int = 0) -> Interval:
    """A figure reported without an interval, saying why (``run logged before per-task outcomes were kept``)."""
    return Interval(float(value), math.nan, math.nan, n, 0, reason)


@dataclass(frozen=True)
class Difference:
    """One row minus another on the tasks both were scored on, with its interval and test."""

    value: float
    """The row's figure minus the reference row's, on the paired tasks."""
    low: float
    """Lower end of the paired bootstrap interval."""
    high: float
    """Upper end of the paired bootstrap interval."""
    p_value: float
    """Two-sided p-value of the paired test, before adjustment (NaN when there was nothing to test)."""
    n: int
    """Tasks scored in both rows."""
    clusters: int
    """Independent units the test and interval resample (tasks, or samples when several are pooled)."""
    test: str
    """``exact McNemar`` (pass/fail tasks) or ``paired permutation``."""
    p_adjusted: float = math.nan
    """The p-value after Holm's adjustment across the table it belongs to (NaN until adjusted)."""

    def holds(self, alpha: float = ALPHA) -> bool:
        """Whether the difference holds: its adjusted p-value (its own, before adjustment) is below ``alpha``."""
        p = self.p_adjusted if math.isfinite(self.p_adjusted) else self.p_value
        return math.isfinite(p) and p < alpha

    @property
    def mark(self) -> str:
        """``*`` for a difference that holds, else nothing: tables put it after the difference."""
        return "*" if self.holds() else ""

    def text(self, digits: int | None = None) -> str:
        """``+0.600 [0.433, 0.767] *``."""
        if not math.isfinite(self.value):
            return "-"
        places = _places(self.value) if digits is None else digits
        bounds = f"[{self.low:.{places}f}, {self.high:.{places}f}]" if math.isfinite(self.low) else "[-]"
        return f"{self.value:+.{places}f} {bounds}{' ' + self.mark if self.mark else ''}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "holds": self.holds()}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Difference:
        """Read :meth:`as_dict` back (JSON writes a missing figure as null)."""
        return cls(_float(values["value"]), _float(values["low"]), _float(values["high"]), _float(values["p_value"]),
                   int(values["n"]), int(values["clusters"]), str(values["test"]), _float(values.get("p_adjusted")))


def _float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else math.nan


def _places(value: float) -> int:
    """Three decimals for shares (0..1), one for percentages, Elo and counts."""
    return 3 if not math.isfinite(value) or abs(value) <= 1.5 else 1


# -- intervals -------------------------------------------------------------------------------------------------
def wilson(successes: int, n: int) -> Interval:
    """A share of ``n`` independent pass/fail tasks: Wilson's interval."""
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return no_interval(math.nan, "no tasks")
    low, high = proportion_confint(successes, n, alpha=1 - CONFIDENCE, method="wilson")
    return Interval(successes / n, float(low), float(high), n, n, "wilson")


def ratio(numerators: Sequence[float], denominators: Sequence[float], clusters: Sequence[Any],
          scale: float = 1.0) -> Interval:
    """``scale * sum(numerators) / sum(denominators)`` over tasks (a mean when every denominator is 1), with its
    cluster-robust interval: weighted least squares of each task's own ratio on an intercept, weighted by its
    denominator, so the estimate is the pooled ratio and its standard error counts every cluster once (a game's
    moves are one cluster; tasks are their own clusters unless grouped). Tasks with a zero denominator carry
    no weight and are left out. A share (every numerator between 0 and its denominator) keeps its interval
    within 0 and ``scale``: with few clusters the t interval would otherwise reach past them."""
    import statsmodels.api as sm

    num, den = np.asarray(numerators, dtype=float), np.asarray(denominators, dtype=float)
    kept = den > 0
    num, den, groups = num[kept], den[kept], np.array([repr(cluster) for cluster in clusters])[kept]
    if not len(num):
        return no_interval(math.nan, "no tasks")
    value = scale * float(num.sum() / den.sum())
    codes = np.unique(groups, return_inverse=True)[1]
    count = int(codes.max()) + 1
    if count < 2:
        return Interval(value, math.nan, math.nan, len(num), count, "none: one cluster")
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")  # a constant outcome has a zero standard error: the interval is the point
        fit = sm.WLS(num / den, np.ones(len(num)), weights=den).fit(cov_type="cluster", cov_kwds={"groups": codes},
                                                                     use_t=True)
        low, high = (float(bound) * scale for bound in fit.conf_int(alpha=1 - CONFIDENCE)[0])
    if not (math.isfinite(low) and math.isfinite(high)):  # zero spread
        low = high = value
    if np.all((num >= 0) & (num <= den)):  # a share (of tests passed, of moves): its interval stays within 0..scale
        low, high = max(low, 0.0), min(high, scale)
    return Interval(value, low, high, len(num), count, "cluster-robust t")


def cluster_bootstrap(statistic: Callable[[np.ndarray], float], clusters: int, value: float, n: int) -> Interval:
    """Percentile interval of ``statistic`` (a function of the chosen cluster indices) over resampled clusters."""
    from scipy import stats

    if clusters < 2:
        return Interval(value, math.nan, math.nan, n, clusters, "none: one cluster")
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")  # a degenerate resample distribution: scipy warns, the interval is the point
        result = stats.bootstrap((np.arange(clusters),), statistic, vectorized=False, method="percentile",
                                 n_resamples=RESAMPLES, confidence_level=CONFIDENCE,
                                 rng=np.random.default_rng(_SEED))
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return Interval(value, low, high, n, clusters, "cluster bootstrap")


# -- paired differences ----------------------------------------------------------------------------------------
def mcnemar(row: Sequence[float], reference: Sequence[float]) -> float:
    """Exact McNemar p-value of two rows' pass/fail outcomes on the same tasks (only discordant tasks count)."""
    from statsmodels.stats.contingency_tables import mcnemar as mcnemar_test

    a, b = np.asarray(row, dtype=bool), np.asarray(reference, dtype=bool)
    table = [[int(np.sum(a & b)), int(np.sum(a & ~b))], [int(np.sum(~a & b)), int(np.sum(~a & ~b))]]
    return float(mcnemar_test(table, exact=True).pvalue)


def paired_permutation(difference: Statistic, clusters: int) -> float:
    """Two-sided p-value of ``difference(a, b)`` when the two rows are swapped within clusters at random.

    ``difference`` takes two arrays of indices into a table whose first ``clusters`` entries are the row's
    clusters and the next ``clusters`` the reference's (``axis`` as numpy); every arrangement is tried when
    there are at most :data:`PERMUTATIONS` of them.
    """
    from scipy import stats

    if clusters < 2:  # nothing to permute: no test
        return math.nan
    own = np.arange(clusters)
    result = stats.permutation_test((own, own + clusters), difference, permutation_type="samples", vectorized=True,
                                    n_resamples=PERMUTATIONS, alternative="two-sided",
                                    rng=np.random.default_rng(_SEED))
    return float(min(1.0, result.pvalue))


def paired_bootstrap(difference: Statistic, clusters: int) -> tuple[float, float]:
    """Percentile interval of ``difference(indices)`` (both rows on the same resampled clusters)."""
    from scipy import stats

    if clusters < 2:
        return math.nan, math.nan
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        result = stats.bootstrap((np.arange(clusters),), difference, vectorized=True, method="percentile",
                                 n_resamples=RESAMPLES, confidence_level=CONFIDENCE, rng=np.random.default_rng(_SEED))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def smallest_p_value(test: str, clusters: int) -> float:
    """The smallest two-sided p-value a paired test can reach on ``clusters`` units: a permutation test on 4
    games cannot go below 1/8, so no difference between such rows can ever hold."""
    if clusters < 1:
        return 1.0
    return min(1.0, 2 * 0.5 ** clusters) if test in ("exact McNemar", "paired permutation") else 0.0


def holm(differences: Sequence[Difference]) -> list[Difference]:
    """The differences with their p-values adjusted together by Holm's method (those without a p-value as they were)."""
    tested = [index for index, difference in enumerate(differences) if math.isfinite(difference.p_value)]
    adjusted = list(differences)
    for index, p in zip(tested, holm_adjusted([differences[i].p_value for i in tested]), strict=True):
        adjusted[index] = replace(differences[index], p_adjusted=p)
    return adjusted


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment, in the order given: the k-th smallest p-value times the tests not yet passed
    (m - k + 1), never below an adjusted smaller one, at most 1. Written out because statsmodels' version collects
    the garbage on every call, which costs a large process a third of a second a table."""
    order = sorted(range(len(p_values)), key=lambda index: p_values[index])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


# -- power -------------------------------------------------------------------------------------------------------
def detectable_difference(n: int, base_rate: float, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest rise over ``base_rate`` that ``n`` pass/fail tasks per row detect with ``power``: two
    independent proportions through Cohen's h, which pairing on the same tasks can only improve."""
    from statsmodels.stats.power import NormalIndPower

    h = float(NormalIndPower().solve_power(effect_size=None, nobs1=n, alpha=alpha, power=power, ratio=1.0))
    angle = math.asin(math.sqrt(min(max(base_rate, 0.0), 1.0))) + h / 2
    return (math.sin(min(angle, math.pi / 2)) ** 2) - base_rate


def tasks_needed(base_rate: float, difference: float, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """Pass/fail tasks per row that detect a rise of ``difference`` over ``base_rate`` with ``power`` (a whole
    number; infinite for no difference)."""
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    target = min(base_rate + difference, 1.0)
    h = abs(float(proportion_effectsize(target, base_rate)))
    if h == 0:
        return math.inf  # no size separates equal rates
    needed = NormalIndPower().solve_power(effect_size=h, nobs1=None, alpha=alpha, power=power, ratio=1.0)
    return float(math.ceil(needed))


def detectable_mean_difference(clusters: int, spread: float, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest paired difference of a continuous figure that ``clusters`` paired units detect, given the
    standard deviation ``spread`` of the per-unit differences (a paired t test's power)."""
    from statsmodels.stats.power import TTestPower

    if clusters < 2:
        return math.inf
    effect = float(TTestPower().solve_power(effect_size=None, nobs=clusters, alpha=alpha, power=power))
    return effect * spread


def units_needed(difference: float, spread: float, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """Paired units (games, tasks) a continuous figure needs to detect ``difference`` given the spread of the
    per-unit differences (a whole number; infinite for no difference)."""
    from statsmodels.stats.power import TTestPower

    if difference == 0 or spread <= 0:
        return math.inf if difference == 0 else 2.0
    return float(math.ceil(TTestPower().solve_power(effect_size=abs(difference) / spread, nobs=None, alpha=alpha,
                                                    power=power)))
