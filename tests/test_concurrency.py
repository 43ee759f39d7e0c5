"""What threads share, under many threads at once: counts add up exactly, nothing is lost or counted twice."""

from __future__ import annotations

import json
import re
import threading
import uuid

import chess
import mlflow
import pytest
from scripted_lm import ScriptedEngine, prompt_text, scripted_lm
from test_browsecomp_tools import DOCS
from toy_env import ToyEnvironment, docs_aware_agent_reply

from otbench import mlflow_store
from otbench.envs import registry
from otbench.envs.browsecomp.retrieval import open_retriever
from otbench.envs.chess.engine import EnginePool, find_stockfish
from otbench.envs.registry import EnvironmentOptions, make_environment, tool_workers
from otbench.errors import ConfigError
from otbench.evals.harness import run_rollouts
from otbench.llm import tracing
from otbench.llm.metering import MeteredLM, TokenLedger, UsageMemory
from otbench.modules.agent import FunctionCallingAgent
from otbench.run import tracking


def test_tool_workers_follow_the_threads_up_to_the_cores_or_the_cap(monkeypatch):
    monkeypatch.setattr(registry, "usable_cores", lambda: 2)
    assert tool_workers(1, None) == 1
    assert tool_workers(64, None) == 2  # CPU-bound calls: more workers than cores run nothing sooner
    assert tool_workers(64, 8) == 8
    assert tool_workers(4, 8) == 4  # never more than the threads, which make one call at a time each


def test_the_sandbox_of_a_built_environment_has_the_workers_asked_for(monkeypatch):
    monkeypatch.setattr(registry, "usable_cores", lambda: 2)
    with make_environment(EnvironmentOptions("bfcl", sandbox_workers=5), workers=64) as env:
        assert env.sandbox.size == 5
    with make_environment(EnvironmentOptions("bfcl"), workers=64) as env:
        assert env.sandbox.size == 2


def test_a_cap_below_one_is_refused():
    with pytest.raises(ConfigError, match="sandbox_workers"):
        make_environment(EnvironmentOptions("bfcl", sandbox_workers=0))


# -- the token ledger and the LM cache --------------------------------------------------------------------------
def _at_once(threads: int, work) -> list:
    """``work(index)`` on ``threads`` threads released together; the results in index order."""
    gate = threading.Barrier(threads)
    results: list = [None] * threads
    errors: list[BaseException] = []

    def one(index):
        gate.wait()
        try:
            results[index] = work(index)
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            errors.append(error)

    started = [threading.Thread(target=one, args=(index,)) for index in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()
    if errors:
        raise errors[0]
    return results


def test_many_threads_calling_one_lm_count_every_call_and_token_once():
    engine = ScriptedEngine(lambda messages: "reply " * (len(prompt_text(messages)) % 7 + 1))
    ledger = TokenLedger()
    lm = MeteredLM("scripted/test", engine=engine, cache=False, ledger=ledger, phase="agent")
    _at_once(32, lambda index: [lm(messages=[{"role": "user", "content": f"call {index} {n} " + "x " * n}])
                                for n in range(10)])
    billed = sum(sum(len(m["content"].split()) for m in request) for request in engine.requests)
    replies = sum(len(prompt_text(request)) % 7 + 1 for request in engine.requests)
    row = ledger.snapshot()["agent"]
    assert len(engine.requests) == 320
    assert (row["calls"], row["paid_calls"]) == (320, 320)
    assert (row["prompt_tokens"], row["completion_tokens"]) == (billed, replies)


def test_identical_requests_made_at_once_are_paid_for_once():
    """With the cache on, the threads asking what another thread is asking wait for its reply: one paid call."""
    engine = ScriptedEngine(lambda messages: "the one reply")
    ledger = TokenLedger()
    lm = MeteredLM("scripted/same", engine=engine, cache=True, ledger=ledger, phase="agent")
    question = [{"role": "user", "content": f"the same question {uuid.uuid4()}"}]  # new to DSPy's memory cache
    replies = _at_once(16, lambda index: lm(messages=question))
    row = ledger.snapshot()["agent"]
    assert len(engine.requests) == 1 and replies == [replies[0]] * 16
    assert (row["calls"], row["paid_calls"]) == (16, 1)
    assert row["cached_tokens"] == 15 * row["total_tokens"]  # each replay counted at what it cost once


def test_usage_remembered_by_many_threads_is_read_back_whole(tmp_path):
    memory = UsageMemory(tmp_path / "usage")
    _at_once(16, lambda index: [memory.remember(f"key{n}", 1000 + n) for n in range(20)])
    fresh = UsageMemory(tmp_path / "usage")  # reads the files, not the memory
    assert [fresh.recall(f"key{n}") for n in range(20)] == [1000 + n for n in range(20)]
    assert sorted(path.name for path in (tmp_path / "usage").iterdir()) == sorted(f"key{n}" for n in range(20))


# -- rollouts, traces and trajectories ------------------------------------------------------------------------------
def test_every_rollout_of_many_threads_is_one_trace_with_its_call(monkeypatch):
    monkeypatch.setenv(tracing.SWITCH, "1")
    mlflow_store.configure()
    env, ledger = ToyEnvironment(48), TokenLedger()
    agent = FunctionCallingAgent()
    agent.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="agent")
    with tracking.tracked_run("many-threads", tags={}, params={}) as run:
        trajectories = run_rollouts(env, agent, env.toolbox(), env.tasks(), num_threads=32, progress=False)
    mlflow.flush_trace_async_logging(terminate=False)
    traces = mlflow.search_traces(run_id=run.info.run_id, return_type="list")
    assert [t.task_id for t in trajectories] == [task.id for task in env.tasks()]
    assert sorted(trace.info.tags["task_id"] for trace in traces) == sorted(task.id for task in env.tasks())
    assert all([span.name for span in trace.data.spans] == ["rollout", "agent call"] for trace in traces)
    assert ledger.snapshot()["agent"]["calls"] == 48 == sum(len(t.steps) > 0 for t in trajectories)


def test_bfcl_rollouts_of_many_threads_on_two_sandbox_workers_lose_nothing():
    """64 tasks, 32 threads, the real sandbox capped at 2 workers: every trajectory, its call run once."""
    def first_tool(messages):
        name = re.search(r'"name": "([^"]+)"', prompt_text(messages).split("Tools:")[1]).group(1)
        return json.dumps({"calls": [{"name": name, "arguments": {"n": 3}}]})

    ledger = TokenLedger()
    with make_environment(EnvironmentOptions("bfcl", sandbox_workers=2), workers=32) as env:
        tasks = env.tasks()[:64]
        agent = FunctionCallingAgent(instructions=env.agent_instructions)
        agent.lm = scripted_lm(first_tool, ledger=ledger, phase="agent")
        trajectories = run_rollouts(env, agent, env.toolbox(), tasks, num_threads=32, progress=False)
        assert env.sandbox.running <= 2 and env.sandbox.in_use == 0
    assert [t.task_id for t in trajectories] == [task.id for task in tasks]
    assert all(len(t.steps) == 1 for t in trajectories)
    assert ledger.snapshot()["agent"]["calls"] == 64


# -- Chess's engines and BrowseComp's index -------------------------------------------------------------------------
FENS = ("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - 0 10",
        "8/5pk1/6p1/3R4/5P2/6K1/r5P1/8 b - - 0 40")


def test_an_engine_pool_shared_by_many_threads_starts_its_engines_once_and_answers_alike():
    searches = [(fen, depth) for fen in FENS for depth in (1, 2, 3, 4)]
    with EnginePool(find_stockfish(), size=1) as alone, alone.engine() as engine:
        expected = [engine.best_move(chess.Board(fen), depth).uci() for fen, depth in searches]
    with EnginePool(find_stockfish(), size=3) as pool:
        def work(index):
            moves = []
            for fen, depth in searches[index % 4:] + searches[:index % 4]:
                with pool.engine() as engine:
                    moves.append((fen, depth, engine.best_move(chess.Board(fen), depth).uci()))
            return moves

        found = _at_once(24, work)
        assert len(pool.pids()) <= 3
        assert pool.cache.hits + pool.cache.misses == 24 * len(searches)
    assert all(sorted(moves) == sorted((fen, depth, move) for (fen, depth), move in zip(searches, expected,
                                                                                      strict=True))
               for moves in found)


@pytest.mark.parametrize("kind", ["bm25", "dense"])
def test_a_retriever_shared_by_many_threads_answers_as_it_does_alone(kind, tmp_path):
    retriever = open_retriever(kind, DOCS, tmp_path, "f1")
    queries = ["Ada Quill born", "Lyon city France", "anvils", "racehorse Porto", "fan forum", "Acme anvils maker"]
    expected = [retriever.search(query, 5) for query in queries]
    rounds = 5 if kind == "bm25" else 1  # an encoder's query costs tens of milliseconds
    found = _at_once(16, lambda index: [retriever.search(query, 5) for query in queries * rounds])
    assert found == [expected * rounds] * 16
