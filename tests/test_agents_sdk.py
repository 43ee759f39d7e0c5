"""The OpenAI Agents SDK's agent on ``otbench serve`` (its real front, a scripted llama.cpp behind it): calls run,
results fed back, an answer; metered and cached; and as ``evaluate --agent openai-agents`` on BFCL-Opaque."""

import json
import re
from pathlib import Path

import pytest
from scripted_llama import KEY, scripted_llama

from otbench import evaluate
from otbench.core.calls import CallResult, ToolCall
from otbench.envs.base import sample_tasks
from otbench.envs.bfcl.env import BfclEnvironment
from otbench.evaluate import EvaluateOptions
from otbench.llm.front import ToolFront
from otbench.llm.metering import TokenLedger
from otbench.llm.openai_client import metered_client
from otbench.llm.session import LMOptions
from otbench.modules.agents_sdk import AgentsSdkAgent
from otbench.modules.api_tools import chat_completions_tool
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox
from otbench.run import ledger
from otbench.run.settings import TrackingOptions

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "What is the greatest common divisor of 36 and 48?"
TOOLS = [DocumentedTool("function_1", description="Greatest common divisor of the integers a and b.",
                        parameters=[ParameterSpec("a", "integer"), ParameterSpec("b", "integer")])]


def conversation(body):
    """The messages the template was given (the scripted template renders them as JSON)."""
    return json.loads(body["prompt"])["messages"]


def call_then_answer(body):
    """A call first; once a tool's result is in the conversation, an answer quoting it."""
    results = [message["content"] for message in conversation(body) if message["role"] == "tool"]
    if results:
        return f"The greatest common divisor is {results[-1]}."
    return '```json\n{"name":"function_1","arguments":{"a":36,"b":48}}\n```'


@pytest.fixture
def front():
    """``front(reply)``: the URL of a tool-calling front whose scripted model answers ``reply``, and what it saw."""
    opened = []

    def start(reply):
        script = scripted_llama(reply)
        backend, seen = script.__enter__()
        served = ToolFront(backend, KEY)
        opened.append((script, served))
        return served.start(), seen

    yield start
    for script, served in opened:
        served.shutdown()
        served.server_close()
        script.__exit__(None, None, None)


def test_the_sdk_agent_calls_the_tool_gets_its_result_and_answers(front):
    url, seen = front(call_then_answer)
    ledger, ran = TokenLedger(), []

    def execute(toolset, call):
        ran.append((toolset, call))
        return CallResult(call, True, output=12)

    agent = AgentsSdkAgent(execute, {QUESTION: "exec_simple_66"}, lambda: metered_client(f"{url}/v1", KEY, ledger),
                           "local")
    reply = agent(question=QUESTION, tools=TOOLS)
    assert reply.calls == [ToolCall("function_1", {"a": 36, "b": 48})] and reply.error is None
    assert reply.raw == "The greatest common divisor is 12."
    assert ran == [("exec_simple_66", ToolCall("function_1", {"a": 36, "b": 48}))]
    first, second = seen.templates
    assert first["tools"][0]["function"]["name"] == "function_1"  # the docs as export writes them
    assert "Greatest common divisor" in first["tools"][0]["function"]["description"]
    assert [message["role"] for message in second["messages"]][-2:] == ["assistant", "tool"]
    agent_phase = ledger.phase("agent")
    assert agent_phase.calls == 2 and agent_phase.prompt_tokens == 80 and agent_phase.completion_tokens == 24
    assert ledger.server_figures()["agent"]["calls"] == 2  # llama.cpp's timings reached the ledger


def test_a_failed_call_is_told_to_the_agent_and_no_call_is_a_reply_without_calls(front):
    url, seen = front(call_then_answer)
    agent = AgentsSdkAgent(lambda toolset, call: CallResult(call, False, error="TypeError: bad a"),
                           {QUESTION: "t"}, lambda: metered_client(f"{url}/v1", KEY, TokenLedger()), "local")
    agent(question=QUESTION, tools=TOOLS)
    assert [m["content"] for m in seen.templates[1]["messages"] if m["role"] == "tool"] == ["Error: TypeError: bad a"]
    url, _ = front(lambda body: "I cannot tell.")
    silent = AgentsSdkAgent(lambda toolset, call: CallResult(call, True), {QUESTION: "t"},
                            lambda: metered_client(f"{url}/v1", KEY, TokenLedger()), "local")
    reply = silent(question=QUESTION, tools=TOOLS)
    assert reply.calls is None and reply.raw == "I cannot tell." and "without calling a tool" in reply.error


def test_a_run_again_is_served_from_the_cache_and_counted_as_cache_served(front, tmp_path):
    url, seen = front(call_then_answer)
    ledger = TokenLedger()

    def run():
        agent = AgentsSdkAgent(lambda toolset, call: CallResult(call, True, output=12), {QUESTION: "t"},
                               lambda: metered_client(f"{url}/v1", KEY, ledger, cache=tmp_path / "replies"), "local")
        return agent(question=QUESTION, tools=TOOLS)

    assert run() == run()
    assert len(seen.completions) == 2  # the second run asked the server nothing
    agent_phase = ledger.phase("agent")
    assert agent_phase.calls == 4 and agent_phase.paid_calls == 2 and agent_phase.cached_tokens == 2 * 52


def test_evaluate_runs_the_sdk_agent_on_bfcl_with_learned_docs_from_the_ledger(front, monkeypatch, tmp_path):
    """``evaluate --agent openai-agents --docs ledger:KEY``: the scripted model makes each test's gold calls (as the
    tools are named in this setting), then answers; every test then scores E = 1, and the row is the docs' own."""
    monkeypatch.setenv("OTBENCH_RESULTS", str(ROOT / "results"))  # read only: the committed ledger's learned docs
    monkeypatch.setenv("OTBENCH_CACHE", str(tmp_path / "cache"))
    with BfclEnvironment(setting="names_only") as env:
        gold = {test.question: env.oracle_calls(test) for test in env.tasks()}
        chosen = [test.id for test in sample_tasks(env.tasks(), 3, 5)]

    def oracle_then_answer(body):
        messages = conversation(body)
        if any(message["role"] == "tool" for message in messages):
            return "Done."
        calls = gold[next(message["content"] for message in messages if message["role"] == "user")]
        return "\n".join("```json\n" + json.dumps(call.to_dict(), separators=(",", ":")) + "\n```" for call in calls)

    url, seen = front(oracle_then_answer)
    options = EvaluateOptions(agent="openai-agents", docs="ledger:fb4b1e3a", limit=3, seed=5,
                              lm=LMOptions(api_base=url, api_key=KEY), tracking=TrackingOptions(), progress=False)
    definition = options.definition()
    assert definition.docs.startswith("ledger:fb4b1e3a") and len(definition.docs) == len("ledger:") + 20
    assert definition.method == "docs" and definition.models.agent == "embedded"
    result = evaluate.run(options)
    assert result.summary["E"] == 1.0 and result.summary["n"] == 3
    assert result.tokens_by_phase["agent"]["calls"] == 6 and result.tokens_by_phase["agent"]["prompt_tokens"] == 240
    learned = Toolbox.from_json(ledger.docs_entry("ledger:fb4b1e3a").artifacts["docs/final_docs.json"])
    shown = {json.dumps([{**tool, "function": {k: v for k, v in tool["function"].items() if k != "strict"}}
                         for tool in template["tools"]], sort_keys=True) for template in seen.templates}  # SDK's own
    assert shown == {json.dumps([chat_completions_tool(tool) for tool in learned.toolset(toolset)], sort_keys=True)
                     for toolset in chosen}


def test_the_sdk_agent_is_refused_where_calls_cannot_be_run_again(front, capsys):
    from otbench.exits import run_main

    url, seen = front(call_then_answer)
    with pytest.raises(SystemExit) as stop:
        run_main(evaluate.main, ["--env", "toolkit", "--toolkit", "inventory", "--agent", "openai-agents",
                                 "--limit", "1", "--api-base", url, "--api-key", KEY, "--quiet"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "run again" in err and len(err.strip().splitlines()) == 1
    assert not seen.completions


def _example():
    import importlib.util

    spec = importlib.util.spec_from_file_location("agents_sdk_example", ROOT / "examples" / "agents_sdk_learned_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_the_sdk_agent_on_exported_learned_docs_to_an_answer(front, monkeypatch, tmp_path, capsys):
    """The example as its docstring runs it: the docs exported from the ledger, the SDK's agent against the server."""
    from otbench.exits import run_main
    from otbench.export import main as export

    monkeypatch.setenv("OTBENCH_RESULTS", str(ROOT / "results"))
    tools = tmp_path / "tools.json"
    with pytest.raises(SystemExit) as stop:
        run_main(export, ["ledger:fb4b1e3a", "--toolset", "exec_simple_10", "--out", str(tools)])
    assert stop.value.code == 0

    def velocity_then_answer(body):
        results = [message["content"] for message in conversation(body) if message["role"] == "tool"]
        if results:
            return f"The final velocity is {float(results[-1]):.1f} m/s."
        return '```json\n{"name":"function_1","arguments":{"initial_velocity":0,"acceleration":9.8,"time":12}}\n```'

    url, seen = front(velocity_then_answer)
    result = _example().main(["--api-base", url, "--api-key", KEY, "--tools", str(tools)])
    assert result.final_output == "The final velocity is 117.6 m/s."
    printed = capsys.readouterr().out
    assert "call:   function_1(" in printed and "result: 117.6" in printed
    assert seen.templates[0]["tools"][0]["function"]["description"].startswith("The function_1 calculates the final")


def test_the_page_shows_the_example_these_tests_run():
    """docs/your-tools.md includes the example file itself (MkDocs' snippets), so the page shows the tested code."""
    page = (ROOT / "docs" / "your-tools.md").read_text()
    assert '--8<-- "examples/agents_sdk_learned_docs.py"' in page
    assert "python -m otbench.export ledger:fb4b1e3a --toolset exec_simple_10 --out tools.json" in page
    assert "python -m otbench.export ledger:fb4b1e3a --toolset exec_simple_10 --out tools.json" in _example().__doc__


def test_the_pages_comparison_is_what_its_commands_define_one_agent_one_sample_three_docs(monkeypatch):
    """The table of opaque, learned and true docs through the SDK's agent cites the entries the commands printed
    beside it define (so running them again refills the same rows), each an evaluation by that agent of the same
    seeded tests."""
    monkeypatch.setenv("OTBENCH_RESULTS", str(ROOT / "results"))  # read only: the committed ledger
    page = (ROOT / "docs" / "your-tools.md").read_text()
    section = page[page.index("### Measured: the Agents SDK's agent"):]
    cited = re.search(r"<!-- results: runs/([0-9a-f.]+) -->", section)
    assert cited is not None
    commands = [line.split()[3:] for line in page.splitlines()
                if line.startswith("python -m otbench.evaluate --agent openai-agents")]
    defined = [evaluate.options_from(vars(evaluate.build_parser(argv).parse_args(argv))).definition()
               for argv in commands]
    assert [definition.key[:8] for definition in defined] == cited.group(1).split(".")
    entries = [ledger.find(definition) for definition in defined]
    assert all(entry is not None and entry.status == "finished" for entry in entries)
    assert [definition.method for definition in defined] == ["base", "docs", "gold"]
    assert {(definition.agent, definition.sample.limit, definition.sample.seed) for definition in defined} == {
        ("openai-agents", 30, 0)}
