"""ToolObserver's improvements, each on its own: probing, facts, a learned schema, per-tool docs, the accept check."""

import json
import re

from recorder import Recorder
from scripted_lm import prompt_text, scripted_lm
from toy_env import ToyEnvironment, docs_aware_agent_reply

from otbench.core.calls import CallResult, ToolCall
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import Toolbox
from otbench.optimizers.evidence import EvidenceBook, read_error
from otbench.optimizers.toolobserver.knobs import IMPROVED, PAPER, Improvements
from otbench.optimizers.toolobserver.teleprompter import ToolObserver


def describing_editor(messages):
    """Scripted editor for per-tool docs: reads the worked calls in the facts and says what the tool computes."""
    content = prompt_text(messages)
    worked = re.findall(r"worked: function_\d\(a=(\d+), b=(\d+)\) returned (\d+)", content)
    adds = any(int(a) + int(b) == int(out) for a, b, out in worked)
    text = "Adds a and b." if adds else "Multiplies a and b." if worked else "Takes a and b."
    return json.dumps({"description": text, "parameters": {"a": "first number", "b": "second number"}})


def _setup(env, editor_reply):
    ledger = TokenLedger()
    agent, editor = FunctionCallingAgent(), DocEditor()
    agent.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(editor_reply, ledger=ledger, phase="editor")
    return ToolAgentProgram(env.toolbox(), agent), editor, ledger


def test_errors_name_the_missing_and_the_rejected_parameters():
    missing = "TypeError: f() missing 3 required positional arguments: 'a', 'b', and 'c'"
    assert read_error(missing) == (["a", "b", "c"], None)
    assert read_error("TypeError: f() missing 1 required argument: 'fen'") == (["fen"], None)
    assert read_error("TypeError: f() got an unexpected keyword argument 'x'") == ([], "x")


def test_probing_shows_the_agent_a_learned_schema_before_its_first_attempt():
    env = ToyEnvironment(2, hide_parameters=True)
    program, editor, _ = _setup(env, describing_editor)
    program = ToolObserver(env=env, editor=editor, improvements=IMPROVED, progress=False).compile(program, trainset=env.tasks())
    first_prompt = prompt_text(program.agent.lm.history[0]["messages"])
    assert '"required": ["a", "b"]' in first_prompt
    tool = program.toolbox.get("t0", "function_1")
    assert tool.parameters_learned and [p.name for p in tool.parameters] == ["a", "b"]
    assert tool.parameter_descriptions == {"a": "first number", "b": "second number"}
    assert program.toolbox.get("t0", "function_2").description == "Multiplies a and b."


def test_the_paper_variant_learns_no_schema():
    env = ToyEnvironment(1, hide_parameters=True)
    program, editor, _ = _setup(env, lambda m: '{"updates": []}')
    program = ToolObserver(env=env, editor=editor, improvements=PAPER, progress=False).compile(program, trainset=env.tasks())
    assert program.toolbox.get("t0", "function_1").parameters is None


def test_per_tool_docs_ask_once_per_tool_and_again_only_after_a_failure_on_new_evidence():
    env = ToyEnvironment(1, hide_parameters=True)
    program, editor, _ledger = _setup(env, describing_editor)
    recorder = Recorder()
    program = ToolObserver(env=env, editor=editor, improvements=IMPROVED, tracker=recorder, progress=False).compile(
        program, trainset=env.tasks())
    jobs = [[e.job for e in record.exchanges] for record in recorder.records]
    # step 0: both tools are blank, each gets its own call; step 1: function_2 worked again, nothing to rewrite
    assert jobs == [["describe", "describe"], []]
    assert all("required parameters: a, b" in e.prompt for e in recorder.records[0].exchanges)
    assert program.toolbox.get("t0", "function_2").description == "Multiplies a and b."


def test_facts_are_read_from_the_tools_answers_not_from_gold():
    book = EvidenceBook()
    missing = "TypeError: f() missing 1 required positional argument: 'n'"
    book.add("t", [CallResult(ToolCall("f", {}), False, error=missing),
                   CallResult(ToolCall("f", {"n": 4}), True, output=24),
                   CallResult(ToolCall("f", {"k": 1}), False,
                              error="TypeError: f() got an unexpected keyword argument 'k'"),
                   CallResult(ToolCall("g", {}), True, output=1)], known={"f"})
    facts = book.of("t", "f").facts()
    assert facts[0].startswith("required parameters: n") and "not parameters (rejected as unexpected): k" in facts
    assert "worked: f(n=4) returned 24" in facts and "g" not in book.tools["t"]
    # a whole number worked: that shows a number works, not that a fraction fails
    assert [(p.name, p.type, p.required) for p in book.of("t", "f").parameters()] == [("n", "number", True)]


def test_an_edit_after_which_more_calls_fail_is_undone():
    env = ToyEnvironment(1, hide_parameters=True)
    calls = iter(range(100))

    def agent_reply(messages):  # uses the learned schema at first, then drops an argument once docs change
        content = prompt_text(messages)
        if next(calls) == 0:
            return json.dumps({"calls": [{"name": "function_1", "arguments": {"a": 2, "b": 3}}]})
        return json.dumps({"calls": [{"name": "function_1", "arguments": {"a": 2}}]}) if "Misleading" in content \
            else docs_aware_agent_reply(messages)

    program, editor, _ = _setup(env, lambda m: json.dumps({"description": "Misleading doc.",
                                                           "parameters": {"a": "x", "b": "y"}}))
    program.agent.lm = scripted_lm(agent_reply, phase="agent")
    knobs = Improvements(probe=True, facts=True, learned_schema=True, per_tool=True, accept_check=True)
    program = ToolObserver(env=env, editor=editor, improvements=knobs, progress=False).compile(program, trainset=env.tasks())
    assert program.toolbox.get("t0", "function_1").description == ""  # back to the docs of the better attempt


def test_learned_schemas_travel_with_the_docs_and_stay_refused_where_the_setting_shows_one(tmp_path):
    hidden = ToyEnvironment(1, hide_parameters=True)
    program, editor, _ = _setup(hidden, describing_editor)
    program = ToolObserver(env=hidden, editor=editor, improvements=IMPROVED, max_iterations=1, progress=False).compile(
        program, trainset=hidden.tasks())
    data = program.toolbox.to_json()
    assert data["toolsets"]["t0"][0]["parameters_learned"] is True
    fresh = hidden.toolbox()
    fresh.adopt_docs(Toolbox.from_json(data))
    assert [p.name for p in fresh.get("t0", "function_1").parameters] == ["a", "b"]
    program.toolbox.save(str(tmp_path / "state.json"))
    loaded = hidden.toolbox()
    loaded.load(str(tmp_path / "state.json"))
    assert loaded.get("t0", "function_1").parameters == program.toolbox.get("t0", "function_1").parameters
    shown = ToyEnvironment(1).toolbox()  # parameters shown by the setting are never replaced
    before = shown.get("t0", "function_1").parameters
    shown.adopt_docs(Toolbox.from_json(data))
    assert shown.get("t0", "function_1").parameters == before


def test_probing_is_offered_to_the_competitors_and_shows_them_the_learned_schema():
    from otbench.optimizers.easytool import EasyTool, EasyToolWriter
    from otbench.optimizers.play2prompt import DocRefiner, Play2Prompt, ToolPlayer

    env = ToyEnvironment(1, hide_parameters=True)
    seen = []

    def writer(messages):
        seen.append(prompt_text(messages))
        return json.dumps({"purpose": "Computes.", "scenario": "always", "example_arguments": {}})

    program, _, _ = _setup(env, writer)
    easy = EasyToolWriter()
    easy.lm = scripted_lm(writer, phase="editor")
    program = EasyTool(env=env, writer=easy, probe=True, progress=False).compile(program, trainset=env.tasks())
    assert program.toolbox.get("t0", "function_1").parameters_learned and '"name": "a"' in seen[0]

    program, _, _ = _setup(env, writer)
    player, refiner = ToolPlayer(), DocRefiner()
    player.lm = scripted_lm(lambda m: json.dumps({"arguments": {"a": 1, "b": 2}, "query": "add 2 and 3", "score": 5}))
    refiner.lm = scripted_lm(lambda m: json.dumps({"description": "Computes."}))
    program = Play2Prompt(env=env, player=player, refiner=refiner, probe=True, initial_samples=1, progress=False).compile(
        program, trainset=env.tasks())
    first_proposal = prompt_text(player.lm.history[0]["messages"])
    assert '"name": "a"' in first_proposal and program.toolbox.get("t0", "function_2").parameters_learned
    without, _, _ = _setup(env, writer)
    without = EasyTool(env=env, writer=easy, progress=False).compile(without, trainset=env.tasks())
    assert without.toolbox.get("t0", "function_1").parameters is None  # the competitors' own protocol by default


def test_describe_keeps_only_text_fields_of_the_editors_reply():
    """A number or a list where text belongs is no description: it is dropped, not kept as its Python repr."""
    editor = DocEditor()
    editor.lm = scripted_lm(lambda m: json.dumps({"description": ["Adds", "a"], "parameters": {"a": 3, "b": "  the\nsecond "}}),
                            phase="editor")
    tool = ToyEnvironment(1).toolbox().toolset("t0")[0]
    exchange = editor.describe(tool, ["worked: function_1(a=1, b=2) returned 3"], None)
    assert exchange.updates == {} and exchange.parameter_updates == {"function_1": {"b": "the second"}}


def test_describe_drops_placeholders_the_editor_copied_from_its_prompt():
    """A 1.5B editor answered a blank tool's ``Current description: (none)`` with ``(none)``, and parameter
    meanings with a template slot; the agent would have read them as docs."""
    editor = DocEditor()
    editor.lm = scripted_lm(lambda m: json.dumps({"description": "(none)", "parameters": {"a": "<value>", "b": "N/A",
                                                                                           "c": "The second term."}}),
                            phase="editor")
    tool = ToyEnvironment(1).toolbox().toolset("t0")[0]
    exchange = editor.describe(tool, ["worked: function_1(a=1, b=2) returned 3"], None)
    assert "(none)" in exchange.prompt and exchange.updates == {}
    assert exchange.parameter_updates == {}  # c is not one of the tool's parameters
