"""The chess environment end to end with the real Stockfish: oracle, failed moves, questions, docs,
the offline ToolObserver loop with scripted LMs, and the commands."""

import json
import re

import chess
import mlflow
import pytest
from scripted_lm import prompt_text, scripted_lm, shown_tools

from otbench import evaluate
from otbench.core.calls import ToolCall
from otbench.envs.chess.env import TOOLSET_ID, ChessEnvironment
from otbench.envs.chess.positions import Position, phase_label
from otbench.errors import ConfigError
from otbench.exits import run_main
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import AgentReply, FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.modules.reference_agents import NullAgent
from otbench.optimizers.toolobserver.knobs import PAPER
from otbench.optimizers.toolobserver.teleprompter import ToolObserver

FENS = {
    "opening": "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "middlegame": "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - 0 10",
    "endgame": "8/5pk1/p3p1p1/1p6/3R4/P3P1P1/5P1P/6K1 b - - 0 28",
    "late_endgame": "8/5pk1/6p1/3R4/5P2/6K1/r5P1/8 b - - 0 40",
}


def _positions() -> list[Position]:
    """Every phase once in each split (decisions are cached, so the second visit is free)."""
    return [Position(f"{split}-{phase}", fen, phase, "equal", 0, "test", split)
            for split in ("train", "test") for phase, fen in FENS.items()]


@pytest.fixture(scope="module")
def envs():
    """One environment per setting for the whole module: engine answers are cached per position."""
    opened = {setting: ChessEnvironment(setting=setting, positions=_positions(), max_moves=2, exploration_moves=2)
              for setting in ("phase", "skill", "elo")}
    yield opened
    for env in opened.values():
        env.close()


@pytest.fixture(scope="module")
def phase_env(envs):
    return envs["phase"]


class FixedAgent:
    """Replies with one given call whatever the position (the FEN is filled in from the question)."""

    def __init__(self, name: str, arguments: dict | None = None) -> None:
        self.name, self.arguments = name, arguments

    def __call__(self, *, question: str, **_) -> AgentReply:
        fen = re.search(r"^FEN: (.+)$", question, re.MULTILINE).group(1)
        call = ToolCall(self.name, self.arguments if self.arguments is not None else {"fen": fen})
        return AgentReply(raw="", calls=[call])


@pytest.mark.parametrize("toolset", ["phase", "skill", "elo"])
def test_the_oracle_scores_perfectly_in_every_toolset(envs, toolset):
    env = envs[toolset]
    tasks = env.tasks("test") + env.tasks("train")[:1]
    trajectories = [env.rollout(env.oracle_agent(tasks), env.toolbox(), task) for task in tasks]
    summary = env.summarise(trajectories)
    assert summary["optimal_pct"] == 100.0 and summary["failed_move_pct"] == 0.0
    assert "elo" in summary and "eval_change_cp" in summary


def test_the_specialist_of_the_phase_is_optimal_and_others_play_randomly(phase_env):
    for phase, fen in FENS.items():
        decision = phase_env.decision(chess.Board(fen))
        specialist = next(t.name for t in phase_env._tools.values() if t.player.specialty == phase)
        assert specialist in decision.optimal


def test_unusable_calls_become_failed_random_moves_without_a_traceback(phase_env):
    task = phase_env.tasks("test")[0]
    cases = {
        "NameError: no tool named 'engine_9'": FixedAgent("engine_9"),
        "missing 1 required argument: 'fen'": FixedAgent("engine_1", {}),
        "unexpected argument 'depth'": FixedAgent("engine_1", {"fen": FENS["opening"], "depth": 3}),
        "invalid FEN": FixedAgent("engine_1", {"fen": "not a position"}),
        "must be a FEN string": FixedAgent("engine_1", {"fen": 42}),
        "no tool call": NullAgent(),
    }
    for message, agent in cases.items():
        trajectory = phase_env.rollout(agent, phase_env.toolbox(), task)
        assert trajectory.metrics["optimal_calls"] == 0 and trajectory.metrics["failed_moves"] == 2, message
        assert message in trajectory.steps[0].error and "random move" in trajectory.steps[0].error
        assert message in trajectory.parse_error


def test_a_call_on_another_position_is_played_only_when_legal_here(phase_env):
    task = next(t for t in phase_env.tasks("test") if t.position.phase == "opening")
    trajectory = phase_env.rollout(FixedAgent("engine_2", {"fen": FENS["late_endgame"]}), phase_env.toolbox(), task)
    assert "illegal here" in trajectory.steps[0].error


def test_the_question_shows_the_board_and_recent_calls_with_outcomes(phase_env):
    task = phase_env.tasks("train")[0]
    questions = []

    def recording_agent(*, question, **_):
        questions.append(question)
        return FixedAgent("engine_4")(question=question)

    trajectory = phase_env.rollout(recording_agent, phase_env.toolbox(), task)
    first, second = questions
    assert f"FEN: {task.position.fen}" in first and "to move" in first
    assert "a b c d e f g h" not in first  # no diagram by default: a small agent passes it as the FEN
    assert "Your recent tool calls:" not in first
    assert "Your recent tool calls:\n- engine_4: move 1" in second and "eval for the agent" in second
    assert re.search(r"^move 1, \d+ pieces: played .+ -> .+ \([+-]\d+ cp\); opponent replied", trajectory.steps[0].output)
    assert "moves used an optimal tool" in trajectory.feedback and "eval_change_cp" in trajectory.metrics


def test_the_board_diagram_is_shown_under_the_fen_only_when_asked_for():
    with ChessEnvironment(setting="phase", positions=_positions(), board_diagram=True) as env:
        task = env.tasks("test")[0]
        question = env.move_question(task, chess.Board(task.position.fen), [])
    fen_line, diagram_title = question.index("FEN: "), question.index("Board (uppercase = White")
    assert fen_line < diagram_title and question.rstrip().endswith("the move it suggests is played for you.")
    assert "    a b c d e f g h" in question


def test_the_phase_is_named_from_the_piece_count_unless_switched_off():
    with ChessEnvironment(setting="phase", positions=_positions()) as env:
        task = env.tasks("test")[0]
        board = chess.Board(task.position.fen)
        named = env.move_question(task, board, [])
        env.phase_named = False
        plain = env.move_question(task, board, [])
    assert f"pieces on the board (kings and pawns included), so the game is in the {phase_label(board)}." in named
    assert "so the game is in" not in plain and "pieces on the board (kings and pawns included)." in plain


def test_games_are_capped_and_scored_as_draws_against_rated_opponents(phase_env):
    task = phase_env.tasks("test")[0]
    trajectory = phase_env.rollout(phase_env.oracle_agent([task]), phase_env.toolbox(), task)
    assert trajectory.metrics["decisions"] == 2 and trajectory.metrics["game_score"] == 0.5
    assert trajectory.metrics["opponent_elo"] in (800.0, 1600.0, 2400.0) and "move cap" in trajectory.feedback
    assert trajectory.success


def test_base_docs_are_opaque_and_gold_docs_tell_the_truth(phase_env):
    base = phase_env.toolbox().toolset(TOOLSET_ID)
    gold = phase_env.toolbox("gold").toolset(TOOLSET_ID)
    assert [t.name for t in base] == ["engine_1", "engine_2", "engine_3", "engine_4"]
    assert len({t.description for t in base}) == 1 and "opening" not in base[0].description
    assert "opening" in gold[1].description and "random" in gold[1].description
    assert all(t.parameters[0].name == "fen" for t in base)
    with pytest.raises(ConfigError):
        phase_env.toolbox("names_only")
    with pytest.raises(ConfigError):
        ChessEnvironment(setting="speed", positions=_positions())


def _docs_aware_chess_agent(messages):
    """Calls the tool documented as strongest, else engine_2 (the depth-2 tool in the skill set)."""
    content = prompt_text(messages)
    fen = re.search(r"^FEN: (.+)$", content, re.MULTILINE).group(1)
    docs = shown_tools(messages)
    strongest = [tool["name"] for tool in docs if "strongest" in tool["description"]]
    return json.dumps({"calls": [{"name": (strongest or ["engine_2"])[0], "arguments": {"fen": fen}}]})


def test_offline_toolobserver_learns_from_evaluations_on_chess(envs):
    prompts = []

    def editor_reply(messages):
        prompts.append(prompt_text(messages))
        return json.dumps({"updates": [{"name": "engine_1", "description": "The strongest tool: deep search."}]})

    env = envs["skill"]
    ledger = TokenLedger()
    agent, editor = FunctionCallingAgent(instructions=env.agent_instructions), DocEditor()
    agent.lm = scripted_lm(_docs_aware_chess_agent, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(editor_reply, ledger=ledger, phase="editor")
    program = ToolAgentProgram(env.toolbox(), agent)
    records = []

    class Recorder:
        def log_iteration(self, record):
            records.append(record)

    program = ToolObserver(env=env, editor=editor, mode="offline", improvements=PAPER, max_iterations=2, batch_size=2, tracker=Recorder(),
                 progress=False).compile(program, trainset=env.tasks("train"))
    batch_prompts = [p for p in prompts if "attempts by an agent" in p]
    assert len(batch_prompts) == 4 and len(prompts) == 6  # 2 batches + 1 merge, twice
    assert "eval for the agent" in batch_prompts[0] and "moves used an optimal tool" in batch_prompts[0]
    assert "Outcome: " in batch_prompts[0]
    assert program.toolbox.get(TOOLSET_ID, "engine_1").description == "The strongest tool: deep search."
    first, second = (r.metrics["optimal_pct"] for r in records)
    assert second >= first and second > 50.0


def _run(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(evaluate.main, argv)
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


def test_evaluate_runs_the_oracle_on_chess_and_logs_both_metrics(capsys):
    code, out, err = _run(["--env", "chess", "--setting", "phase", "--agent", "oracle", "--limit", "2",
                           "--max-moves", "2", "--json", "--quiet"], capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["optimal_pct"] == 100.0 and summary["n"] == 2 and "elo" in summary
    run = mlflow.get_run(summary["run_id"])
    assert run.data.tags["env"] == "chess" and run.data.tags["setting"] == "phase"


@pytest.mark.parametrize("argv, message", [
    (["--env", "chess", "--setting", "speed"], "unknown chess setting 'speed'"),
    (["--env", "chess", "--toolset", "speed"], "unknown chess setting 'speed'"),  # the older name of --setting
    (["--env", "chess", "--setting", "gold"], "unknown chess setting 'gold'"),
    (["--env", "chess", "--setting", "skill", "--toolset", "elo"], "--toolset is the older name of --setting"),
    (["--env", "chess", "--stockfish", "/no/such/engine"], "is not an executable file"),
    (["--env", "chess", "--max-moves", "0"], "expected a number >= 1"),
])
def test_bad_chess_options_are_one_line_errors(argv, message, capsys):
    code, _, err = _run([*argv, "--agent", "oracle"], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_tool_runs_alone_on_any_fen_for_optimizers_that_explore_tools_one_by_one(phase_env):
    played = phase_env.execute(TOOLSET_ID, ToolCall("engine_1", {"fen": FENS["middlegame"]}))
    assert played.ok and chess.Move.from_uci(played.output) in chess.Board(FENS["middlegame"]).legal_moves
    assert phase_env.execute(TOOLSET_ID, ToolCall("engine_1", {"fen": FENS["middlegame"]})) == played
    # with the outcome signal a game move gets, so calls repeated outside a game count like the game's own
    specialist, other = (phase_env.execute(TOOLSET_ID, ToolCall(name, {"fen": FENS["opening"]}))
                         for name in ("engine_2", "engine_3"))
    assert specialist.situation == other.situation == "opening (28 or more pieces)"
    assert specialist.value is not None and other.value is not None and specialist.value > other.value
    failed = phase_env.execute(TOOLSET_ID, ToolCall("engine_1", {"position": FENS["middlegame"]}))
    assert not failed.ok and "unexpected argument 'position'" in failed.error
    assert phase_env.toolset_of(phase_env.tasks("train")[0]) == TOOLSET_ID


def test_improved_offline_toolobserver_writes_each_engine_from_its_results_by_phase(phase_env):
    prompts = []

    def editor_reply(messages):
        prompt = prompt_text(messages)
        prompts.append(prompt)
        name = re.search(r"Tool: (engine_\d)", prompt).group(1)
        return json.dumps({"description": f"{name}: see its phases.", "parameters": {"fen": "the position"}})

    turns = iter(range(10_000))

    def rotating_agent(messages):  # every engine gets moves in several phases
        fen = re.search(r"FEN: (\S+ \S+ \S+ \S+ \S+ \S+)", prompt_text(messages)).group(1)
        return json.dumps({"calls": [{"name": f"engine_{next(turns) % 4 + 1}", "arguments": {"fen": fen}}]})

    ledger = TokenLedger()
    agent, editor = FunctionCallingAgent(instructions=phase_env.agent_instructions), DocEditor()
    agent.lm = scripted_lm(rotating_agent, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(editor_reply, ledger=ledger, phase="editor")
    program = ToolAgentProgram(phase_env.toolbox(), agent)
    program = ToolObserver(env=phase_env, editor=editor, mode="offline", max_iterations=2, progress=False).compile(
        program, trainset=phase_env.tasks("train"))
    assert sorted(re.search(r"Tool: (engine_\d)", p).group(1) for p in prompts) == [
        f"engine_{n}" for n in range(1, 5) for _ in range(2)]  # one call per tool and iteration, no batches
    # counts are kept across iterations: the second has two calls per engine in the same phase
    assert all("Facts read by code" in p and "pieces on the board" not in p for p in prompts)
    # every move was repeated on the other engines: 8 moves of the first iteration give each engine 8 calls
    called = [int(re.search(r"called (\d+) times", p).group(1)) for p in prompts if "Tool: engine_1" in p]
    assert called[0] == 8 and called[1] > called[0]  # and counts are kept across iterations
    assert all("Current description" not in p for p in prompts)  # a generic text to copy is not shown
    assert program.toolbox.get(TOOLSET_ID, "engine_1").description.startswith("engine_1: see its phases.")
    assert program.toolbox.get(TOOLSET_ID, "engine_1").parameter_descriptions["fen"] == "the position"


def test_the_move_question_states_the_piece_count_and_steps_carry_phase_and_evaluation_change(phase_env):
    task = phase_env.tasks("train")[0]
    board = task.position.board()
    assert f"{len(board.piece_map())} pieces on the board" in phase_env.move_question(task, board, [])
    trajectory = phase_env.rollout(FixedAgent("engine_1"), phase_env.toolbox(), task)
    step = trajectory.steps[0]
    assert step.situation.split(" (")[0] in {"opening", "middlegame", "endgame", "late endgame"}
    assert step.value is not None and step.value <= 10.0
