"""The state controller: policies, seeded decisions, what each fault kind does, and its hook in every environment
(BFCL, Chess, BrowseComp, FunctionEnvironment): nothing changes without faults, gold outputs never see one."""

import json
import threading

import dspy
import pytest
from browsecomp_world import tiny_env

from otbench import FunctionEnvironment
from otbench.core.calls import CallResult, ToolCall
from otbench.core.faults import (
    FAULT_KINDS,
    Episode,
    FaultPolicy,
    PolicyError,
    StateController,
    corrupted,
    drifted,
    episode,
    preset,
    read_policy,
)
from otbench.envs.bfcl.data import BfclTest
from otbench.envs.bfcl.env import BfclEnvironment
from otbench.envs.chess.env import ChessEnvironment
from otbench.envs.chess.positions import Position
from otbench.modules.agent import AgentReply

FACTORIAL = {"name": "math_factorial", "description": "n!",
             "parameters": {"type": "dict", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
FIBONACCI = {"name": "get_fibonacci_sequence", "description": "The first n Fibonacci numbers.",
             "parameters": {"type": "dict", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
BFCL_TESTS = [BfclTest(f"exec_simple_{n}", "exec_simple", f"What is {n} factorial?", (FACTORIAL, FIBONACCI),
                       (f"math_factorial(n={n})",), ("exact_match",)) for n in range(3, 9)]
OPENING = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


def controller(text: str) -> StateController:
    return StateController(preset(text), sleep=lambda seconds: None)


def _decisions(control: StateController, scopes: list[str], calls: int = 20) -> dict[str, list[str | None]]:
    decided = {}
    for scope in scopes:
        attempt = control.episode(scope)
        decided[scope] = [attempt.run(ToolCall("tool", {"i": i}), lambda: CallResult(ToolCall("tool"), True, output=1)
                                      ).injected for i in range(calls)]
    return decided


# -- policies ------------------------------------------------------------------------------------------------
def test_presets_share_their_rate_among_their_kinds_and_name_a_phase():
    flaky = preset("flaky-0.3@exploration")
    assert flaky.rates == pytest.approx({"timeout": 0.1, "rate_limit": 0.1, "unavailable": 0.1})
    assert flaky.phases == {"exploration"} and flaky.total_rate == pytest.approx(0.3)
    assert set(preset("chaos-0.6").rates) == set(FAULT_KINDS) and preset("chaos-0.6").phases == {"exploration", "test"}
    assert flaky.rates_for("any", "test") == {}


def test_policy_files_set_rates_per_kind_per_tool_and_per_phase(tmp_path):
    toml = tmp_path / "policy.toml"
    toml.write_text('preset = "flaky-0.3"\nphase = "test"\nseed = 7\nretry_after = 5\n'
                    '[tools.function_2]\ncorrupt = 1.0\n[phases.test]\ndrift = 0.5\n')
    policy = read_policy(str(toml))
    assert (policy.seed, policy.retry_after, policy.phases, policy.name) == (7, 5, {"test"}, "policy")
    assert policy.rates_for("function_2", "test") == {"corrupt": 1.0}
    assert policy.rates_for("function_1", "test") == {"drift": 0.5}
    assert policy.rates_for("function_1", "exploration") == {}
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"rates": {"timeout": 0.2}}))
    assert read_policy(str(path)).rates == {"timeout": 0.2}


@pytest.mark.parametrize("content, message", [
    ('{"rates": {"meteor": 0.1}}', "unknown fault kind 'meteor'"),
    ('{"rates": {"timeout": 0.8, "drift": 0.5}}', "more than 1"),
    ('{"phase": "always"}', "phase must be one of"),
    ('{"colour": 1}', "unknown key 'colour'"),
    ('[1, 2]', "must be an object"),
    ("{", "is not valid JSON"),
])
def test_bad_policy_files_are_refused_with_their_reason(tmp_path, content, message):
    path = tmp_path / "policy.json"
    path.write_text(content)
    with pytest.raises(PolicyError, match=message):
        read_policy(str(path))


def test_a_bad_faults_option_is_one_line_and_exit_code_2(capsys):
    from otbench import evaluate
    from otbench.exits import run_main

    with pytest.raises(SystemExit) as stop:
        run_main(evaluate.main, ["--faults", "sometimes-0.1", "--agent", "null"])
    error = capsys.readouterr().err
    assert stop.value.code == 2 and error.count("\n") == 1 and "--faults: unknown fault policy" in error


# -- decisions ------------------------------------------------------------------------------------------------
def test_a_policy_injects_the_same_faults_on_every_run_whatever_the_order_of_tasks():
    scopes = [f"task-{i}" for i in range(8)]
    first = _decisions(controller("chaos-0.5"), scopes)
    second = _decisions(controller("chaos-0.5"), list(reversed(scopes)))
    assert first == second and any(kind for kinds in first.values() for kind in kinds)
    reseeded = StateController(FaultPolicy(rates=preset("chaos-0.5").rates, seed=1))
    assert _decisions(reseeded, scopes) != first


def test_decisions_do_not_depend_on_thread_order():
    scopes = [f"task-{i}" for i in range(16)]
    expected = _decisions(controller("flaky-0.4"), scopes)
    control, found = controller("flaky-0.4"), {}

    def work(scope):
        found.update(_decisions(control, [scope]))

    threads = [threading.Thread(target=work, args=(scope,)) for scope in scopes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == expected


def test_a_call_outside_tasks_meets_its_fault_whatever_other_tools_called_meanwhile():
    """Play2Prompt plays every tool on a thread of its own: one tool's calls must not renumber another's."""
    def function_1(a: int = 0) -> int:
        return a

    def function_2(a: int = 0) -> int:
        return -a

    def injected(order):
        env = FunctionEnvironment([function_1, function_2], [dspy.Example(question="q")],
                                  metric=lambda example, trajectory: 0.0)
        env.faults = controller("chaos-0.5")
        return {(name, i): env.execute("tools", ToolCall(name, {"a": i})).injected for name, i in order}

    calls = [(name, i) for i in range(12) for name in ("function_1", "function_2")]
    interleaved, one_tool_then_the_other = injected(calls), injected(sorted(calls))
    assert interleaved == one_tool_then_the_other and any(interleaved.values())


def test_a_resumed_run_meets_the_faults_an_uninterrupted_one_would():
    straight = controller("chaos-0.5")
    _decisions(straight, ["t1", "t2"])
    expected = _decisions(straight, ["t1", "t2"])  # a second iteration over the same tasks
    first = controller("chaos-0.5")
    _decisions(first, ["t1", "t2"])
    resumed = controller("chaos-0.5")
    resumed.restore(json.loads(json.dumps(first.snapshot())))  # through the checkpoint file
    assert _decisions(resumed, ["t1", "t2"]) == expected != _decisions(controller("chaos-0.5"), ["t1", "t2"])
    # the faults met before the stop are still known: the final docs are checked against them too
    assert first.injected and set(first.injected) <= set(resumed.injected)
    assert set(resumed.injected) == set(straight.injected)


def test_rates_are_kept_over_many_calls():
    kinds = [kind for kinds in _decisions(controller("timeout-0.2"), [f"t{i}" for i in range(50)]).values()
             for kind in kinds]
    assert 0.15 < kinds.count("timeout") / len(kinds) < 0.25 and set(kinds) == {None, "timeout"}


# -- what each kind does --------------------------------------------------------------------------------------
def _one(kind: str, output=None, ok=True) -> tuple[CallResult, list[ToolCall]]:
    ran: list[ToolCall] = []
    call = ToolCall("function_1", {"n": 3})

    def execute() -> CallResult:
        ran.append(call)
        return CallResult(call, ok, output=output if ok else None, error=None if ok else "ValueError: no")

    return controller(f"{kind}-1.0").episode("task").run(call, execute), ran


@pytest.mark.parametrize("kind, words", [("timeout", "TimeoutError: function_1() timed out after"),
                                         ("rate_limit", "429 Too Many Requests: function_1() rate limit exceeded; retry"),
                                         ("unavailable", "503 function_1() is temporarily unavailable")])
def test_transient_faults_replace_the_call_with_the_failure_a_service_reports(kind, words):
    result, ran = _one(kind, output=6)
    assert not result.ok and words in result.error and result.injected == kind and not ran


def test_damaged_results_come_from_the_real_call_and_failures_stay_the_tools_own():
    corrupt, ran = _one("corrupt", output={"result": 6, "unit": "none"})
    assert ran and corrupt.ok and corrupt.injected == "corrupt" and "\ufffd" in corrupt.output.values()
    drift, _ = _one("drift", output=[1, 2, 3])
    assert drift.ok and drift.injected == "drift" and drift.output != [1, 2, 3] and len(drift.output) == 3
    delayed, _ = _one("delay", output=6)
    assert (delayed.ok, delayed.output, delayed.injected) == (True, 6, "delay")
    failed, _ = _one("corrupt", ok=False)
    assert failed.error == "ValueError: no" and failed.injected is None


def test_corruption_truncates_or_mangles_and_drift_stays_plausible():
    assert corrupted("abcdef", 0.1) == "abc" and corrupted([1, 2, 3, 4], 0.5) == [1, 2]
    assert drifted("e2e4", 0.3) == "e3e5" and drifted(10, 0.0) == 12 and drifted({"x": 1.0}, 0.0) == {"x": 1.6}


def test_a_call_that_could_not_be_made_never_reaches_the_controller():
    call = ToolCall("function_1", {}, problem="arguments must be an object")
    refused = CallResult.refused(call)
    assert controller("timeout-1.0").episode("task").run(call, lambda: refused) is refused


def test_a_policy_for_one_phase_injects_nothing_in_the_other():
    control = StateController(preset("timeout-1.0@exploration"))
    with control.phase("test"):
        assert _decisions(control, ["t"], 5) == {"t": [None] * 5}
    assert _decisions(control, ["t"], 5) == {"t": ["timeout"] * 5}
    assert len(control.messages("exploration")) == 5 and control.messages("test") == []


def test_without_a_controller_an_episode_runs_the_call_as_it_is():
    result = CallResult(ToolCall("f"), True, output=1)
    plain = episode(None, "task")
    assert isinstance(plain, Episode) and plain.run(ToolCall("f"), lambda: result) is result


# -- environments -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bfcl():
    with BfclEnvironment(setting="names_only", tests=BFCL_TESTS) as env:
        yield env


def _bfcl_run(env: BfclEnvironment, control: StateController | None) -> list[dict]:
    env.faults = control
    try:
        agent = env.oracle_agent(BFCL_TESTS)
        return [env.rollout(agent, env.toolbox(), task).to_dict() for task in BFCL_TESTS]
    finally:
        env.faults = None


def test_bfcl_without_faults_executes_and_scores_exactly_as_before(bfcl):
    plain = _bfcl_run(bfcl, None)
    assert all(t["metrics"]["E"] == 1.0 for t in plain)
    assert all("injected" not in step for t in plain for step in t["steps"])
    assert _bfcl_run(bfcl, controller("chaos-0.0")) == plain  # a controller that injects nothing changes nothing
    assert _bfcl_run(bfcl, controller("chaos-1.0@test")) == plain  # in another phase: nothing either


def test_bfcl_gold_outputs_are_computed_without_faults(bfcl):
    with BfclEnvironment(setting="names_only", tests=BFCL_TESTS) as clean:
        truth = [clean.gold_outputs(task) for task in BFCL_TESTS]
    faulted = _bfcl_run(bfcl, controller("drift-1.0"))  # every agent call answers for a changed state
    assert [bfcl.gold_outputs(task) for task in BFCL_TESTS] == truth == [[6], [24], [120], [720], [5040], [40320]]
    assert all(t["metrics"]["E"] == 0.0 and t["steps"][0]["injected"] == "drift" for t in faulted)


def test_bfcl_calls_outside_tasks_go_through_the_controller_too(bfcl):
    bfcl.faults = controller("unavailable-1.0")
    try:
        result = bfcl.execute(BFCL_TESTS[0].id, ToolCall("function_1", {"n": 3}))
    finally:
        bfcl.faults = None
    assert result.injected == "unavailable" and "503" in result.error


class OneCall:
    def __init__(self, call: ToolCall) -> None:
        self.call = call

    def __call__(self, **_) -> AgentReply:
        return AgentReply(raw=json.dumps(self.call.to_dict()), calls=[self.call])


def test_chess_a_faulted_call_is_a_failed_move_and_a_drifted_suggestion_may_be_illegal():
    position = Position("test-opening", OPENING, "opening", "equal", 0, "test", "test")
    with ChessEnvironment(setting="phase", positions=[position], max_moves=1) as env:
        task = env.tasks("test")[0]
        agent = OneCall(ToolCall("engine_1", {"fen": OPENING}))
        plain = env.rollout(agent, env.toolbox(), task)
        env.faults = controller("rate_limit-1.0")
        limited = env.rollout(agent, env.toolbox(), task)
        env.faults = controller("corrupt-1.0")
        damaged = env.rollout(agent, env.toolbox(), task)
    assert plain.steps[0].ok and plain.steps[0].injected is None
    assert limited.metrics["failed_moves"] == 1.0 and limited.steps[0].injected == "rate_limit"
    assert "retry after" in limited.steps[0].error
    assert damaged.metrics["failed_moves"] == 1.0 and "which is not a move" in damaged.steps[0].error


def test_browsecomp_a_faulted_search_sees_no_page_and_the_answer_is_never_faulted():
    env = tiny_env(max_calls=2)
    task = env.tasks("test")[0]
    env.faults = controller("timeout-1.0")
    replies = iter([ToolCall(env.oracle_calls(task)[0].name, {"query": "anything"}),
                    ToolCall("final_answer", {"answer": task.answer})])
    trajectory = env.rollout(lambda **_: OneCall(next(replies))(), env.toolbox(), task)
    assert [step.injected for step in trajectory.steps] == ["timeout"]
    assert trajectory.metrics["accuracy"] == 1.0 and trajectory.metrics["evidence_recall"] == 0.0


def test_browsecomp_pages_count_as_seen_only_as_the_agent_was_shown_them():
    env = tiny_env(max_calls=2)
    task = env.tasks("test")[0]
    agent = env.oracle_agent([task])
    recall = {}
    for policy in ("chaos-0.0", "corrupt-1.0", "drift-1.0"):
        env.faults = controller(policy)
        recall[policy] = env.rollout(agent, env.toolbox(), task).metrics["evidence_recall"]
    assert recall["chaos-0.0"] > 0 and recall["drift-1.0"] == 0.0 and recall["corrupt-1.0"] <= recall["chaos-0.0"]


def test_browsecomp_and_chess_without_faults_play_exactly_as_before():
    env = tiny_env(max_calls=2)
    task = env.tasks("test")[0]
    agent = env.oracle_agent([task])
    plain = env.rollout(agent, env.toolbox(), task).to_dict()
    env.faults = controller("chaos-0.0")
    assert env.rollout(agent, env.toolbox(), task).to_dict() == plain
    position = Position("test-opening", OPENING, "opening", "equal", 0, "test", "test")
    with ChessEnvironment(setting="phase", positions=[position], max_moves=2) as chess_env:
        game = chess_env.tasks("test")[0]
        oracle = chess_env.oracle_agent([game])
        before = chess_env.rollout(oracle, chess_env.toolbox(), game).to_dict()
        chess_env.faults = controller("chaos-1.0@test")  # exploration is the phase: nothing is injected
        assert chess_env.rollout(oracle, chess_env.toolbox(), game).to_dict() == before


def test_function_environment_faults_reach_the_agent_as_the_functions_reply():
    calls = []

    def function_1(a: int, b: int) -> int:
        calls.append((a, b))
        return a + b

    env = FunctionEnvironment([function_1], [dspy.Example(question="add 2 and 3", answer=5)],
                              metric=lambda example, trajectory: example.answer in trajectory.outputs)
    agent = OneCall(ToolCall("function_1", {"a": 2, "b": 3}))
    assert env.rollout(agent, env.toolbox(), env.tasks()[0]).metrics["score"] == 1.0
    env.faults = controller("timeout-1.0")
    faulted = env.rollout(agent, env.toolbox(), env.tasks()[0])
    assert faulted.metrics["score"] == 0.0 and faulted.steps[0].injected == "timeout" and calls == [(2, 3)]
    assert "injected" in faulted.to_dict()["steps"][0]


def test_function_environment_refuses_a_call_that_could_not_be_read_without_running_it():
    calls = []

    def function_1(a: int = 0) -> int:
        calls.append(a)
        return a

    env = FunctionEnvironment([function_1], [dspy.Example(question="q")], metric=lambda example, trajectory: 0.0)
    result = env.execute("tools", ToolCall("function_1", {}, problem="arguments must be an object of named arguments"))
    assert not result.ok and "arguments must be an object" in result.error and calls == []
