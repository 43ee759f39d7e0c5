"""Chess metrics: % optimal tool calls (with a tie rule) and bootstrapped streaming Elo.

Optimal tool. Every tool's move in a position is scored by a reference search, in centipawns
for the side to move (a mate in n counts as +-(MATE_CP - n)). A tool is optimal when its move
is within ``TIE_MARGIN_CP`` of the best tool's move. The margin matters: depth-2/4/8 engines
often suggest different moves of equal worth (and the same move ~36% of the time); 25
centipawns is about the reference search's own noise. The margin is in centipawns, not in
expected score, on purpose: in a lost (or won) position every move has an expected score near
0 (or 1), so an expected-score margin would call a blunder that turns -3 into -9 pawns a tie.

Streaming Elo. The agent starts at 1200; after each game against an opponent of fixed rating,
``R += K * (S - E)`` with K = 32 and ``E = 1 / (1 + 10 ** ((R_opp - R) / 400))``. The final
rating depends on game order, so it is averaged over seeded random permutations of the games.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

from otbench.evals.outcomes import Mean, MetricRule, Ratio, Statistic

TIE_MARGIN_CP = 25
START_RATING = 1200.0
K_FACTOR = 32.0
PERMUTATIONS = 1000
MATE_CP = 10_000              # a mate in n is scored +-(MATE_CP - n) centipawns
MATE_THRESHOLD = MATE_CP - 1000
_LICHESS_SLOPE = 0.00368208  # Lichess's centipawn -> win-probability curve


def is_mate(centipawns: int) -> bool:
    return abs(centipawns) >= MATE_THRESHOLD


def expected_score(centipawns: int) -> float:
    """Expected game score (0..1) of an evaluation in centipawns (mates encoded as above are 0 or 1)."""
    if is_mate(centipawns):
        return 1.0 if centipawns > 0 else 0.0
    return 1.0 / (1.0 + math.exp(-_LICHESS_SLOPE * centipawns))


def optimal_tools(centipawns: dict[str, int], margin: int = TIE_MARGIN_CP) -> set[str]:
    """Tools whose move is within ``margin`` centipawns of the best tool's move (never empty)."""
    best = max(centipawns.values())
    return {tool for tool, value in centipawns.items() if value >= best - margin}


def elo_expected(rating: float, opponent: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))


def elo_update(rating: float, opponent: float, score: float, k: float = K_FACTOR) -> float:
    """The rating after one game with result ``score`` (1 win, 0.5 draw, 0 loss)."""
    return rating + k * (score - elo_expected(rating, opponent))


def streaming_elo(games: Sequence[tuple[float, float]], start: float = START_RATING, k: float = K_FACTOR) -> float:
    """The rating after playing ``games`` ((opponent rating, score) pairs) in this order."""
    rating = start
    for opponent, score in games:
        rating = elo_update(rating, opponent, score, k)
    return rating


def bootstrapped_elo(games: Sequence[tuple[float, float]], permutations: int = PERMUTATIONS, seed: int = 0,
                     start: float = START_RATING, k: float = K_FACTOR) -> float:
    """Mean final streaming Elo over ``permutations`` seeded shuffles of the game order."""
    if not games:
        return start
    rng = random.Random(seed)
    order = list(games)
    total = 0.0
    for _ in range(permutations):
        rng.shuffle(order)
        total += streaming_elo(order, start, k)
    return total / permutations


RESAMPLED_PERMUTATIONS = 20
"""Game orders averaged per resample when an Elo interval is bootstrapped (thousands of resamples)."""


def _games(metrics: Sequence[Mapping[str, float]]) -> list[tuple[float, float]]:
    return [(m["opponent_elo"], m["game_score"]) for m in metrics if "game_score" in m]


METRIC_RULES: dict[str, MetricRule] = {
    "optimal_pct": Ratio("optimal_calls", "decisions", scale=100.0),
    "failed_move_pct": Ratio("failed_moves", "decisions", scale=100.0),
    "elo": Statistic(lambda metrics: bootstrapped_elo(_games(metrics)), requires="game_score",
                     resampled=lambda metrics: bootstrapped_elo(_games(metrics), RESAMPLED_PERMUTATIONS)),
    "game_score": Mean("game_score"),
    "eval_change_cp": Mean("eval_change_cp"),
}
"""How each chess metric is made from per-game scores (:mod:`otbench.evals.outcomes`): shares of moves are ratios of
per-game counts, so moves are clustered by the game they were played in."""
