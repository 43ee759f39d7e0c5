"""Every reply is data: hostile replies (the committed corpus, and Hypothesis' own) go through the real
agent, each environment's rollout, its metrics and the logging without an exception, a lost
sandbox worker or a score that credits a call that could not be made."""

import json

import mlflow
import pytest
from browsecomp_world import tiny_env
from hostile import Target, corpus, instantiate, replay, replies
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otbench.core.calls import ToolCall
from otbench.envs.bfcl.data import BfclTest
from otbench.envs.bfcl.env import BfclEnvironment
from otbench.envs.bfcl.metrics import ast_accuracy, parameter_accuracy
from otbench.envs.chess.env import ChessEnvironment
from otbench.envs.chess.positions import Position
from otbench.mlflow_store import configure

FACTORIAL = {"name": "math_factorial", "description": "n!",
             "parameters": {"type": "dict", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
FIBONACCI = {"name": "get_fibonacci_sequence", "description": "The first n Fibonacci numbers.",
             "parameters": {"type": "dict", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
BFCL_TESTS = [BfclTest("exec_multiple_t", "exec_multiple", "What is 7 factorial?", (FACTORIAL, FIBONACCI),
                       ("math_factorial(n=7)",), ("exact_match",))]
OPENING = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def bfcl():
    with BfclEnvironment(setting="names_only", tests=BFCL_TESTS) as env:
        yield Target("bfcl", env, BFCL_TESTS[0], "function_1", "n", 7, "math_factorial")


@pytest.fixture(scope="module")
def chess_target():
    position = Position("test-opening", OPENING, "opening", "equal", 0, "test", "test")
    with ChessEnvironment(setting="phase", positions=[position], max_moves=1) as env:
        yield Target("chess", env, env.tasks("test")[0], "engine_1", "fen", OPENING, "stockfish")


@pytest.fixture(scope="module")
def browsecomp():
    env = tiny_env(max_calls=2)
    task = env.tasks("test")[0]
    yield Target("browsecomp", env, task, env.tool_of_domain[task.hops[0].domain], "query", task.hops[0].query,
                 "wikipedia")


@pytest.fixture(scope="module")
def targets(bfcl, chess_target, browsecomp):
    return {"bfcl": bfcl, "chess": chess_target, "browsecomp": browsecomp}


@pytest.mark.parametrize("env_name", ["bfcl", "chess", "browsecomp"])
def test_the_corpus_is_failed_calls_never_crashes_and_is_logged(targets, env_name):
    target = targets[env_name]
    records = corpus()
    outcomes = [replay(target, instantiate(record["reply"], target)) for record in records]
    found = {record["class"]: outcome.problems for record, outcome in zip(records, outcomes) if outcome.problems}
    assert found == {}
    for record, outcome in zip(records, outcomes):  # every class of the corpus is a failure
        metrics = outcome.trajectory.metrics
        failed = {"bfcl": metrics.get("E") == 0.0, "chess": metrics.get("optimal_calls") == 0.0,
                  "browsecomp": metrics.get("accuracy") == 0.0}[env_name]
        assert failed, record["class"]
    configure()
    with mlflow.start_run(run_name=f"hostile-{env_name}"):  # the artefact evaluate writes
        mlflow.log_text("\n".join(json.dumps(o.trajectory.to_dict(), default=str) for o in outcomes),
                        "trajectories.jsonl")


@FUZZ
@given(data=st.data())
def test_bfcl_takes_any_reply(bfcl, data):
    assert replay(bfcl, data.draw(replies(bfcl))).problems == []


@settings(FUZZ, max_examples=20)
@given(data=st.data())
def test_chess_takes_any_reply(chess_target, data):
    assert replay(chess_target, data.draw(replies(chess_target))).problems == []


@FUZZ
@given(data=st.data())
def test_browsecomp_takes_any_reply(browsecomp, data):
    assert replay(browsecomp, data.draw(replies(browsecomp))).problems == []


# --- BFCL: the figures behind the properties ---------------------------------------------------


def test_a_call_to_the_hidden_real_name_fails_and_scores_as_a_failure(bfcl):
    hidden = replay(bfcl, '{"calls": [{"name": "math_factorial", "arguments": {"n": 7}}]}').trajectory
    shown = replay(bfcl, '{"calls": [{"name": "function_1", "arguments": {"n": 7}}]}').trajectory
    assert "no tool named 'math_factorial'" in hidden.steps[0].error
    assert hidden.metrics == {"E": 0.0, "P": 0.0, "A": pytest.approx(0.4)}  # an unknown tool, like any other
    assert shown.metrics == {"E": 1.0, "P": 1.0, "A": 1.0}


def test_calls_past_the_cap_are_failed_calls_that_are_not_run(bfcl):
    reply = json.dumps({"calls": [{"name": "function_1", "arguments": {"n": 7}}] * 20})
    trajectory = replay(bfcl, reply).trajectory
    assert [step.ok for step in trajectory.steps] == [True] * 16 + [False] * 4
    assert "not run: the reply made 20 calls, more than the 16 allowed" in trajectory.steps[-1].error
    assert trajectory.metrics["E"] == 0.0 and trajectory.metrics["P"] == 1.0


def test_an_output_over_the_limit_fails_the_call_in_the_worker():
    with BfclEnvironment(setting="names_only", tests=BFCL_TESTS, max_output_bytes=1_000) as env:
        target = Target("bfcl", env, BFCL_TESTS[0], "function_2", "n", 7, "get_fibonacci_sequence")
        small, large = (replay(target, f'{{"name": "function_2", "arguments": {{"n": {n}}}}}').trajectory
                        for n in (10, 2_000))
    assert small.steps[0].ok and small.steps[0].output[:3] == [0, 1, 1]
    assert not large.steps[0].ok and "more than the 1000 allowed" in large.steps[0].error


def test_arguments_that_cannot_be_sent_fail_the_call_and_keep_the_worker(bfcl):
    nested: list = []
    for _ in range(5_000):
        nested = [nested]
    ok, error = bfcl.env.sandbox.call("math_factorial", "function_1", {"n": nested})
    assert not ok and "could not be sent" in error
    assert bfcl.env.sandbox.call("math_factorial", "function_1", {"n": 5}) == (True, 120)


def test_a_failed_call_earns_nothing_in_the_metrics():
    gold = [ToolCall("add", {"a": 1})]
    schemas = {"add": {"parameters": {"properties": {"a": {}}}}}
    refused = ToolCall("add", {"a": 1}, problem="not run")
    assert parameter_accuracy([refused], gold) == 0.0 and ast_accuracy([refused], gold, schemas) == pytest.approx(0.2)


def test_pairing_many_calls_with_few_gold_calls_is_exact():
    gold = [ToolCall("add", {"a": 1}), ToolCall("add", {"a": 2})]
    model = [ToolCall("add", {"a": 9})] * 1_500 + [ToolCall("add", {"a": 2}), ToolCall("add", {"a": 1})]
    assert parameter_accuracy(model, gold) == 1.0
    assert parameter_accuracy(model[:1_500], gold) == 0.0
