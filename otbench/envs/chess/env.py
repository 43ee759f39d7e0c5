"""Chess: every move, pick one of several opaque engines; its suggestion is played for you.

The environment drives the game. At each of the agent's moves it asks the agent once, with the
board (the side to move, the piece count, the FEN) and its recent tool calls with their outcomes;
the agent makes one tool call with the position's FEN and the tool's move is played. Then the
opponent replies. Only the first call of a reply is used.

A reply without a usable call (no call, a call whose shape did not fit, an unknown tool, a bad or
missing FEN, a suggestion that is illegal in the current position) is a failed move: a seeded
random legal move is played instead, and the move never counts as optimal.

Every move is scored: each tool's move in the position is computed, the distinct moves are
searched by a reference Stockfish search (depth 12, one multi-PV search restricted to them),
and the tools whose move is within 25 centipawns of the best tool's move are the
optimal ones (tie rule: :mod:`otbench.envs.chess.metrics`). The position itself is also searched, so
each step records the evaluation before the move and after it (the dense reward).

Tasks. Positions come from the committed data file (2000, stratified by phase and evaluation,
10% train / 90% test).

- ``train`` (exploration for offline learning): from each train position, a 10-move partial
  game against Stockfish at depth 2. The editor sees every move with its evaluation change, the
  start and end evaluations and how many moves used an optimal tool; ``success`` means the
  agent held its position (end expected score at most 0.05 below the start's).
- ``test``: from each test position, a full game (at most ``max_moves`` agent moves, default
  120, then a draw) against one of three rated opponents, rotating by position, so one run
  gives both metrics: % optimal tool calls over every move, and streaming Elo over the games.
  ``success`` means the game was not lost.

The agent plays the side to move in the position.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import chess

from otbench.core.calls import CallResult, ToolCall
from otbench.core.faults import Episode, StateController, call_episode, episode
from otbench.core.trajectory import Trajectory
from otbench.envs.base import Agent, Closing
from otbench.envs.chess.engine import EnginePool, find_stockfish, position_key, seeded_random_move
from otbench.envs.chess.metrics import MATE_CP, METRIC_RULES, bootstrapped_elo, expected_score, is_mate, optimal_tools
from otbench.envs.chess.players import EXPLORATION_OPPONENT, OPPONENT_POOL, Opponent
from otbench.envs.chess.positions import Position, load_positions, phase_label, piece_count
from otbench.envs.chess.settings import DEFAULT_SETTING, PHASE_NAMED, SETTINGS
from otbench.envs.chess.tools import FEN_PARAMETER, ChessTool, chess_tools, documented_tools
from otbench.errors import ConfigError
from otbench.modules.agent import AgentReply
from otbench.modules.reference_agents import OracleAgent
from otbench.modules.tool_docs import Toolbox

TOOLSET_ID = "chess"          # the one toolset all tasks share (offline learning)
REFERENCE_DEPTH = 12          # the judge's search depth: at least every tool's own depth but the specialists'
EXPLORATION_MOVES = 10
DEFAULT_MAX_MOVES = 120
RECENT_CALLS = 5
HOLD_MARGIN = 0.05            # exploration success: end expected score >= start's - this
CP_CLAMP = 1000               # evaluation changes are averaged with scores clamped to +-10 pawns
NO_CALL = "no_call"
_FEN_LINE = re.compile(r"^FEN: (.+)$", re.MULTILINE)

CHESS_INSTRUCTIONS = """\
You play chess by choosing tools. Every tool takes the current position as a FEN string and \
suggests a move; the move of the tool you call is played for you. Make exactly one tool call \
per move, passing the FEN you are given unchanged. The tools differ in ways their documentation \
may not say: pick the tool most likely to give the strongest move in this position, using what \
the documentation and your recent results (evaluations after your moves) tell you. When tools \
look alike or are unknown, trying one you have not used lately is how you learn about it."""


@dataclass(frozen=True)
class ChessTask:
    """A game to play from a position: ``moves`` agent moves at most, against ``opponent``."""

    id: str
    position: Position
    kind: str  # "exploration" (a partial game scored by evaluation) or "game" (a full, rated game)
    max_moves: int
    opponent: Opponent

    @property
    def question(self) -> str:
        side = "White" if self.position.board().turn == chess.WHITE else "Black"
        length = f"{self.max_moves} moves" if self.kind == "exploration" else f"a full game (at most {self.max_moves} moves)"
        return f"Play {length} as {side} against {self.opponent.name}, from FEN {self.position.fen}"


@dataclass(frozen=True)
class Decision:
    """Every tool's move in one position, judged by the reference search (side to move's view)."""

    moves: dict[str, chess.Move]
    centipawns: dict[str, int]      # after each tool's move
    position_cp: int                # the position before any move
    optimal: frozenset[str]


@dataclass(frozen=True)
class MoveRecord:
    """One agent move as the next prompt and the editor see it."""

    number: int
    tool: str
    san: str
    uci: str
    pieces: int
    cp_before: int
    cp_after: int
    optimal: bool
    failure: str | None
    reply_san: str | None

    @property
    def change_cp(self) -> int:
        """The evaluation change for the agent, each side clamped to +-10 pawns."""
        return _clamp(self.cp_after) - _clamp(self.cp_before)

    def describe(self) -> str:
        """One compact line (prompts carry many of them): move, material, evaluation change, reply."""
        change = self.change_cp
        played = (f"played {self.san} ({self.uci})" if self.failure is None
                  else f"no usable call ({self.failure}), random move {self.san} ({self.uci}) played")
        reply = f"; opponent replied {self.reply_san}" if self.reply_san else "; game over"
        return (f"move {self.number}, {self.pieces} pieces: {played}; eval for the agent "
                f"{_pawns(self.cp_before)} -> {_pawns(self.cp_after)} ({change:+d} cp){reply}")


def _clamp(cp: int) -> int:
    return max(-CP_CLAMP, min(CP_CLAMP, cp))


def _pawns(cp: int) -> str:
    if is_mate(cp):
        distance = MATE_CP - abs(cp)
        if distance == 0:
            return "checkmate, the agent won" if cp > 0 else "checkmate, the agent lost"
        return f"mate in {distance} for {'the agent' if cp > 0 else 'the opponent'}"
    return f"{cp / 100:+.2f}"


def diagram(board: chess.Board) -> str:
    """The board as text, White at the bottom, uppercase White, with rank and file labels."""
    rows = [f"{rank + 1} | " + " ".join((board.piece_at(chess.square(file, rank)) or ".").__str__() for file in range(8))
            for rank in range(7, -1, -1)]
    return "\n".join([*rows, "    a b c d e f g h"])


class ChessEnvironment(Closing):
    """Chess under one setting (``phase``, ``skill`` or ``elo``: which engines). Close it (or use ``with``) to stop the engines.

    ``engine_cache`` is a file that keeps engine results across runs (in memory only when None).
    ``board_diagram`` also shows the board as text under the FEN. It is off by default: the embedded agent
    copied the diagram into the FEN argument in 94 of 339 test moves, and each such move failed.
    ``phase_named`` also says which game phase the piece count puts the position in ("so the game is in the
    middlegame (16-27 pieces)"), under the benchmark's own phase definition. A 1.5B agent does not place a
    count within the ranges its docs give; it does match a phase's name. Every tool set sees it, and it says
    nothing about which tool suits which phase.
    """

    name = "chess"
    primary_metric = "optimal_pct"
    metric_names = ("optimal_pct", "elo", "game_score", "eval_change_cp", "failed_move_pct")
    metric_rules = METRIC_RULES
    """Shares of moves are ratios of per-game counts: a game's moves are one cluster (:mod:`otbench.evals.outcomes`)."""
    learning = "offline"
    one_reply = False
    agent_instructions = CHESS_INSTRUCTIONS
    faults: StateController | None = None
    """Injects failures into the tools' suggestions when set (:mod:`otbench.core.faults`); a faulted call is a
    failed move (a seeded random move is played), a damaged suggestion one that may not be a move."""

    def __init__(
        self, *, setting: str = DEFAULT_SETTING, positions: list[Position] | None = None,
        max_moves: int = DEFAULT_MAX_MOVES, exploration_moves: int = EXPLORATION_MOVES, stockfish: str | None = None,
        workers: int = 1, cache_size: int = 50_000, engine_cache: Path | None = None, board_diagram: bool = False,
        phase_named: bool = PHASE_NAMED,
    ) -> None:
        if setting not in SETTINGS:
            raise ConfigError(f"unknown chess setting {setting!r}; choose from {', '.join(SETTINGS)}")
        self.setting = setting
        self.max_moves = max_moves
        self.exploration_moves = exploration_moves
        self.board_diagram = board_diagram
        self.phase_named = phase_named
        self._positions = positions if positions is not None else load_positions()
        self._tools: dict[str, ChessTool] = {tool.name: tool for tool in chess_tools(setting)}
        self._pool = EnginePool(find_stockfish(stockfish), size=workers, cache_path=engine_cache)
        self._decisions: OrderedDict[str, Decision] = OrderedDict()
        self._cache_size = cache_size
        self._cache_lock = threading.Lock()

    # -- the Environment interface -------------------------------------------------------------
    def tasks(self, split: str = "test") -> list[ChessTask]:
        if split == "train":
            return [ChessTask(f"explore-{p.id}", p, "exploration", self.exploration_moves, EXPLORATION_OPPONENT)
                    for p in self._positions if p.split == "train"]
        if split == "test":
            test = [p for p in self._positions if p.split == "test"]
            return [ChessTask(f"game-{p.id}", p, "game", self.max_moves, OPPONENT_POOL[index % len(OPPONENT_POOL)])
                    for index, p in enumerate(test)]
        raise ConfigError(f"unknown split {split!r}; chess has train and test")

    def toolbox(self, docs: str | None = None) -> Toolbox:
        if docs not in (None, "gold"):
            raise ConfigError(f"chess docs are base or gold, not {docs!r}")
        return Toolbox({TOOLSET_ID: documented_tools(self.setting, gold=docs == "gold")},
                       meta={"env": self.name, "setting": self.setting, "docs": docs or "base"})

    def toolset_of(self, task: ChessTask) -> str:
        return TOOLSET_ID

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        """One call on the position its FEN names, outside any game: the move, in UCI notation, with the
        outcome signal a game move gets (the evaluation change it makes, in pawns) and the position's phase."""
        return call_episode(self.faults, toolset, call.name).run(call, lambda: self._suggestion(call, None, None))

    def rollout(self, agent: Agent, toolbox: Toolbox, task: ChessTask) -> Trajectory:
        board = task.position.board()
        tools = toolbox.toolset(TOOLSET_ID)
        history: list[MoveRecord] = []
        steps: list[CallResult] = []
        replies: list[str] = []
        failures: list[str] = []
        attempt = episode(self.faults, task.id)
        while len(history) < task.max_moves and not board.is_game_over(claim_draw=True):
            reply: AgentReply = agent(question=self.move_question(task, board, history), tools=tools)
            replies.append(reply.raw)
            decision = self.decision(board)
            call, move, failure, injected = self._execute(reply, board, decision, attempt)
            optimal = failure is None and call.name in decision.optimal and move == decision.moves[call.name]
            if move is None:
                failures.append(failure or "no move")
                move = seeded_random_move("failed-move", board)
            cp_after = self._centipawns_after(board, move, decision)
            san, uci, pieces = board.san(move), move.uci(), piece_count(board)
            situation = phase_label(board)
            board.push(move)
            reply_san = None
            if not board.is_game_over(claim_draw=True):
                with self._pool.engine() as engine:
                    answer = task.opponent.player.choose(board, engine)
                reply_san = board.san(answer)
                board.push(answer)
            record = MoveRecord(len(history) + 1, call.name, san, uci, pieces, decision.position_cp, cp_after, optimal,
                                failure, reply_san)
            history.append(record)
            steps.append(CallResult(call, True, output=record.describe(), situation=situation,
                                    value=record.change_cp / 100, injected=injected)
                         if failure is None else CallResult(call, False, error=record.describe(), situation=situation,
                                                            injected=injected))
        return self._score(task, board, history, steps, replies, failures)

    def summarise(self, trajectories: list[Trajectory]) -> dict[str, float]:
        decisions = sum(t.metrics["decisions"] for t in trajectories)
        summary = {
            "optimal_pct": 100.0 * sum(t.metrics["optimal_calls"] for t in trajectories) / decisions if decisions else 0.0,
            "failed_move_pct": 100.0 * sum(t.metrics["failed_moves"] for t in trajectories) / decisions if decisions else 0.0,
        }
        games = [(t.metrics["opponent_elo"], t.metrics["game_score"]) for t in trajectories if "game_score" in t.metrics]
        if games:
            summary["elo"] = bootstrapped_elo(games)
            summary["game_score"] = sum(score for _, score in games) / len(games)
        changes = [t.metrics["eval_change_cp"] for t in trajectories if "eval_change_cp" in t.metrics]
        if changes:
            summary["eval_change_cp"] = sum(changes) / len(changes)
        summary["n"] = float(len(trajectories))
        return summary

    def oracle_agent(self, tasks: list[ChessTask]) -> OracleAgent:
        """Calls, in every position it is shown, a tool judged optimal there (tasks need not be known)."""
        order = list(self._tools)

        def best_call(question: str) -> list[ToolCall]:
            found = _FEN_LINE.search(question)
            if found is None:
                raise ValueError("the oracle was asked about a question without a FEN line")
            fen = found.group(1).strip()
            optimal = self.decision(chess.Board(fen)).optimal
            return [ToolCall(next(name for name in order if name in optimal), {FEN_PARAMETER: fen})]

        return OracleAgent(best_call)

    # -- chess specifics -------------------------------------------------------------------------
    def move_question(self, task: ChessTask, board: chess.Board, history: list[MoveRecord]) -> str:
        side = "White" if board.turn == chess.WHITE else "Black"
        phase = f", so the game is in the {phase_label(board)}" if self.phase_named else ""
        lines = [
            (f"You play {side} against {task.opponent.name}. Your move {len(history) + 1} of at most "
             f"{task.max_moves}; {side} to move; {piece_count(board)} pieces on the board (kings and pawns "
             f"included){phase}."),
            f"FEN: {board.fen()}",
        ]
        if self.board_diagram:
            lines += ["Board (uppercase = White, White at the bottom):", diagram(board)]
        if history:
            lines.append("Your recent tool calls:")
            lines.extend(f"- {record.tool}: {record.describe()}" for record in history[-RECENT_CALLS:])
        lines.append("Call exactly one tool with the FEN above; the move it suggests is played for you.")
        return "\n".join(lines)

    def decision(self, board: chess.Board) -> Decision:
        """Every tool's move in ``board`` and which are optimal (cached: it is deterministic)."""
        key = position_key(board)
        with self._cache_lock:
            if key in self._decisions:
                self._decisions.move_to_end(key)
                return self._decisions[key]
        side = board.turn
        with self._pool.engine() as engine:
            moves = {name: tool.player.choose(board, engine) for name, tool in self._tools.items()}
            scores = engine.evaluate_moves(board, sorted(set(moves.values()), key=chess.Move.uci), REFERENCE_DEPTH)
            position = engine.evaluate(board, REFERENCE_DEPTH).pov(side)
        centipawns = {name: scores[move].pov(side).score(mate_score=MATE_CP) for name, move in moves.items()}
        decision = Decision(moves, centipawns, position.score(mate_score=MATE_CP), frozenset(optimal_tools(centipawns)))
        with self._cache_lock:
            self._decisions[key] = decision
            if len(self._decisions) > self._cache_size:
                self._decisions.popitem(last=False)
        return decision

    def _centipawns_after(self, board: chess.Board, move: chess.Move, decision: Decision) -> int:
        for name, tool_move in decision.moves.items():
            if tool_move == move:
                return decision.centipawns[name]
        with self._pool.engine() as engine:
            score = engine.evaluate_moves(board, [move], REFERENCE_DEPTH)[move]
        return score.pov(board.turn).score(mate_score=MATE_CP)

    def _execute(self, reply: AgentReply, board: chess.Board, decision: Decision,
                 attempt: Episode) -> tuple[ToolCall, chess.Move | None, str | None, str | None]:
        """The call used, the move it yields or why it yields none (model output is untrusted), and the kind
        of fault injected into it, if any."""
        if not reply.calls:
            return ToolCall(NO_CALL), None, f"no tool call: {reply.error or 'empty reply'}", None
        call = reply.calls[0]
        result = attempt.run(call, lambda: self._suggestion(call, board, decision))
        if not result.ok:
            return call, None, result.error, result.injected
        try:  # a damaged suggestion (an injected fault) may not be a move at all
            move = chess.Move.from_uci(str(result.output))
        except ValueError:
            return call, None, f"{call.name} suggested {result.output!r}, which is not a move", result.injected
        if move not in board.legal_moves:
            return call, None, f"{call.name} suggested {move.uci()}, which is illegal here", result.injected
        return call, move, None, result.injected

    def _suggestion(self, call: ToolCall, board: chess.Board | None, decision: Decision | None) -> CallResult:
        """The move ``call``'s tool suggests for the FEN it passes (UCI notation), or the error a real
        function would raise; in a game (``board``), a suggestion illegal on the board is an error."""
        read = self._read_call(call)
        if isinstance(read, str):
            return CallResult(call, False, error=read)
        tool, given = read
        if board is None:
            outside = self.decision(given)
            change = _clamp(outside.centipawns[call.name]) - _clamp(outside.position_cp)
            return CallResult(call, True, output=outside.moves[call.name].uci(), situation=phase_label(given),
                              value=change / 100)
        if decision is not None and position_key(given) == position_key(board):
            return CallResult(call, True, output=decision.moves[call.name].uci())
        with self._pool.engine() as engine:
            move = tool.player.choose(given, engine)
        if move not in board.legal_moves:
            return CallResult(call, False, error=f"{call.name} suggested {move.uci()}, which is illegal here: the "
                                                 f"FEN passed is not the current position")
        return CallResult(call, True, output=move.uci())

    def _read_call(self, call: ToolCall) -> tuple[ChessTool, chess.Board] | str:
        """The tool and position a call names, or (a string) the error a real function would raise."""
        if call.problem is not None:
            return call.refusal()
        tool = self._tools.get(call.name)
        if tool is None:
            return f"NameError: no tool named {call.name!r}"
        unexpected = sorted(set(call.arguments) - {FEN_PARAMETER})
        if unexpected:
            return f"TypeError: {call.name}() got an unexpected argument {unexpected[0]!r}"
        fen = call.arguments.get(FEN_PARAMETER)
        if not isinstance(fen, str):
            problem = "missing 1 required argument: 'fen'" if fen is None else "argument 'fen' must be a FEN string"
            return f"TypeError: {call.name}() {problem}"
        try:
            given = chess.Board(fen)
        except ValueError as exc:
            return f"ValueError: {call.name}(): invalid FEN: {exc}"
        if not given.is_valid() or given.is_game_over(claim_draw=False):
            return f"ValueError: {call.name}(): no move to suggest in that position"
        return tool, given

    def _score(self, task: ChessTask, board: chess.Board, history: list[MoveRecord], steps: list[CallResult],
               replies: list[str], failures: list[str]) -> Trajectory:
        agent_side = task.position.board().turn
        optimal_calls = sum(record.optimal for record in history)
        metrics: dict[str, float] = {
            "decisions": float(len(history)),
            "optimal_calls": float(optimal_calls),
            "optimal_pct": 100.0 * optimal_calls / len(history) if history else 0.0,
            "failed_moves": float(len(failures)),
        }
        tally = f"{optimal_calls}/{len(history)} moves used an optimal tool"
        if task.kind == "exploration":
            with self._pool.engine() as engine:
                end = engine.evaluate(board, REFERENCE_DEPTH).pov(agent_side)
            start_cp = history[0].cp_before if history else end.score(mate_score=MATE_CP)
            end_cp = end.score(mate_score=MATE_CP)
            metrics["eval_change_cp"] = float(_clamp(end_cp) - _clamp(start_cp))
            success = expected_score(end_cp) >= expected_score(start_cp) - HOLD_MARGIN
            feedback = (f"Eval for the agent {_pawns(start_cp)} at the start, {_pawns(end_cp)} after "
                        f"{len(history)} moves ({metrics['eval_change_cp']:+.0f} cp); {tally}.")
        else:
            outcome = board.outcome(claim_draw=True)
            score = 0.5 if outcome is None or outcome.winner is None else float(outcome.winner == agent_side)
            metrics.update({"game_score": score, "opponent_elo": float(task.opponent.rating)})
            success = score >= 0.5
            ending = outcome.termination.name.lower() if outcome else f"move cap of {task.max_moves} reached"
            result = {1.0: "won", 0.5: "drew", 0.0: "lost"}[score]
            feedback = (f"The agent {result} against {task.opponent.name} (rated {task.opponent.rating}) "
                        f"after {len(history)} moves ({ending}); {tally}.")
        parse_error = (f"{len(failures)} of {len(history)} moves had no usable call; first: {failures[0]}"
                       if failures else None)
        return Trajectory(task_id=task.id, toolset=TOOLSET_ID, question=task.question, steps=steps,
                          reply="\n".join(replies), parse_error=parse_error, metrics=metrics, success=success,
                          feedback=feedback)

    def close(self) -> None:
        self._pool.close()


