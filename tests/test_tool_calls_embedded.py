"""OpenAI tool calling on the real embedded model, as ``otbench serve`` serves it (marked: slow, CI runs them): the
OpenAI Python SDK with docs learned by otbench gets ``tool_calls``, and the OpenAI Agents SDK's agent answers from a
tool's result."""

import json
from pathlib import Path

import openai
import pytest

from otbench.llm.server import EmbeddedServer, ServerSettings
from otbench.llm.session import LMOptions, embedded_identity
from otbench.modules.api_tools import chat_completions_tool
from otbench.modules.tool_docs import Toolbox
from otbench.run import ledger

pytestmark = pytest.mark.embedded

ROOT = Path(__file__).resolve().parents[1]
LEARNED = "ledger:fb4b1e3a"
"""ToolObserver's docs learned on all of BFCL-Opaque names_only, kept in the committed ledger."""
REQUESTS = {
    "exec_simple_10": "A vehicle starts from a standstill and accelerates at 9.8 meters per second squared for 12 "
                      "seconds. What is its final velocity?",
    "exec_simple_66": "What is the greatest common divisor of 450 and 300?",
    "exec_simple_40": "How far apart are the points (45.76, 4.85) and (48.85, 2.35)?",
}


@pytest.fixture(scope="module")
def served():
    path, _ = embedded_identity(LMOptions())
    server = EmbeddedServer(ServerSettings(path, tool_calls=True))
    with server as url:
        yield openai.OpenAI(base_url=f"{url}/v1", api_key=server.api_key, max_retries=0), url, server.api_key


def learned_tools(toolset):
    docs = ledger.docs_entry(LEARNED, ROOT / "results").artifacts["docs/final_docs.json"]
    return [chat_completions_tool(tool) for tool in Toolbox.from_json(docs).toolset(toolset)]


@pytest.mark.parametrize("toolset", list(REQUESTS))
def test_the_openai_sdk_gets_tool_calls_with_learned_docs(served, toolset):
    client, _, _ = served
    tools = learned_tools(toolset)
    reply = client.chat.completions.create(model="local", messages=[{"role": "user", "content": REQUESTS[toolset]}],
                                           tools=tools, temperature=0, max_tokens=256)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None, choice.message.content
    offered = {tool["function"]["name"] for tool in tools}
    for call in choice.message.tool_calls:
        assert call.id and call.function.name in offered and isinstance(json.loads(call.function.arguments), dict)


def test_required_and_streamed_calls_on_the_real_model(served):
    client, _, _ = served
    tools = learned_tools("exec_simple_66")
    question = [{"role": "user", "content": REQUESTS["exec_simple_66"]}]
    forced = client.chat.completions.create(model="local", messages=question, tools=tools, temperature=0,
                                            tool_choice="required", max_tokens=128)
    assert forced.choices[0].message.tool_calls[0].function.name == "function_1"
    chunks = list(client.chat.completions.create(model="local", messages=question, tools=tools, temperature=0,
                                                 stream=True, max_tokens=128))
    names = [call.function.name for chunk in chunks if chunk.choices for call in chunk.choices[0].delta.tool_calls or []
             if call.function and call.function.name]
    assert names == ["function_1"] and chunks[-1].choices[0].finish_reason == "tool_calls"


def test_the_example_agent_answers_from_the_tool_result(served, tmp_path, monkeypatch):
    """The Agents SDK example on the real model: the learned docs exported, the call made, its result fed back, and
    an answer that quotes it."""
    import importlib.util

    import agents

    _, url, key = served
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(learned_tools("exec_simple_10")))
    spec = importlib.util.spec_from_file_location("agents_sdk_example", ROOT / "examples" / "agents_sdk_learned_docs.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    result = example.main(["--api-base", url, "--api-key", key, "--tools", str(tools)])
    outputs = [item.output for item in result.new_items if isinstance(item, agents.ToolCallOutputItem)]
    assert outputs and "117.6" in outputs[0]  # calculate_final_velocity(0, 9.8, 12)
    assert "117" in str(result.final_output)
