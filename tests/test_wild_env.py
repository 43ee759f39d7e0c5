"""Wild's dialogue loop with scripted agents and LMs: history, steps, endings, the oracle, faults, transfer, learning."""

import argparse
import json
import re
import runpy
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest
from gbnf_matcher import Grammar
from scripted_lm import prompt_text, scripted_lm

from otbench import evaluate, export
from otbench.core.calls import CallResult, ToolCall
from otbench.core.faults import StateController, read_policy
from otbench.envs.bfcl.data import load_tests
from otbench.envs.bfcl.opacity import documented_tools
from otbench.envs.registry import EnvironmentOptions, add_environment_arguments, options_from_values, resolve
from otbench.envs.wild.env import ANSWER_CUE, ASK_TOOL, REPLY_TOOL, TOOLSET, WildEnvironment, read_position
from otbench.envs.wild.metrics import ERROR_CLASSES, METRIC_NAMES
from otbench.errors import ConfigError, DataError
from otbench.llm.grammar import schema_to_gbnf
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import AgentReply, FunctionCallingAgent, call_schema
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS, Toolbox
from otbench.optimizers.evidence import EvidenceBook
from otbench.optimizers.rivals import rivals
from otbench.optimizers.toolobserver.knobs import IMPROVED
from otbench.optimizers.toolobserver.teleprompter import ToolObserver, _answers_like_its_rivals
from otbench.run import evaluation, optimization
from otbench.run.docs_io import apply_docs
from otbench.run.settings import TrackingOptions


@pytest.fixture(scope="module")
def env():
    with WildEnvironment(setting="names_only") as opened:
        yield opened


def _dialogue(env, kind):
    """A test dialogue whose first task is of ``kind``."""
    return next(d for d in env.tasks("test") if d.tasks[0].kind == kind)


class ScriptedAgent:
    """Replies as given, one reply per call (None: an unreadable reply), and records what it was shown."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.seen = []

    def __call__(self, *, question, tools, **_):
        self.seen.append((question, [tool.name for tool in tools]))
        calls = self.replies.pop(0) if self.replies else [ToolCall(REPLY_TOOL, {"message": "ok"})]
        if calls is None:
            return AgentReply(raw="junk", calls=None, error="no JSON")
        return AgentReply(raw=json.dumps([c.to_dict() for c in calls]), calls=calls)


def test_the_agent_sees_the_dialogue_its_calls_and_their_results_and_each_turn_ends_on_an_answer(env):
    dialogue = _dialogue(env, "series")
    plan = env.oracle_plan(dialogue)
    first, second = plan[0][0], plan[0][1]
    agent = ScriptedAgent([[ToolCall("function_999", {})], first, second, plan[0][-1], None])
    trajectory = env.rollout(agent, env.toolbox(), dialogue)
    question, offered = agent.seen[0]
    assert offered[:2] == [REPLY_TOOL, ASK_TOOL]
    assert {env.to_real[name] for name in offered[2:]} == set(dialogue.functions)
    assert question == f"Conversation so far:\nUser: {dialogue.messages[0]}\n(Your turn.)"
    later = agent.seen[2][0]
    assert "Call: function_999({}) -> error: NameError: no tool named 'function_999'" in later
    assert f"Call: {first[0].name}(" in later and later.endswith(ANSWER_CUE)  # calls ran this turn: how to answer
    assert read_position(later) == (dialogue.messages[0], 0, 2)
    assert agent.seen[4][0].count("User: ") == 2  # the answer ended the turn; the next user message came
    outcome = trajectory.metrics
    assert outcome["task1.error"] == ERROR_CLASSES.index("wrong_tool")  # a failed call to no tool, then the right ones
    assert trajectory.parse_error == "no JSON" and "Raw replies:" in trajectory.reply
    assert [step.value for step in trajectory.steps][:3] == [0.0, 1.0, 1.0]


def test_an_output_python_cannot_print_is_shown_as_its_preview_and_the_dialogue_goes_on(env):
    """3000! has about 9,000 digits, more than Python prints: it once stopped a run after 31 of its 32 dialogues."""
    from otbench.optimizers.evidence import ToolEvidence

    factorial = env.to_shown["math_factorial"]
    agent = ScriptedAgent([[ToolCall(factorial, {"n": 3000})]])
    trajectory = env.rollout(agent, env.toolbox(), _dialogue(env, "single"))
    assert f'Call: {factorial}({{"n": 3000}}) -> "<integer with about 9' in agent.seen[1][0]
    assert json.loads(json.dumps(trajectory.to_dict()))["steps"][0]["ok"]
    evidence = ToolEvidence()
    evidence.add(trajectory.steps[0])
    assert evidence.examples[0][0] == {"n": 3000} and evidence.examples[0][1].startswith("<integer with about 9")


def test_every_prompt_of_a_dialogue_starts_with_the_one_before_it(env):
    dialogue = env.tasks("test")[5]
    spy = env.oracle_agent([dialogue])
    prompts = []

    def recording(**kwargs):
        prompts.append(kwargs["question"])
        return spy(**kwargs)

    env.rollout(recording, env.toolbox(), dialogue)
    assert len(prompts) > 4
    for before, after in pairwise(prompts):
        assert after.startswith(before.removesuffix("(Your turn.)").removesuffix(ANSWER_CUE))


def test_a_turn_ends_after_max_steps_and_an_unreadable_reply_ends_it_too():
    with WildEnvironment(setting="names_only", max_steps=2) as env:
        dialogue = _dialogue(env, "single")
        loop = [ToolCall("function_999", {})]
        agent = ScriptedAgent([loop, loop, None])
        trajectory = env.rollout(agent, env.toolbox(), dialogue)
        assert "(no answer)" in agent.seen[2][0] and agent.seen[2][0].count("User: ") == 2
        assert "(no answer)" in agent.seen[3][0] and agent.seen[3][0].count("User: ") == 3
        assert trajectory.metrics["task1.error"] == ERROR_CLASSES.index("wrong_tool")
        assert trajectory.metrics["task2.correct"] == 0.0


def test_without_the_answer_cue_every_prompt_only_says_it_is_the_agents_turn():
    with WildEnvironment(setting="names_only", answer_cue=False) as env:
        dialogue = _dialogue(env, "single")
        agent = ScriptedAgent([env.oracle_plan(dialogue)[0][0]])
        env.rollout(agent, env.toolbox(), dialogue)
        assert "Call: " in agent.seen[1][0] and agent.seen[1][0].endswith("\n(Your turn.)")


@pytest.mark.parametrize("refused", [True, False])
def test_an_exact_repeat_within_a_turn_is_not_run_and_a_reply_of_repeats_alone_ends_the_turn(refused):
    with WildEnvironment(setting="names_only", repeats_refused=refused) as env:
        dialogue = _dialogue(env, "single")
        right = env.oracle_plan(dialogue)[0][0]
        other = ToolCall("function_999", {})
        agent = ScriptedAgent([right, [*right, other], right, [*right, ToolCall(REPLY_TOOL, {"message": "done"})]])
        trajectory = env.rollout(agent, env.toolbox(), dialogue)
        second, third = agent.seen[2][0], agent.seen[3][0]
        assert second.count("User: ") == 1 and "Call: function_999({})" in second  # the new call of a mixed reply ran
        assert ("-> not run: the same call as above; its result is above" in second) is refused
        assert third.count("User: ") == (2 if refused else 1)  # with refusal, the reply of repeats alone ended turn 1
        assert len([step for step in trajectory.steps if step.call == right[0]]) == (2 if refused else 4)  # turn 2 runs it anew
        assert trajectory.metrics["refused_repeats"] == (2.0 if refused else 0.0)
        assert ("2 exact repeat(s) of a call were not run" in trajectory.feedback) is refused


@pytest.mark.parametrize("setting", ["names_only", "names_params", "gold"])
def test_the_oracle_scores_one_on_every_metric(setting):
    with WildEnvironment(setting=setting) as env:
        for split in ("train", "test"):
            tasks = env.tasks(split) if setting == "names_only" else env.tasks(split)[:8]
            trajectories = [env.rollout(env.oracle_agent(tasks), env.toolbox("gold"), task) for task in tasks]
            summary = env.summarise(trajectories)
            assert {name: summary[name] for name in METRIC_NAMES} == dict.fromkeys(METRIC_NAMES, 1.0)
            assert all(trajectory.success for trajectory in trajectories)


def test_gold_docs_keep_the_opaque_names_and_the_setting_shows_what_it_says(env):
    gold = env.toolbox("gold").toolset(TOOLSET)
    base = env.toolbox().toolset(TOOLSET)
    assert [tool.name for tool in gold] == [tool.name for tool in base] == [f"function_{i}" for i in range(1, 72)]
    assert all(tool.description for tool in gold) and not any(tool.description or tool.parameters for tool in base)
    with WildEnvironment(setting="names_params") as params:
        assert all(tool.parameters is not None and not tool.description for tool in params.toolbox().toolset(TOOLSET))
    with pytest.raises(ConfigError, match="setting"):
        WildEnvironment(setting="domains")


def test_the_function_calling_agent_holds_the_dialogue_through_a_scripted_lm_within_its_grammar(env):
    dialogue = _dialogue(env, "clarification")
    oracle = env.oracle_agent([dialogue])

    def reply(messages):
        question = prompt_text(messages).split("Request: ", 1)[1]
        return oracle(question=question).raw

    ledger = TokenLedger()
    agent = FunctionCallingAgent(instructions=env.agent_instructions)
    agent.lm = scripted_lm(reply, ledger=ledger)
    trajectory = env.rollout(agent, env.toolbox(), dialogue)
    assert trajectory.success and trajectory.metrics["task_accuracy"] == 1.0
    offered = [REPLY_TOOL, ASK_TOOL, *(t.name for t in env._offered(env.toolbox(), dialogue))]
    grammar = Grammar(schema_to_gbnf(call_schema(offered)))
    for turn in env.oracle_plan(dialogue):
        for calls in turn:
            text = json.dumps({"calls": [c.to_dict() for c in calls]}, separators=(",", ":"))
            assert grammar.accepts(text), text
    assert ledger.phase("agent").calls == sum(len(turn) for turn in env.oracle_plan(dialogue))


class RetryingOracle:
    """The oracle, re-sending the calls of its turn that failed (an agent that reads errors and retries)."""

    def __init__(self, env, tasks):
        self.oracle = env.oracle_agent(tasks)

    def __call__(self, *, question, **kwargs):
        lines = question.splitlines()
        turn = max(i for i, line in enumerate(lines) if line.startswith("User: "))
        calls = [(line[6:].split("(", 1)[0], line[6:].split("(", 1)[1].rsplit(") -> ", 1)) for line in lines[turn:]
                 if line.startswith("Call: ")]
        done = {(name, rest[0]) for name, rest in calls if not rest[1].startswith("error:")}
        failed = [(name, rest[0]) for name, rest in calls if rest[1].startswith("error:") and (name, rest[0]) not in done]
        if failed:
            retry = [ToolCall(name, json.loads(arguments)) for name, arguments in dict.fromkeys(failed)]
            return AgentReply(raw="retry", calls=retry)
        clean = "\n".join(line for line in lines if " -> error:" not in line)
        return self.oracle(question=clean, **kwargs)


def test_injected_failures_are_read_as_the_tools_replies_and_a_retry_makes_the_task_right():
    with WildEnvironment(setting="names_only", max_steps=8) as env:  # room for retries
        env.faults = StateController(read_policy("flaky-0.3"))
        tasks = env.tasks("test")[:8]
        with env.faults.phase("test"):
            trajectories = [env.rollout(RetryingOracle(env, tasks), env.toolbox(), task) for task in tasks]
        injected = [step for t in trajectories for step in t.steps if step.injected]
        assert injected and all(not step.ok for step in injected)
        summary = env.summarise(trajectories)
        assert summary["task_accuracy"] == 1.0 and summary["session_accuracy"] == 1.0
        with env.faults.phase("test"):  # an agent that does not retry: the calls that failed are not held against it
            plain = env.summarise([env.rollout(env.oracle_agent(tasks), env.toolbox(), task) for task in tasks])
        assert plain["task_accuracy"] < 1.0
        assert {name for name, count in plain.items() if name.startswith("errors/") and count} == {"errors/incomplete"}


def _bfcl_docs(tmp_path, setting="names_only"):
    """A BFCL docs file as an optimize run writes it: docs learned on two tests, one more left as it was."""
    tests = {test.id: test for test in load_tests()}
    chosen = ["exec_simple_66", "exec_multiple_33", "exec_simple_2"]
    toolbox = Toolbox({t: documented_tools(tests[t].functions, setting) for t in chosen},
                      meta={"env": "bfcl", "setting": setting, OPTIMIZED_TOOLSETS: chosen[:2]})
    toolbox.get("exec_simple_66", "function_1").with_docs(description="Greatest common divisor of a and b.")
    toolbox.get("exec_simple_2", "function_1").with_docs(description="not optimized: never applied")
    path = tmp_path / "final_docs.json"
    toolbox.write(path)
    names = [f["name"] for f in tests["exec_multiple_33"].functions]
    return path, names


def test_docs_learned_on_bfcl_apply_to_the_same_functions_here(env, tmp_path):
    path, multiple = _bfcl_docs(tmp_path)
    toolbox = env.toolbox()
    matched = apply_docs(toolbox, str(path), translate=env.docs_from)
    gcd = toolbox.get(TOOLSET, env.to_shown["math_gcd"])
    assert gcd.description == "Greatest common divisor of a and b."
    assert not toolbox.get(TOOLSET, env.to_shown["calculate_cosine_similarity"]).description  # not optimized
    assert matched == 1  # the functions the run left blank (exec_multiple_33's others) keep this setting's docs
    assert set(multiple) - {"math_gcd"}
    with pytest.raises(DataError, match="cannot be applied to wild"):
        env.docs_from(Toolbox({}, meta={"env": "chess"}))
    assert env.docs_from(env.toolbox()) is None  # its own docs apply as they are


def test_evaluate_runs_wild_prints_its_breakdown_and_takes_docs_from_a_bfcl_run(tmp_path, capsys):
    path, _ = _bfcl_docs(tmp_path)
    options = evaluate.EvaluateOptions(environment=EnvironmentOptions("wild"), agent="oracle", docs=str(path), limit=4,
                                       tracking=TrackingOptions(), progress=False)
    result = evaluate.run(options)
    assert {name: result.summary[name] for name in METRIC_NAMES} == dict.fromkeys(METRIC_NAMES, 1.0)
    assert result.tables["wild_breakdown"][0]["tasks"] == 16
    import mlflow

    run = mlflow.get_run(result.run_id)
    assert run.data.metrics["docs_matched"] > 0 and run.data.metrics["task_accuracy/switches/0"] == 1.0
    artefacts = {a.path for a in mlflow.MlflowClient().list_artifacts(result.run_id)}
    assert "wild_breakdown.json" in artefacts
    evaluate._print(result)
    printed = capsys.readouterr().out
    assert "wild_breakdown:" in printed and "long_range" in printed and "95% interval" in printed


def test_export_writes_the_shared_toolset_for_other_agents(env, tmp_path, capsys):
    docs = tmp_path / "docs.json"
    env.toolbox("gold").write(docs)
    assert export.main([str(docs), "--toolset", TOOLSET]) == 0
    tools = json.loads(capsys.readouterr().out)
    assert len(tools) == 71 and tools[0]["function"]["name"] == "function_1"


def test_offline_toolobserver_learns_each_functions_doc_from_its_own_calls_spread_only_among_its_rivals(env):
    train = env.tasks("train")[:3]
    oracle = env.oracle_agent(train)
    prompts = []

    def agent_reply(messages):
        return oracle(question=prompt_text(messages).split("Request: ", 1)[1]).raw

    def editor_reply(messages):
        prompts.append(prompt_text(messages))
        return json.dumps({"description": "Learned from its calls."})

    ledger = TokenLedger()
    agent, editor = FunctionCallingAgent(instructions=env.agent_instructions), DocEditor()
    agent.lm = scripted_lm(agent_reply, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(editor_reply, ledger=ledger, phase="editor")
    optimizer = ToolObserver(env=env, editor=editor, mode="offline", max_iterations=1, progress=False, gate=False,
                             improvements=replace(IMPROVED, drop_contradicted=False))
    program = optimizer.compile(ToolAgentProgram(env.toolbox(), agent), trainset=train)
    used = {env.to_shown[c.function] for d in train for t in d.tasks for c in t.calls}
    trajectories = optimizer.final_trajectories
    others = rivals(program.toolbox.toolset(TOOLSET))  # tools that require the same parameters
    sent = {step.call.name for t in trajectories for step in t.steps}
    assert sent - used and all(name in used or set(others.get(name, ())) & used for name in sent)
    # each tool's learned schema and its usage counts beside what its calls showed
    assert all("worked: function_" in p and "called " in p and "Requests it was called for" not in p for p in prompts)
    learned = [program.toolbox.get(TOOLSET, name) for name in sent]
    assert all(tool.parameters_learned for tool in learned)
    assert all(tool.description == "Learned from its calls." for tool in learned if tool.name in used)


@pytest.mark.parametrize("from_calls", [True, False])
def test_offline_toolobserver_describes_a_tool_of_its_own_interface_from_its_calls_where_calls_are_scored(from_calls):
    """With the schemas shown (names_params) nothing is hidden, yet the calls are scored; a tool that shares its
    parameters with no other is described from its calls, and the ablation shows the editor its counts alone."""
    with WildEnvironment(setting="names_params") as shown:
        train = shown.tasks("train")[:2]
        oracle = shown.oracle_agent(train)
        prompts = []

        def editor_reply(messages):
            prompts.append(prompt_text(messages))
            return json.dumps({"description": "Learned."})

        ledger = TokenLedger()
        agent, editor = FunctionCallingAgent(instructions=shown.agent_instructions), DocEditor()
        agent.lm = scripted_lm(lambda m: oracle(question=prompt_text(m).split("Request: ", 1)[1]).raw, ledger=ledger,
                               phase="agent")
        editor.lm = scripted_lm(editor_reply, ledger=ledger, phase="editor")
        optimizer = ToolObserver(env=shown, editor=editor, mode="offline", max_iterations=1, progress=False, gate=False,
                                 improvements=replace(IMPROVED, describe_from_calls=from_calls))
        program = optimizer.compile(ToolAgentProgram(shown.toolbox(), agent), trainset=train)
    others = rivals(program.toolbox.toolset(TOOLSET))
    own = [p for p in prompts if re.search(r"Tool: (function_\d+)", p).group(1) not in others]
    assert own and all("called " in p for p in own)  # the counts, either way
    assert all(("worked: function_" in p) is from_calls for p in own)


def test_rivals_are_alike_only_when_they_answer_in_the_same_kinds_of_value():
    book = EvidenceBook()
    names = {"coordinates_by_ip", "zip_by_ip", "engine_1", "engine_2", "lonely"}
    book.add("t", [CallResult(ToolCall("coordinates_by_ip", {"ip_address": "1.2.3.4"}), True, output={"lat": 1.0}),
                   CallResult(ToolCall("zip_by_ip", {"ip_address": "1.2.3.4"}), True, output="80202"),
                   CallResult(ToolCall("engine_1", {"fen": "x"}), True, output="e2e4"),
                   CallResult(ToolCall("engine_2", {"fen": "x"}), True, output="d2d4")], names)
    shared = {"coordinates_by_ip": ("zip_by_ip",), "zip_by_ip": ("coordinates_by_ip",), "engine_1": ("engine_2",),
              "engine_2": ("engine_1",)}
    assert _answers_like_its_rivals("engine_1", shared, book, "t")  # moves both: their counts tell them apart
    assert not _answers_like_its_rivals("zip_by_ip", shared, book, "t")  # text against an object: their calls do
    assert not _answers_like_its_rivals("lonely", shared, book, "t")


def test_wild_options_are_checked_before_anything_loads():
    parser = argparse.ArgumentParser()
    add_environment_arguments(parser)
    options = resolve(options_from_values(vars(parser.parse_args(["--env", "wild", "--setting", "names_params"]))))
    assert options.setting == "names_params" and options.own == {"max_steps": 5, "refuse_repeats": True, "answer_cue": True}
    with pytest.raises(ConfigError, match="unknown setting 'domains'"):
        resolve(options_from_values(vars(parser.parse_args(["--env", "wild", "--setting", "domains"]))))
    assert resolve(EnvironmentOptions("wild")).setting == "names_only"


def test_the_python_example_of_the_docs_runs_as_printed(tmp_path, capsys):
    page = Path(__file__).resolve().parents[1] / "docs/environments/wild.md"
    (code,) = re.findall(r"```python\n(.*?)```", page.read_text(), re.DOTALL)
    (tmp_path / "example.py").write_text(code)
    runpy.run_path(str(tmp_path / "example.py"), run_name="__main__")
    printed = capsys.readouterr().out
    assert "1.0 task 1 (" in printed and "Raw replies:" in printed


def _every_role(env):
    """Scripted replies for every prompt an optimize run makes: the agent answers as the oracle."""
    oracle = env.oracle_agent(env.tasks("train") + env.tasks("test"))

    def reply(messages):
        content = prompt_text(messages)
        if "Conversation so far:" in content:
            return oracle(question=content.split("Request: ", 1)[1]).raw
        for marker, answer in (('{"updates"', {"updates": []}), ('{"purpose"', {"purpose": "Does something."}),
                               ('{"scenario"', {"scenario": "when asked", "example_arguments": {}}),
                               ('{"arguments"', {"arguments": {}}), ('{"query"', {"query": "do it"}),
                               ('{"score"', {"score": 5})):
            if marker in content:
                return json.dumps(answer)
        return json.dumps({"description": "Refined doc."})

    return reply


@pytest.mark.parametrize("optimizer, switches", [("toolobserver", {}), ("easytool", {"probe": True}),
                                                 ("gepa", {"probe": True}), ("play2prompt", {})])
def test_every_optimizer_learns_offline_on_train_dialogues_and_is_scored_on_test_ones(env, optimizer, switches,
                                                                                      monkeypatch, tmp_path):
    from contextlib import contextmanager

    from otbench import optimize

    reply = _every_role(env)

    @contextmanager
    def scripted(options, ledger, phases=("agent",)):
        yield {phase: scripted_lm(reply, ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(optimization, "open_lms", scripted)
    own = {"toolobserver": {"iterations": 1}, "play2prompt": {"p2p_samples": 1}, "gepa": {"gepa_budget": 2}}
    values = {"optimizer": optimizer, "env": "wild", "limit": 2, "test_limit": 3, "quiet": True, "out": str(tmp_path),
              **own.get(optimizer, {}), **switches}
    result = optimize.run(optimize.options_from(values))
    import mlflow

    run = mlflow.get_run(result.run_id)
    assert run.data.metrics["test_task_accuracy"] == 1.0 and run.data.metrics["test_n"] == 3
    artefacts = {a.path for a in mlflow.MlflowClient().list_artifacts(result.run_id)}
    assert "test_wild_breakdown.json" in artefacts


def test_compare_scores_every_row_of_wild_on_the_same_test_dialogues(env, monkeypatch, tmp_path, capsys):
    from contextlib import contextmanager

    from otbench import compare
    from otbench.exits import run_main

    reply = _every_role(env)

    @contextmanager
    def scripted(options, ledger, phases=("agent",)):
        yield {phase: scripted_lm(reply, ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(evaluation, "open_lms", scripted)
    monkeypatch.setattr(optimization, "open_lms", scripted)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        run_main(compare.main, ["--env", "wild", "--limit", "2", "--test-limit", "3", "--optimizers", "easytool",
                                "--plots", str(tmp_path), "--json", "--quiet"])
    result = json.loads(capsys.readouterr().out)
    assert stop.value.code == 0 and result["learning"] == "offline"
    rows = {row["row"]: row for row in result["rows"]}
    assert list(rows) == ["base", "gold", "+ET"]
    assert all(row["task_accuracy"] == 1.0 and row["session_accuracy"] == 1.0 for row in rows.values())
