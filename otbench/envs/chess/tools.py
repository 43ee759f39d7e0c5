"""The three settings, each a set of engines: identical interfaces (a FEN in, a move out), different hidden behaviour.

Shown names are ``engine_1..N`` in a fixed order that does not follow strength, so the
numbering gives nothing away. The base docs say only what every tool shares; the gold docs
(written for this project) say what each tool really does.
"""

from __future__ import annotations

from dataclasses import dataclass

from otbench.envs.chess.players import SPECIALIST_DEPTH, Player, rated_player
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec

FEN_PARAMETER = "fen"

BASE_DESCRIPTION = "Suggests a chess move for the side to move in the given position."
BASE_RETURNS = "A move."
GOLD_RETURNS = "The suggested move in UCI notation (for example e2e4 or e7e8q) and in SAN."
FEN_DESCRIPTION = "The current position in Forsyth-Edwards Notation (all six fields)."


@dataclass(frozen=True)
class ChessTool:
    """A shown tool name, the player behind it and its true documentation."""

    name: str
    player: Player
    gold: str


def _specialist(name: str, phase: str, when: str) -> ChessTool:
    others = {"opening": "any later phase", "late_endgame": "any earlier phase"}.get(phase, "every other phase")
    text = (f"Phase specialist for the {phase.replace('_', ' ')} ({when}): there it plays a strong engine move "
            f"(Stockfish, depth {SPECIALIST_DEPTH}); in {others} it plays a random legal move. Phase is decided "
            f"by counting all pieces on the board, kings and pawns included.")
    return ChessTool(name, Player(f"{phase}-specialist", SPECIALIST_DEPTH, specialty=phase), text)


def _fixed_depth(name: str, depth: int, verdict: str) -> ChessTool:
    text = (f"Stockfish searching to depth {depth} in every position: {verdict}. It never plays a random move.")
    return ChessTool(name, Player(f"stockfish-depth-{depth}", depth), text)


def _rated(name: str, rating: int, verdict: str) -> ChessTool:
    player = rated_player(rating)
    text = (f"Plays at roughly {rating} Elo strength: Stockfish at depth {player.depth}"
            + (f", but in about {player.blunder_rate:.0%} of positions a random legal move instead" if player.blunder_rate
               else ", never a random move") + f"; {verdict}.")
    return ChessTool(name, player, text)


_TOOLS: dict[str, tuple[ChessTool, ...]] = {
    "phase": (
        _specialist("engine_1", "endgame", "10 to 15 pieces"),
        _specialist("engine_2", "opening", "28 or more pieces"),
        _specialist("engine_3", "late_endgame", "fewer than 10 pieces"),
        _specialist("engine_4", "middlegame", "16 to 27 pieces"),
    ),
    "skill": (
        _fixed_depth("engine_1", 8, "the strongest of these tools, the best choice in any position"),
        _fixed_depth("engine_2", 2, "the weakest of these tools; it misses simple tactics"),
        _fixed_depth("engine_3", 4, "medium strength, between the other two"),
    ),
    "elo": (
        _rated("engine_1", 1800, "the middle tool"),
        _rated("engine_2", 2400, "the strongest tool, the best choice in any position"),
        _rated("engine_3", 1200, "the weakest tool, often blundering"),
    ),
}


def chess_tools(setting: str) -> tuple[ChessTool, ...]:
    return _TOOLS[setting]


def documented_tools(setting: str, *, gold: bool) -> list[DocumentedTool]:
    """Fresh docs of a setting's tools: one generic description (base) or each tool's true behaviour (gold)."""
    return [
        DocumentedTool(
            tool.name,
            description=tool.gold if gold else BASE_DESCRIPTION,
            parameters=[ParameterSpec(FEN_PARAMETER, "string")],
            parameter_descriptions={FEN_PARAMETER: FEN_DESCRIPTION},
            returns=GOLD_RETURNS if gold else BASE_RETURNS,
        )
        for tool in chess_tools(setting)
    ]
