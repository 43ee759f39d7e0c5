"""Intervals, paired tests, Holm and power: checked against published figures and against statsmodels and scipy
applied to the data directly (the module only chooses the method; the libraries compute)."""

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy.stats import binomtest

from otbench.evals import stats
from otbench.evals.outcomes import (
    Mean,
    Outcomes,
    Ratio,
    Statistic,
    TaskOutcome,
    difference,
    gap_share,
    interval,
    sample_values,
)


def _row(values, sample=0, key="E"):
    return Outcomes(tuple(TaskOutcome(f"t{i}", sample, {key: float(v)}) for i, v in enumerate(values)))


def test_a_share_of_thirty_tests_has_a_wilson_interval_about_a_third_wide():
    assert stats.wilson(20, 30).bounds_text(2) == "[0.49, 0.81]"
    assert stats.wilson(23, 30).bounds_text(2) == "[0.59, 0.88]"
    zero = interval(_row([0] * 30), Mean("E"))
    assert (zero.value, zero.low, zero.method) == (0.0, 0.0, "wilson") and 0.1 < zero.high < 0.12


def test_one_question_of_difference_is_no_evidence_however_the_questions_pair():
    base = [1, 1, 1] + [0] * 27
    for learned in ([1, 1, 1, 1] + [0] * 26, [0, 0, 0, 1, 1, 1, 1] + [0] * 23):  # 4 against 3, nested or not
        found = difference(_row(learned), _row(base), Mean("E"))
        assert found.test == "exact McNemar" and found.value == pytest.approx(1 / 30)
        assert found.p_value == 1.0 if sum(learned[:3]) == 3 else found.p_value > 0.7
        assert not found.holds() and found.low <= 0 <= found.high


def test_a_large_paired_gain_holds_and_its_mark_says_so():
    found = difference(_row([1] * 20 + [0] * 10), _row([0] * 28 + [1] * 2), Mean("E"))
    assert found.holds() and found.mark == "*" and found.text().endswith("*")
    # 22 discordant tests, 2 of them the other way: twice the binomial tail
    assert found.p_value == pytest.approx(binomtest(2, 22, 0.5).pvalue) == pytest.approx(2 * (1 + 22 + 231) / 2 ** 22)


def test_moves_are_clustered_by_game_as_if_every_move_were_a_row_with_its_game_as_cluster():
    games = [(14, 7), (19, 15), (20, 12), (15, 6)]  # (moves, optimal moves)
    row = Outcomes(tuple(TaskOutcome(f"g{i}", 0, {"decisions": d, "optimal_calls": o}) for i, (d, o) in
                         enumerate(games)))
    found = interval(row, Ratio("optimal_calls", "decisions", scale=100.0))
    moves = np.concatenate([[1.0] * o + [0.0] * (d - o) for d, o in games])
    groups = np.concatenate([[i] * d for i, (d, _) in enumerate(games)])
    fit = sm.OLS(moves, np.ones(len(moves))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    low, high = fit.conf_int(alpha=0.05)[0] * 100
    assert found.value == pytest.approx(100 * 40 / 68)
    assert (found.low, found.high) == (pytest.approx(low), pytest.approx(high))
    assert found.clusters == 4 and found.method == "cluster-robust t" and found.high - found.low > 30


def test_a_share_keeps_its_interval_within_its_bounds_however_few_clusters():
    pooled = Outcomes.pooled([_row([1, 1, 0], sample=1), _row([0, 0, 0], sample=2)])
    found = interval(pooled, Mean("E"))
    assert found.clusters == 2 and found.method == "cluster-robust t" and (found.low, found.high) == (0.0, 1.0)
    assert sample_values(pooled, Mean("E")) == {1: pytest.approx(2 / 3), 2: 0.0}


def test_pooled_samples_are_clusters_so_paired_tests_cannot_reach_far_on_three():
    learned = Outcomes.pooled([_row([1] * 10, sample=s) for s in (1, 2, 3)])
    base = Outcomes.pooled([_row([0] * 10, sample=s) for s in (1, 2, 3)])
    found = difference(learned, base, Mean("E"))
    assert found.test == "paired permutation" and found.clusters == 3 and found.n == 30
    assert found.p_value == pytest.approx(0.25) == stats.smallest_p_value(found.test, 3) and not found.holds()


def test_a_continuous_score_is_compared_by_permutation_against_scipys_own_sign_flip_test():
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(5)
    learned, base = rng.uniform(0.3, 1, 12), rng.uniform(0, 0.7, 12)
    found = difference(_row(learned, key="P"), _row(base, key="P"), Mean("P"))
    expected = scipy_stats.permutation_test((learned - base,), np.mean, permutation_type="samples",
                                            n_resamples=9999, rng=np.random.default_rng(0))
    assert found.test == "paired permutation" and found.p_value == pytest.approx(expected.pvalue)
    assert found.value == pytest.approx(np.mean(learned - base))


def test_holm_adjusts_a_tables_p_values_together():
    differences = [stats.Difference(0.1, 0, 0.2, p, 30, 30, "exact McNemar") for p in (0.01, 0.02, 0.04)]
    untested = stats.Difference(math.nan, math.nan, math.nan, math.nan, 0, 0, "no shared tasks")
    adjusted = stats.holm([*differences, untested])
    assert [d.p_adjusted for d in adjusted[:3]] == pytest.approx([0.03, 0.04, 0.04])
    assert [d.holds() for d in adjusted] == [True, True, True, False]
    assert math.isnan(adjusted[3].p_adjusted)
    assert not stats.holm([stats.Difference(0.1, 0, 0.2, 0.03, 30, 30, "t")] * 2)[0].holds()


def test_holm_adjusted_p_values_are_statsmodels(monkeypatch):
    """Against statsmodels on lists drawn at random, with ties, zeros, ones and adjustments clipped at 1. Each call
    of statsmodels' collects the garbage (a second in a worker that has run many tests); that collection is no part
    of the adjustment compared, so it is skipped here."""
    import gc

    from statsmodels.stats.multitest import multipletests

    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)

    drawn = np.random.default_rng(7)
    lists = [[0.01, 0.04, 0.03, 0.2], [0.5, 0.5, 0.5], [0.0, 1.0, 0.02], [0.3]]
    lists += [list(drawn.choice([0.0, 0.001, 0.01, 0.05, 0.2, 0.5, 1.0, *drawn.random(4)], size=size))
              for size in drawn.integers(1, 13, size=30)]
    for p_values in lists:
        assert stats.holm_adjusted(p_values) == pytest.approx(list(multipletests(p_values, method="holm")[1]))


def test_elo_like_statistics_get_a_cluster_bootstrap_interval():
    def mean_score(metrics):
        return float(np.mean([m["game_score"] for m in metrics]))

    rule = Statistic(mean_score, requires="game_score")
    row = Outcomes(tuple(TaskOutcome(f"g{i}", 0, {"game_score": s}) for i, s in enumerate([0, 0.5, 1, 1, 0, 0.5])))
    found = interval(row, rule)
    assert found.method == "cluster bootstrap" and found.value == 0.5 and found.low < 0.5 < found.high
    other = Outcomes(tuple(TaskOutcome(f"g{i}", 0, {"game_score": 0.0}) for i in range(6)))
    assert difference(row, other, rule).value == pytest.approx(0.5)


def test_the_share_of_the_base_gold_gap_a_row_recovers():
    base, gold = _row([0] * 30), _row([1] * 27 + [0] * 3)
    learned = _row([1] * 18 + [0] * 12)
    share = gap_share(learned, base, gold, Mean("E"))
    assert share.value == pytest.approx(18 / 27) and share.low < share.value < share.high
    assert not gap_share(learned, base, base, Mean("E")).known  # no gap to recover


def test_power_the_paper_gain_on_browsecomp_needs_thousands_of_questions():
    assert stats.detectable_difference(30, 0.1) == pytest.approx(0.30, abs=0.01)
    needed = stats.tasks_needed(0.188, 0.015)
    assert 10_000 < needed < 12_000
    assert stats.tasks_needed(0.188, 0.3) < 50
    assert stats.detectable_mean_difference(12, 10.0) == pytest.approx(8.9, abs=0.3)
    assert stats.units_needed(5.0, 10.0) == 34


def test_outcomes_round_trip_through_json_with_their_samples():
    row = Outcomes((TaskOutcome("a", 3, {"E": 1.0, "calls": 2}),))
    assert Outcomes.from_json(row.to_json()) == row
    assert Outcomes.from_json([{"task": "a", "metrics": {"E": 1, "parse_error": "x"}}], sample=7).tasks[0] == \
        TaskOutcome("a", 7, {"E": 1.0})
