"""Chess metrics on known numbers: Elo updates, streaming and bootstrapped Elo, the tie rule."""

import pytest

from otbench.envs.chess.metrics import (
    MATE_CP,
    bootstrapped_elo,
    elo_expected,
    elo_update,
    expected_score,
    optimal_tools,
    streaming_elo,
)


def test_elo_update_follows_the_formula():
    assert elo_expected(1200, 1200) == 0.5
    assert elo_update(1200, 1200, 1.0) == pytest.approx(1216.0)
    assert elo_update(1200, 1200, 0.5) == pytest.approx(1200.0)
    # 400 points weaker opponent: expected 10/11, a draw costs 32 * (0.5 - 10/11)
    assert elo_update(1200, 800, 0.5) == pytest.approx(1200 + 32 * (0.5 - 10 / 11))


def test_streaming_elo_applies_games_in_order():
    games = [(1200, 1.0), (1200, 0.0)]
    after_win = 1216.0
    expected = after_win + 32 * (0.0 - elo_expected(after_win, 1200))
    assert streaming_elo(games) == pytest.approx(expected)
    assert streaming_elo([]) == 1200.0


def test_bootstrap_averages_over_orders_and_is_seeded():
    games = [(800, 1.0), (2400, 0.0), (1600, 0.5)]
    orders = [streaming_elo(p) for p in __import__("itertools").permutations(games)]
    value = bootstrapped_elo(games, permutations=1000, seed=3)
    assert min(orders) <= value <= max(orders)
    assert value == pytest.approx(sum(orders) / len(orders), abs=0.5)  # 1000 draws cover the 6 orders evenly
    assert bootstrapped_elo(games, seed=3) == bootstrapped_elo(games, seed=3)
    same = [(1600, 1.0)] * 4
    assert bootstrapped_elo(same, permutations=10) == pytest.approx(streaming_elo(same))
    assert bootstrapped_elo([]) == 1200.0


def test_expected_score_is_monotone_with_mates_at_the_ends():
    assert expected_score(0) == 0.5
    assert 0.5 < expected_score(50) < expected_score(300) < 1.0
    assert expected_score(MATE_CP - 3) == 1.0 and expected_score(-(MATE_CP - 3)) == 0.0


def test_tie_rule_counts_every_tool_within_the_margin_of_the_best():
    centipawns = {"engine_1": 60, "engine_2": 40, "engine_3": 20}
    assert optimal_tools(centipawns) == {"engine_1", "engine_2"}
    assert optimal_tools(centipawns, margin=0) == {"engine_1"}
    assert optimal_tools({"a": -30, "b": -30}) == {"a", "b"}  # same move, same value
    # lost either way, but one move loses far more: not a tie (an expected-score margin would say it is)
    assert optimal_tools({"a": -300, "b": -900}) == {"a"}
    assert optimal_tools({"a": MATE_CP - 3, "b": MATE_CP - 5, "c": 900}) == {"a", "b"}  # both mate
