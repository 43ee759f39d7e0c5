"""An MCP server as an environment, on a tiny stdio server written with the SDK (``mcp_toy_server.py``): settings,
opaque names, the task file, metrics, the oracle, every optimizer, a server's files restored between tasks, and the
command line."""

import json
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import dspy
import pytest
from scripted_lm import prompt_text, scripted_lm
from test_optimize_cli import any_role_reply

from otbench import MCPEnvironment, evaluate, optimize
from otbench.core.calls import ToolCall
from otbench.core.trajectory import Trajectory
from otbench.envs.mcp.env import Fixture
from otbench.envs.mcp.metrics import found_answer
from otbench.envs.mcp.shown import shown_names
from otbench.evals.harness import run_rollouts
from otbench.exits import run_main
from otbench.optimizers.easytool import EasyTool
from otbench.optimizers.gepa import GEPA
from otbench.optimizers.play2prompt import Play2Prompt
from otbench.optimizers.toolobserver.teleprompter import ToolObserver
from otbench.run import evaluation, optimization

TESTS = Path(__file__).resolve().parent
TOY = f"{sys.executable} {TESTS / 'mcp_toy_server.py'}"
REAL_NAMES = ["add", "price", "total", "echo", "write_note", "read_notes"]

TOY_TASKS = [
    {"question": "What is the price of a melon?", "answer": 3.2, "metric": "numeric",
     "calls": [{"name": "price", "arguments": {"item": "melon"}}]},
    {"question": "Add 2 and 40.", "answer": 42, "metric": "exact", "calls": [{"name": "add", "arguments": {"a": 2, "b": 40}}]},
    {"question": "Say hello back to me.", "answer": "hello", "calls": [{"name": "echo", "arguments": {"text": "hello"}}]},
    {"question": "What do an apple and a plum cost together?", "answer": 0.8, "metric": "numeric",
     "calls": [{"name": "total", "arguments": {"items": ["apple", "plum"]}}]},
    {"question": "How much is a pear?", "answer": 0.75, "metric": "numeric",
     "calls": [{"name": "price", "arguments": {"item": "pear"}}]},
    {"question": "Add 19 and 23.", "answer": 42, "metric": "exact", "calls": [{"name": "add", "arguments": {"a": 19, "b": 23}}]},
]


def write_tasks(folder: Path, tasks=TOY_TASKS) -> Path:
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return path


def toy_env(tmp_path, *, flags="", **options):
    return MCPEnvironment(f"{TOY} {flags}".strip(), write_tasks(tmp_path), **options)


def agent_reply_for(shown_of):
    """A scripted agent that answers each toy task with its gold calls under the names the agent is shown; the other
    roles answer as ``any_role_reply``."""
    by_question = {task["question"]: task["calls"] for task in TOY_TASKS}

    def reply(messages):
        text = prompt_text(messages)
        request = re.search(r"Request: (.*)$", text, re.MULTILINE)
        if '{"calls"' in text and request and request.group(1).strip() in by_question:
            calls = by_question[request.group(1).strip()]
            return json.dumps({"calls": [{"name": shown_of[call["name"]], "arguments": call["arguments"]}
                                         for call in calls]})
        return any_role_reply(messages)

    return reply


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    with toy_env(tmp_path_factory.mktemp("toy")) as env:
        yield env


# -- what the agent is shown -----------------------------------------------------------------------------------
def test_base_shows_the_server_as_it_advertises_itself(toy):
    tools = {tool.name: tool for tool in toy.toolbox().toolset("mcp")}
    assert list(tools) == REAL_NAMES and toy.setting == "base"
    assert tools["price"].description == "Price."
    assert [(p.name, p.type, p.required) for p in tools["total"].parameters] == [("items", "array", True),
                                                                                 ("quantity", "integer", False)]
    assert tools["total"].parameters[1].default == 1
    assert toy.toolbox().meta["mcp_tools"] == {name: name for name in REAL_NAMES}


def test_opaque_settings_number_the_tools_alike_every_time_and_hide_what_they_must(tmp_path):
    assert shown_names(REAL_NAMES, "names_only") == shown_names(list(reversed(REAL_NAMES)), "names_only")
    with toy_env(tmp_path, setting="names_only") as env:
        shown = env.toolbox().toolset("mcp")
        assert [tool.name for tool in shown] == [f"function_{n}" for n in range(1, 7)]
        assert all(tool.description == "" and tool.parameters is None for tool in shown)
        assert sorted(env.toolbox().meta["mcp_tools"].values()) == sorted(REAL_NAMES)
        price = env.shown_of["price"]
        missing = env.execute("mcp", ToolCall(price, {}))
        assert not missing.ok and price in missing.error and "price" not in missing.error.replace(price, "")
        assert env.execute("mcp", ToolCall(price, {"item": "melon"})).output == 3.2
        assert env.execute("mcp", ToolCall("price", {"item": "melon"})).error == "NameError: no tool named 'price'"
    with toy_env(tmp_path, setting="names_params") as env:
        total = {tool.name: tool for tool in env.toolbox().toolset("mcp")}[env.shown_of["total"]]
        assert total.description == "" and [p.name for p in total.parameters] == ["items", "quantity"]
        assert set(total.parameter_descriptions.values()) == {""}


def test_gold_docs_show_the_true_words_over_the_servers_schema(tmp_path):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"tools": {"price": {"description": "The unit price of a fruit in euros.",
                                                    "parameters": {"item": "apple, pear, melon or plum"},
                                                    "returns": "A number."}}}))
    with toy_env(tmp_path, setting="gold", gold_docs=gold) as env:
        price = {tool.name: tool for tool in env.toolbox().toolset("mcp")}["price"]
        assert price.description == "The unit price of a fruit in euros." and price.returns == "A number."
        assert price.parameter_descriptions == {"item": "apple, pear, melon or plum"}
    with toy_env(tmp_path, setting="names_only", gold_docs=gold) as env:
        docs = {tool.name: tool for tool in env.toolbox("gold").toolset("mcp")}
        assert docs[env.shown_of["price"]].description.startswith("The unit price")
        assert docs[env.shown_of["add"]].description == "Adds."  # not in the gold file: the server's own words
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tools": {"nope": {"description": "x"}}}))
    with pytest.raises(ValueError, match="'nope' is none of the server's tools"):
        toy_env(tmp_path, gold_docs=bad)
    with pytest.raises(ValueError, match="give them"):
        toy_env(tmp_path, setting="gold")


# -- tasks, metrics, the oracle --------------------------------------------------------------------------------
def test_the_oracle_replays_the_calls_and_scores_one_in_every_setting(tmp_path):
    for setting in ("base", "names_only", "names_params"):
        with toy_env(tmp_path, setting=setting) as env:
            for split in ("train", "test"):
                tasks = env.tasks(split)
                trajectories = run_rollouts(env, env.oracle_agent(tasks), env.toolbox(), tasks, num_threads=3,
                                            progress=False)
                assert env.summarise(trajectories) == {"score": 1.0, "n": float(len(tasks))}


def test_lines_without_a_split_are_split_by_position_and_bad_lines_are_named(tmp_path):
    with toy_env(tmp_path) as env:
        assert [task.question for task in env.tasks("train")] == [TOY_TASKS[0]["question"], TOY_TASKS[3]["question"]]
        assert len(env.tasks("test")) == 4
    for line, message in [("not json", ":1: not valid JSON"), ('{"answer": 1}', "needs a question"),
                          ('{"question": "q"}', "needs an answer"),
                          ('{"question": "q", "answer": 1, "metric": "fuzzy"}', "metric 'fuzzy' is none of"),
                          ('{"question": "q", "answer": 1, "calls": "price"}', "calls must be a non-empty list")]:
        path = tmp_path / "bad.jsonl"
        path.write_text(line + "\n")
        with pytest.raises(ValueError, match=message):
            MCPEnvironment(TOY, path)
    lonely = tmp_path / "one.jsonl"
    lonely.write_text(json.dumps(TOY_TASKS[0]) + "\n")
    with pytest.raises(ValueError, match="no test task"):
        MCPEnvironment(TOY, lonely)
    wrong = write_tasks(tmp_path, [{**TOY_TASKS[0], "calls": [{"name": "prices", "arguments": {}}]}, *TOY_TASKS[1:]])
    with pytest.raises(ValueError, match="'prices', which is none of the server's tools"):
        MCPEnvironment(TOY, wrong)


@pytest.mark.parametrize(("metric", "answer", "outputs", "found"), [
    ("exact", 42, [41, 42], True), ("exact", "42", [42], False), ("exact", "hi", ["  hi "], True),
    ("exact", {"a": [1, 2]}, [{"a": [1, 2.0]}], True), ("exact", True, [1], False),
    ("numeric", 0.8, ["total: 0.8000001 EUR"], True), ("numeric", 0.8, [{"total": 0.81}], False),
    ("numeric", "3.5", ["+3.5h"], True),
    ("contains", "Ana Costa", ["[{'name': 'ANA  costa'}]"], True), ("contains", ["a", "z"], ["abc"], False),
    ("contains", '"is_dst": false', [{"is_dst": False}], True),
])
def test_answer_metrics_read_outputs_as_documented(metric, answer, outputs, found):
    assert found_answer(metric, answer, outputs, 1e-6) is found


def test_the_calls_metric_a_metric_of_your_own_and_too_many_calls(tmp_path):
    with toy_env(tmp_path, metric="calls") as env:
        task = env.tasks("test")[0]  # Add 2 and 40.
        good = env.rollout(env.oracle_agent([task]), env.toolbox(), task)
        assert good.metrics == {"score": 1.0}
    seen = []

    def mine(example, trajectory):
        seen.append(trajectory.outputs)
        return dspy.Prediction(score=0.5, feedback="half")

    with toy_env(tmp_path, metric=mine) as env:
        task = env.tasks("test")[0]
        task_without_metric = dspy.Example(**{k: v for k, v in task.items() if k != "metric"})
        judged = env.rollout(env.oracle_agent([task_without_metric]), env.toolbox(), task_without_metric)
        assert (judged.metrics, judged.feedback, seen) == ({"score": 0.5}, "half", [[42]])

    class Twice:
        def __call__(self, **_):
            from otbench.modules.agent import AgentReply
            calls = [ToolCall("add", {"a": 2, "b": 40})] * 2
            return AgentReply(raw="", calls=calls)

    with toy_env(tmp_path) as env:
        greedy = env.rollout(Twice(), env.toolbox(), env.tasks("test")[0])
        assert greedy.metrics == {"score": 0.0} and "more calls than the request needs" in greedy.feedback
        assert "42" not in greedy.feedback


# -- optimizers, learned docs, a server's files --------------------------------------------------------------------
def test_every_optimizer_learns_on_an_mcp_server_and_learned_docs_call_it(tmp_path):
    with toy_env(tmp_path, setting="names_only") as env, dspy.context(lm=scripted_lm(agent_reply_for(env.shown_of))):
        for optimizer in (ToolObserver(env=env, max_iterations=1, progress=False), EasyTool(env=env, progress=False),
                          Play2Prompt(env=env, initial_samples=1, progress=False), GEPA(env=env, budget=2, progress=False)):
            learned = optimizer.compile(env.program(), trainset=env.tasks("train"))
            assert learned.detailed_results.iterations, type(optimizer).__name__
            scored = run_rollouts(env, learned.agent, learned.toolbox, env.tasks("test"), progress=False)
            assert env.summarise(scored)["score"] == 1.0
        tools = env.dspy_tools(env.toolbox())
        assert {tool.name: tool for tool in tools}[env.shown_of["add"]](a=1, b=2) == 3


def _notes(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("first note\n")


def test_a_servers_files_are_built_fresh_and_restored_after_every_task(tmp_path):
    tasks = [{"question": f"Note {word}.", "answer": word, "calls": [{"name": "write_note", "arguments": {"text": word}}]}
             for word in ("one", "two", "three", "four")]
    reading = {"question": "Read the notes.", "answer": "first note", "calls": [{"name": "read_notes", "arguments": {}}]}
    env = MCPEnvironment(f"{TOY}", write_tasks(tmp_path, [*tasks, reading]), fixture=Fixture(_notes))
    with env:
        all_tasks = env.tasks("train") + env.tasks("test")
        run_rollouts(env, env.oracle_agent(all_tasks), env.toolbox(), all_tasks, num_threads=4, progress=False)
        after = env.execute("mcp", ToolCall("read_notes", {}))
        assert after.output == "first note\n"  # every task's note was undone
        folder = env._folder
    assert not folder.exists()  # removed with the environment


# -- the command line ------------------------------------------------------------------------------------------
def _run(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    out, err = capsys.readouterr()
    return stop.value.code, out, err


def test_evaluate_runs_the_oracle_and_prints_json(tmp_path, capsys):
    code, out, err = _run(evaluate.main, ["--env", "mcp", "--mcp", TOY, "--tasks", str(write_tasks(tmp_path)),
                                          "--agent", "oracle", "--json", "--quiet"], capsys)
    assert code == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["score"] == 1.0 and summary["n"] == 4 and summary["run_id"]


@pytest.mark.parametrize(("argv", "message"), [
    ([], "needs a server"),
    (["--mcp", TOY, "--mcp-url", "http://127.0.0.1:1/mcp"], "needs one server, got 2: --mcp, --mcp-url"),
    (["--mcp", TOY], "--tasks FILE.jsonl"),
    (["--mcp", TOY, "--tasks", "/nonexistent.jsonl"], "no such file"),
    (["--mcp", TOY, "--tasks", "TASKS", "--setting", "gold"], "give them (--gold-docs FILE)"),
    (["--mcp", TOY, "--tasks", "TASKS", "--metric", "nosuchmodule:score"], "cannot import nosuchmodule"),
    (["--mcp", TOY, "--tasks", "TASKS", "--metric", "fuzzy"], "expected one of contains, exact"),
    (["--mcp-url", "ftp://host/mcp", "--tasks", "TASKS"], "expected an http:// or https:// URL"),
    (["--mcp", "/nonexistent/server", "--tasks", "TASKS"], "no program '/nonexistent/server'"),
    (["--mcp", f"{TOY} --crash-at-start", "--tasks", "TASKS"], "its last words: toy server: cannot start"),
    (["--mcp-server", "nosuch"], "unknown --mcp-server 'nosuch'"),
    (["--mcp", TOY, "--tasks", "TASKS", "--metric", "json:loads"], "does not take (example, trajectory)"),
    (["--mcp-url", "http://[::1", "--tasks", "TASKS"], "not a URL"),
    (["--mcp-url", "http://127.0.0.1:x/mcp", "--tasks", "TASKS"], "not a URL"),
    (["--mcp", TOY, "--tasks", "DEEP"], "nested too deep to be a task"),
    (["--mcp", TOY, "--tasks", "NO_ANSWER"], "needs an answer"),
    (["--mcp", TOY, "--tasks", "EMPTY"], "no train task"),
    (["--mcp", TOY, "--tasks", "TASKS", "--setting", "gold", "--gold-docs", "DEEP"], "nested too deep"),
])
def test_bad_options_are_one_line_and_exit_2_before_a_store_is_made(argv, message, tmp_path, capsys):
    tasks = str(write_tasks(tmp_path))
    files = {"TASKS": tasks, "DEEP": tmp_path / "deep.jsonl", "NO_ANSWER": tmp_path / "no-answer.jsonl",
             "EMPTY": tmp_path / "empty.jsonl"}
    files["DEEP"].write_text('{"question": "q", "answer": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    files["NO_ANSWER"].write_text('{"question": "What does a pear cost?"}\n' * 3)
    files["EMPTY"].write_text("")
    argv = [str(files.get(part, part)) for part in argv]
    store = tmp_path / "store"
    code, _, err = _run(evaluate.main, ["--env", "mcp", *argv, "--agent", "oracle", "--quiet", "--mlruns", str(store)],
                        capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not store.exists()


@pytest.fixture
def scripted_toy_lms(monkeypatch):
    shown_of = {name: name for name in REAL_NAMES}

    @contextmanager
    def open_scripted(options, ledger, phases=("agent",)):
        yield {phase: scripted_lm(agent_reply_for(shown_of), ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(evaluation, "open_lms", open_scripted)
    monkeypatch.setattr(optimization, "open_lms", open_scripted)


def test_optimize_learns_offline_and_writes_docs_that_name_the_servers_tools(scripted_toy_lms, tmp_path, capsys):
    argv = ["--env", "mcp", "--mcp", TOY, "--tasks", str(write_tasks(tmp_path)), "--optimizer", "toolobserver",
            "--iterations", "1", "--json", "--quiet", "--out", str(tmp_path / "docs")]
    code, out, err = _run(optimize.main, argv, capsys)
    assert code == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["after"]["score"] == 1.0
    docs = json.loads((tmp_path / "docs" / summary["run_id"] / "final_docs.json").read_text())
    assert docs["meta"]["mcp_tools"]["price"] == "price" and "mcp" in docs["toolsets"]


def test_outputs_and_trajectories_stay_data(toy):
    result = toy.execute("mcp", ToolCall("echo", {"text": "[1, 2]"}))
    assert result.output == [1, 2]  # text that holds JSON is read as JSON, nothing else
    literal = toy.execute("mcp", ToolCall("echo", {"text": "__import__('os').getcwd()"}))
    assert literal.output == "__import__('os').getcwd()"
    trajectory = Trajectory("t", "mcp", "q", steps=[literal])
    assert trajectory.outputs == ["__import__('os').getcwd()"]
