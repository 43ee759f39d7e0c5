"""What reaches an OpenAI-compatible server: a grammar for the embedded model, the schema for hosted ones,
and llama.cpp's per-call timings back into the token ledger.

A small HTTP server on 127.0.0.1 records each request body and answers like llama.cpp (with a
``timings`` object); the client side is the real DSPy/litellm path.
"""

import json
from pathlib import Path

import pytest
from chat_server import chat_server

from otbench.core.calls import ToolCall
from otbench.llm import session
from otbench.llm.grammar import schema_to_gbnf
from otbench.llm.metering import GrammarLM, MeteredLM, TokenLedger
from otbench.llm.session import LMOptions, open_lms
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.tool_docs import DocumentedTool

REPLY = '{"calls":[{"name":"function_1","arguments":{"n":3}}]}'
TIMINGS = {"cache_n": 30, "prompt_n": 10, "prompt_ms": 200.0, "predicted_n": 12, "predicted_ms": 600.0}


def serving():
    """A recording server answering every request with ``REPLY`` and llama.cpp's timings."""
    return chat_server(lambda body: REPLY, timings=TIMINGS)


@pytest.fixture
def recording_server():
    with serving() as served:
        yield served


def _ask_agent(lm):
    agent = FunctionCallingAgent()
    agent.lm = lm
    return agent(question="What is 3!?", tools=[DocumentedTool("function_1"), DocumentedTool("function_2")])


def test_the_embedded_model_gets_the_reply_schema_as_a_compact_grammar(recording_server):
    url, bodies = recording_server
    ledger = TokenLedger()
    lm = GrammarLM("openai/local", api_base=f"{url}/v1", api_key="k", ledger=ledger, phase="agent", cache=False,
                   num_retries=0, repeat_penalty=1.15, max_tokens=64)
    assert _ask_agent(lm).calls == [ToolCall("function_1", {"n": 3})]
    (body,) = bodies
    assert "response_format" not in body and body["repeat_penalty"] == 1.15
    from otbench.modules.agent import call_schema
    assert body["grammar"] == schema_to_gbnf(call_schema(["function_1", "function_2"]))
    figures = ledger.server_figures()["agent"]
    assert figures["calls"] == 1 and figures["cache_share"] == 0.75
    assert figures["completion_tokens_per_call"] == 12 and figures["generation_tokens_per_second"] == 20.0
    assert figures["prompt_tokens_per_second"] == 50.0 and figures["seconds"] == 0.8
    assert ledger.server_metrics()["llm_agent_cache_share"] == 0.75


def test_a_hosted_model_gets_the_schema_as_response_format_and_no_grammar(recording_server):
    url, bodies = recording_server
    lm = MeteredLM("openai/hosted", api_base=f"{url}/v1", api_key="k", ledger=TokenLedger(), phase="agent",
                   cache=False, num_retries=0, max_tokens=64)
    _ask_agent(lm)
    (body,) = bodies
    assert body["response_format"]["type"] == "json_schema" and "grammar" not in body


def test_a_reply_served_from_the_lm_cache_adds_no_server_timings(recording_server):
    url, bodies = recording_server
    ledger = TokenLedger()
    lm = GrammarLM("openai/local", api_base=f"{url}/v1", api_key="k", ledger=ledger, phase="editor", cache=True,
                   num_retries=0, max_tokens=64)
    messages = [{"role": "user", "content": "a prompt only this test sends"}]
    lm(messages=messages)
    lm(messages=messages)
    assert len(bodies) == 1
    assert ledger.server_figures()["editor"]["calls"] == 1 and ledger.phase("editor").calls == 2


def test_sessions_choose_the_grammar_for_the_embedded_model_unless_told_not_to(monkeypatch, recording_server):
    url, bodies = recording_server

    class Served:
        api_key = "key"

        def __init__(self, settings):
            pass

        def __enter__(self):
            return url

        def __exit__(self, *exc_info):
            pass

    monkeypatch.setattr(session, "EmbeddedServer", Served)
    monkeypatch.setattr(session, "embedded_identity", lambda options: (Path("model.gguf"), "model"))
    for grammar in (True, False):
        with open_lms(LMOptions(cache=False, grammar=grammar), TokenLedger()) as lms:
            assert isinstance(lms["agent"], GrammarLM) is grammar
            assert not grammar or lms["agent"].tokenizer is None  # no prefill unless asked
            _ask_agent(lms["agent"])
    assert "grammar" in bodies[0] and "response_format" not in bodies[0]
    assert "response_format" in bodies[1] and "grammar" not in bodies[1]



@pytest.mark.parametrize("answers_whole", [True, False])
def test_with_prefill_the_reply_s_opening_is_written_for_the_model_and_the_reply_comes_back_whole(answers_whole):
    from chat_server import pieces

    from otbench.llm.grammar import agreed_prefix, schema_opening
    from otbench.modules.agent import call_schema

    opening = schema_opening(call_schema(["function_1", "function_2"]))
    written = agreed_prefix(opening, pieces)
    with chat_server(lambda body: REPLY if answers_whole else REPLY[len(written):], timings=TIMINGS) as (url, bodies):
        lm = GrammarLM("openai/local", prefill=True, api_base=f"{url}/v1", api_key="k", ledger=TokenLedger(),
                       phase="agent", cache=False, num_retries=0, max_tokens=64)
        assert _ask_agent(lm).calls == [ToolCall("function_1", {"n": 3})]
    (body,) = bodies
    assert written == '{"calls":[{"name":"function_' and body["messages"][-1] == {"role": "assistant",
                                                                                 "content": written}
    assert body["grammar"] == opening.grammar_after(written) and "response_format" not in body


def test_prefill_writes_nothing_where_the_server_has_no_tokenizer(recording_server):
    import socket

    url, bodies = recording_server
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        nobody = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    lm = GrammarLM("openai/local", prefill=True, api_base=nobody, api_key="k", ledger=TokenLedger(),
                   phase="agent", cache=False, num_retries=0, max_tokens=64)
    lm.kwargs["api_base"] = f"{url}/v1"  # chat reaches the server; the tokenizer asked is at a closed port
    assert _ask_agent(lm).calls == [ToolCall("function_1", {"n": 3})]
    (body,) = bodies
    assert body["messages"][-1]["role"] != "assistant"


class NoServerStarted:
    """Fails the test if a command starts the embedded server although it was given a running one."""

    def __init__(self, settings):
        raise AssertionError("the embedded server was started although --api-base names a running one")


def test_agent_and_editor_reach_their_own_servers(monkeypatch):
    monkeypatch.setattr(session, "EmbeddedServer", NoServerStarted)
    with serving() as (agent_url, agent_bodies), serving() as (editor_url, editor_bodies):
        options = LMOptions(lm="Qwen/Qwen3-8B", api_base=f"{agent_url}/v1", editor_lm="served-editor",
                            editor_api_base=editor_url, cache=False)
        with open_lms(options, TokenLedger(), ("agent", "editor", "exploration")) as lms:
            _ask_agent(lms["agent"])
            _ask_agent(lms["editor"])
            _ask_agent(lms["exploration"])
    (agent_body,) = agent_bodies
    assert agent_body["model"] == "Qwen/Qwen3-8B" and agent_body["response_format"]["type"] == "json_schema"
    assert [body["model"] for body in editor_bodies] == ["served-editor", "served-editor"]
    assert "grammar" not in agent_body  # a server of one's own may not be llama.cpp


def test_the_embedded_model_served_on_its_own_is_used_with_its_grammar(monkeypatch):
    monkeypatch.setattr(session, "EmbeddedServer", NoServerStarted)
    with serving() as (url, bodies), open_lms(LMOptions(api_base=url, cache=False), TokenLedger(),
                                              ("agent", "editor")) as lms:
        assert isinstance(lms["agent"], GrammarLM) and lms["editor"].kwargs["api_base"] == f"{url}/v1"
        _ask_agent(lms["agent"])
    (body,) = bodies
    assert body["model"] == "qwen2.5-coder-1.5b-instruct-q4_k_m" and "grammar" in body


def test_the_editor_of_another_model_does_not_inherit_the_agents_server():
    options = LMOptions(lm="mine", api_base="http://gpu-box:8000/v1", editor_lm="openai/gpt-5")
    assert options.route("agent") == ("mine", "http://gpu-box:8000/v1")
    assert options.route("editor") == ("openai/gpt-5", None)
    assert LMOptions(lm="mine", api_base="http://gpu-box:8000").route("exploration") == ("mine", "http://gpu-box:8000")


def test_evaluate_runs_against_a_server_named_by_option_or_environment(monkeypatch, capsys):
    from otbench import evaluate
    from otbench.exits import run_main
    from otbench.llm.session import API_BASE_VARIABLE

    monkeypatch.setattr(session, "EmbeddedServer", NoServerStarted)
    with serving() as (url, bodies):
        for argv in (["--api-base", url], []):
            if not argv:
                monkeypatch.setenv(API_BASE_VARIABLE, url)
            with pytest.raises(SystemExit) as stop:
                run_main(evaluate.main, ["--lm", "my-model", *argv, "--limit", "1", "--no-cache", "--json", "--quiet"])
            assert stop.value.code == 0, capsys.readouterr().err
    assert [body["model"] for body in bodies] == ["my-model", "my-model"]
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["n"] == 1
