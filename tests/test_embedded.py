"""The real embedded model end to end (marked: slow, CI runs them)."""

import json
from pathlib import Path

import mlflow
import pytest

from otbench import evaluate, optimize
from otbench.exits import run_main

pytestmark = pytest.mark.embedded


def _run_json(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    return json.loads(captured.out)


def test_the_embedded_model_answers_three_bfcl_tests(capsys):
    summary = _run_json(evaluate.main, ["--setting", "gold", "--limit", "3", "--seed", "1", "--json", "--quiet"], capsys)
    assert summary["n"] == 3 and 0.0 <= summary["E"] <= 1.0 and 0.0 <= summary["A"] <= 1.0
    agent = summary["tokens_by_phase"]["agent"]
    assert agent["calls"] == 3 and agent["prompt_tokens"] > 0 and agent["completion_tokens"] > 0
    path = mlflow.artifacts.download_artifacts(artifact_uri=f"runs:/{summary['run_id']}/trajectories.jsonl")
    for line in Path(path).read_text().splitlines():
        trajectory = json.loads(line)
        assert trajectory["steps"] or trajectory["parse_error"]  # a call, or a scored failure with its reason


def test_toolobserver_runs_one_online_iteration_with_the_embedded_model(tmp_path, capsys):
    summary = _run_json(optimize.main, ["--limit", "2", "--iterations", "1", "--seed", "3", "--json", "--quiet",
                                        "--out", str(tmp_path)], capsys)
    assert summary["n"] == 2 and summary["steps"] >= 1
    assert summary["tokens_by_phase"]["agent"]["calls"] >= 2
    assert (tmp_path / summary["run_id"] / "final_docs.json").exists()


def test_embedded_lm_answers_an_agent_call_and_its_server_stops_with_the_block():
    """``otbench.embedded_lm()``, as the own-tools example uses it: one agent call through the LM it yields
    (grammar-constrained, metered), and nothing listens at the server's address once the block has ended."""
    import urllib.request

    import dspy

    from otbench import embedded_lm
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.modules.tool_docs import DocumentedTool

    tools = [DocumentedTool("function_1", description="Returns the sum of the numbers a and b."),
             DocumentedTool("function_2", description="Returns the product of the numbers a and b.")]
    with embedded_lm(cache=False) as lm:
        address = lm.kwargs["api_base"]
        with dspy.context(lm=lm):
            reply = FunctionCallingAgent()(question="What is 2 plus 3?", tools=tools)
        names = [call.name for call in reply.calls or []]
        assert "function_1" in names and set(names) <= {"function_1", "function_2"}
        assert lm.ledger.phase("agent").calls == 1 and lm.ledger.phase("agent").completion_tokens > 0
    with pytest.raises(OSError):  # connection refused: the server stopped with the block
        urllib.request.urlopen(f"{address}/models", timeout=5)


def test_the_embedded_model_replies_in_compact_json_under_every_reply_grammar():
    """llama.cpp accepts the grammar of every reply schema, and the agent's reply is compact and exact."""
    from otbench.llm.metering import TokenLedger
    from otbench.llm.session import LMOptions, open_lms
    from otbench.modules.agent import FunctionCallingAgent, call_schema
    from otbench.modules.editor import updates_schema
    from otbench.modules.lm_output import ask_json
    from otbench.modules.tool_docs import DocumentedTool
    from otbench.optimizers import easytool, play2prompt

    ledger = TokenLedger()
    with open_lms(LMOptions(cache=False), ledger, ("agent", "editor")) as lms:
        agent = FunctionCallingAgent()
        agent.lm = lms["agent"]
        tools = [DocumentedTool("function_1", description="Returns the factorial of the integer n."),
                 DocumentedTool("function_2", description="Returns the sum of the numbers a and b.")]
        reply = agent(question="What is the factorial of 5?", tools=tools)
        assert reply.calls and {call.name for call in reply.calls} <= {"function_1", "function_2"}
        assert reply.raw == json.dumps(json.loads(reply.raw), ensure_ascii=False, separators=(",", ":"))
        assert all(name.isidentifier() for call in reply.calls for name in call.arguments)
        schemas = [updates_schema(["function_1"], required=1), call_schema(["function_1"]),
                   play2prompt._ARGUMENTS_SCHEMA, play2prompt._QUERY_SCHEMA, play2prompt._SCORE_SCHEMA,
                   play2prompt._DESCRIPTION_SCHEMA, easytool._CONDENSE_SCHEMA, easytool._GUIDELINE_SCHEMA]
        for schema in schemas:  # a grammar llama.cpp refused would fail the request
            text, _ = ask_json(lms["editor"], system="Answer in JSON.", user="Describe function_1, which adds numbers.",
                               schema=schema, schema_name="reply", max_tokens=24)
            assert text.startswith("{") and "\n" not in text
    figures = ledger.server_figures()
    assert figures["agent"]["calls"] == 1 and figures["editor"]["calls"] == len(schemas)
    assert figures["agent"]["completion_tokens_per_call"] > 0 and 0.0 <= figures["all"]["cache_share"] <= 1.0


def test_with_prefill_the_embedded_model_writes_the_rest_of_each_reply_and_it_reads_whole():
    """llama.cpp continues the written opening under the grammar of the rest; agent and editor replies read whole."""
    from otbench.llm.metering import TokenLedger
    from otbench.llm.session import LMOptions, open_lms
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.modules.editor import describe_schema
    from otbench.modules.lm_output import ask_json
    from otbench.modules.tool_docs import DocumentedTool

    with open_lms(LMOptions(cache=False, prefill=True), TokenLedger(), ("agent", "editor")) as lms:
        agent = FunctionCallingAgent()
        agent.lm = lms["agent"]
        for tools in ([DocumentedTool("function_1", description="Returns the factorial of the integer n.")],
                      [DocumentedTool("function_1", description="Returns the factorial of the integer n."),
                       DocumentedTool("function_2", description="Returns the sum of the numbers a and b.")]):
            reply = agent(question="What is the factorial of 5?", tools=tools)
            assert reply.raw.startswith('{"calls":[{"name":"function_') and reply.calls, reply.raw
            assert reply.messages[-1]["role"] == "user"  # the opening is the LM's to write, not the agent's
        text, data = ask_json(lms["editor"], system="Answer in JSON.", user="Describe function_1, which adds a and b.",
                              schema=describe_schema(["a", "b"]), schema_name="tool_doc", max_tokens=200)
        assert text.startswith('{"description":"') and data is not None and set(data["parameters"]) == {"a", "b"}


def test_sigterm_while_the_embedded_model_answers_ends_the_command_and_its_server(tmp_path):
    """The server is a child process: stopping it never waits on a reply in flight (this once deadlocked)."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    def servers() -> set[str]:
        return set(subprocess.run(["pgrep", "-f", "otbench.llm.server"], capture_output=True, text=True,
                                  check=False).stdout.split())

    running_before = servers()  # another command's server on this machine is not ours to judge
    command = [sys.executable, "-m", "otbench.evaluate", "--setting", "names_only", "--limit", "3", "--no-cache",
               "--mlruns", str(tmp_path / "mlruns")]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                               env={**os.environ, "PYTHONPATH": os.getcwd()})
    printed: list[str] = []
    evaluating = threading.Event()

    def read_stderr() -> None:  # read to the end, so a full pipe can never block the command
        assert process.stderr is not None
        for chunk in iter(lambda: process.stderr.read(1), ""):
            printed.append(chunk)
            if chunk == ":" and "".join(printed[-9:]) == "evaluate:":  # the progress bar: model loaded, tasks started
                evaluating.set()
        evaluating.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    evaluating.wait()
    assert process.poll() is None, f"the command ended before evaluating: {''.join(printed)}"
    time.sleep(3)  # inside the first agent call
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=180)  # a hang guard, not a speed check: a deadlock never returns
    except subprocess.TimeoutExpired:
        status = Path(f"/proc/{process.pid}/status").read_text()
        process.send_signal(signal.SIGUSR1)  # the command prints every thread's stack
        time.sleep(2)
        process.kill()
        process.wait()
        reader.join(10)
        pytest.fail(f"SIGTERM did not end the command; {status}\n{''.join(printed)[-6000:]}")
    reader.join(10)
    assert code == 130 and "interrupted" in "".join(printed), "".join(printed)[-6000:]
    assert not servers() - running_before  # the command's server ended with it


def test_the_real_server_answers_only_its_key_and_no_browser_origin():
    """What the API key, CORS and Host settings of :mod:`otbench.llm.server` do on the real llama.cpp server."""
    import urllib.error
    import urllib.request

    from otbench.llm.server import NO_BROWSER_ORIGIN, EmbeddedServer, ServerSettings
    from otbench.llm.session import LMOptions, embedded_identity

    def status_and_headers(url, *, key=None, headers=(), method="POST"):
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 2})
        request = urllib.request.Request(url, data=body.encode() if method == "POST" else None, method=method,
                                         headers={"Content-Type": "application/json", **dict(headers),
                                                  **({"Authorization": f"Bearer {key}"} if key else {})})
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, response.headers
        except urllib.error.HTTPError as error:
            return error.code, error.headers

    path, _ = embedded_identity(LMOptions())
    server = EmbeddedServer(ServerSettings(path, threads=2))
    with server as url:
        chat = f"{url}/v1/chat/completions"
        assert status_and_headers(chat)[0] == 401
        assert status_and_headers(chat, key="a-guess")[0] == 401
        assert status_and_headers(chat, key=server.api_key)[0] == 200
        # a page elsewhere, or one that rebound its own name to 127.0.0.1, cannot use it: it has no key
        assert status_and_headers(chat, headers={"Origin": "https://evil.example", "Host": "evil.example"})[0] == 401
        for method in ("OPTIONS", "POST"):
            _, headers = status_and_headers(chat, key=server.api_key, method=method,
                                            headers={"Origin": "https://evil.example",
                                                     "Access-Control-Request-Method": "POST"})
            assert headers.get("Access-Control-Allow-Origin") in (None, NO_BROWSER_ORIGIN)
            assert headers.get("Access-Control-Allow-Credentials") != "true"
