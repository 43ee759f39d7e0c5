"""Move choosers built on Stockfish: the agent's tools and its opponents.

A :class:`Player` searches to a fixed depth, but may instead play a seeded random legal move:
always outside its ``specialty`` phase (the phase specialists), or in a fixed share of positions
(``blunder_rate``, the rated players). Stockfish's ``Skill Level`` cannot be used for weaker
play: it is clock-seeded, and ``UCI_Elo`` bottoms out at 1350 in Stockfish 15.1. Ratings here
are therefore nominal labels of a deterministic (depth, blunder rate) pair, ordered by
strength but not calibrated against human players.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from otbench.envs.chess.engine import Engine, seeded_fraction, seeded_random_move
from otbench.envs.chess.positions import phase_of

# Search depth of the phase specialists in their own phase. The paper uses 16, which costs
# ~0.25-0.9 s per move here (p90 > 2 s under load) and would make a 120-move game take
# minutes of engine time; depth 12 (~0.09 s) is still far stronger than the depth-2 opponent,
# and what the tools are about is the gap between strong in-phase play and random play.
SPECIALIST_DEPTH = 12

# Nominal rating -> (search depth, share of seeded random moves).
STRENGTHS = {
    800: (1, 0.40),
    1200: (2, 0.25),
    1600: (4, 0.12),
    1800: (6, 0.06),
    2400: (10, 0.0),
}


@dataclass(frozen=True)
class Player:
    """A deterministic move chooser. ``label`` also salts its random choices."""

    label: str
    depth: int
    specialty: str | None = None
    blunder_rate: float = 0.0

    def plays_randomly(self, board: chess.Board) -> bool:
        if self.specialty is not None and phase_of(board) != self.specialty:
            return True
        return self.blunder_rate > 0 and seeded_fraction(f"{self.label}:blunder", board) < self.blunder_rate

    def choose(self, board: chess.Board, engine: Engine) -> chess.Move:
        if self.plays_randomly(board):
            return seeded_random_move(self.label, board)
        return engine.best_move(board, self.depth)


def rated_player(rating: int) -> Player:
    depth, blunder_rate = STRENGTHS[rating]
    return Player(f"rated-{rating}", depth, blunder_rate=blunder_rate)


@dataclass(frozen=True)
class Opponent:
    """Who the agent plays: a player and the fixed Elo rating its games are scored against."""

    name: str
    rating: int
    player: Player


# Exploration games are against Stockfish at depth 2, as in the paper (partial games are not
# rated; the rating only labels it).
EXPLORATION_OPPONENT = Opponent("stockfish-depth-2", 1200, Player("stockfish-depth-2", 2))
# Full test games rotate over the paper's three opponent tiers (beginner, intermediate, master).
OPPONENT_POOL = (
    Opponent("beginner", 800, rated_player(800)),
    Opponent("intermediate", 1600, rated_player(1600)),
    Opponent("master", 2400, rated_player(2400)),
)
