"""ToolObserver's improvements, each on its own: probing, facts, a learned schema, per-tool docs, the accept check."""

import json
import re
from dataclasses import replace

import dspy
from recorder import Recorder
from scripted_lm import prompt_text, request_of, scripted_lm, shown_tools
from toy_env import ToyEnvironment, docs_aware_agent_reply

from otbench.core.calls import CallResult, ToolCall
from otbench.envs.functions import FunctionEnvironment
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import Toolbox
from otbench.optimizers.evidence import EvidenceBook, read_error
from otbench.optimizers.toolobserver.knobs import IMPROVED, PAPER, Improvements
from otbench.optimizers.toolobserver.teleprompter import ToolObserver

# the improved variant without what saves model time: what the attempts and the editor see, step by step, as these
# tests pin it (each saving has a test of its own below)
SCHEMA_FIRST = replace(IMPROVED, start_docs_first=False, code_first=False, compact_tools=False, request_first=False)


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
    optimizer = ToolObserver(env=env, editor=editor, improvements=SCHEMA_FIRST, progress=False)
    program = optimizer.compile(program, trainset=env.tasks())
    assert not optimizer.evaluates_start_docs  # its first step shows probed docs: the starting ones are scored apart
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
    program = ToolObserver(env=env, editor=editor, improvements=SCHEMA_FIRST, tracker=recorder,
                           progress=False).compile(program, trainset=env.tasks())
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
    program = ToolObserver(env=hidden, editor=editor, improvements=SCHEMA_FIRST, max_iterations=1,
                           progress=False).compile(program, trainset=hidden.tasks())
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


# -- what saves model time -----------------------------------------------------------------------------------------
def _prompts(program: ToolAgentProgram) -> list[str]:
    return [prompt_text(entry["messages"]) for entry in program.agent.lm.history]


def schema_reading_agent(messages):
    """A small agent's habit: without a schema it names the arguments ``x`` and ``y``; with one it uses it."""
    if any("parameters" in tool for tool in shown_tools(messages)):
        return docs_aware_agent_reply(messages)
    numbers = [int(word) for word in request_of(messages).split() if word.isdigit()]
    return json.dumps({"calls": [{"name": "function_2", "arguments": {"x": numbers[0], "y": numbers[1]}}]})


def test_the_first_attempts_are_made_with_the_starting_docs_and_are_the_before_score():
    env = ToyEnvironment(2, hide_parameters=True)
    program, editor, _ = _setup(env, describing_editor)
    program.agent.lm = scripted_lm(schema_reading_agent, phase="agent")
    recorder = Recorder()
    optimizer = ToolObserver(env=env, editor=editor, improvements=IMPROVED, tracker=recorder, progress=False)
    learned = optimizer.compile(program, trainset=env.tasks())
    assert optimizer.evaluates_start_docs  # no second pass over the starting docs
    prompts = _prompts(learned)
    assert all(prompt.endswith("Tools:\nfunction_1\nfunction_2") for prompt in prompts[:2])  # as the setting shows
    assert recorder.records[0].toolbox.to_json() == env.toolbox().to_json()
    assert "function_1(a, b)" in prompts[2]  # what the probes found, shown from the second attempt on
    assert learned.toolbox.get("t0", "function_1").parameters_learned
    scored_apart = ToolObserver(env=env, editor=editor, improvements=replace(IMPROVED, start_docs_first=False),
                                progress=False)
    scored_apart.compile(_setup(env, describing_editor)[0], trainset=env.tasks())
    assert not scored_apart.evaluates_start_docs


def test_a_first_attempt_that_worked_on_the_starting_docs_is_made_again_with_what_probing_found():
    """An attempt with the starting docs whose calls all worked settles nothing while probing learned what those docs
    did not show: the task is attempted again with it (a lucky guess is not what the learned docs say)."""
    def lucky(messages):  # guesses the right parameter names without a schema
        numbers = [int(word) for word in request_of(messages).split() if word.isdigit()]
        return json.dumps({"calls": [{"name": "function_1", "arguments": {"a": numbers[0], "b": numbers[1]}}]})

    env = ToyEnvironment(2, hide_parameters=True)
    program, editor, _ = _setup(env, describing_editor)
    program.agent.lm = scripted_lm(lucky, phase="agent")
    learned = ToolObserver(env=env, editor=editor, improvements=IMPROVED, progress=False).compile(
        program, trainset=env.tasks())
    prompts = _prompts(learned)
    assert all("function_1" in prompt.rsplit("Tools:", 1)[1].splitlines()[1] and "(" not in prompt.rsplit("Tools:", 1)[1]
               for prompt in prompts[:2])  # the starting docs: names alone
    assert len(prompts) > 2 and all("function_1(a: number, b: number)" in prompt for prompt in prompts[2:])
    assert all(trajectory.steps[0].ok for trajectory in learned.detailed_results.final_trajectories)


def holidays(year: str, country: str) -> list:
    if country not in ("US", "DE"):
        raise ValueError(f"'country' must be one of US, DE, got {country!r}")
    return [f"{year}-01-01"]


def test_what_code_writes_is_tried_before_the_editor_is_asked():
    def agent(messages):  # names the country as the request does, unless a doc gives the codes
        country = "DE" if "must be one of us, de" in prompt_text(messages).lower() else "Germany"
        return json.dumps({"calls": [{"name": "holidays", "arguments": {"year": "2005", "country": country}}]})

    examples = [dspy.Example(question="Which holidays did Germany have in 2005?", answer=["2005-01-01"])]
    env = FunctionEnvironment([holidays], examples, lambda example, trajectory: example.answer in trajectory.outputs)
    costs = {}
    for code_first in (True, False):
        ledger = TokenLedger()
        student = FunctionCallingAgent()
        student.lm = scripted_lm(agent, ledger=ledger, phase="agent")
        editor = DocEditor()
        editor.lm = scripted_lm(lambda m: json.dumps({"description": "Lists holidays."}), ledger=ledger,
                                phase="editor")
        knobs = replace(IMPROVED, code_first=code_first, grounded=False)
        learned = ToolObserver(env=env, editor=editor, mode="online", improvements=knobs, progress=False).compile(
            ToolAgentProgram(env.toolbox(), student), trainset=examples)
        costs[code_first] = (ledger.phase("agent").calls, ledger.phase("editor").calls,
                             learned.detailed_results.final_trajectories[0].success)
    # the error's rule, written by code, lets the second attempt succeed: no editor call is paid for it
    assert costs[True] == (2, 0, True)
    assert costs[False] == (2, 1, True)


def test_signature_lines_show_the_docs_json_shows_in_fewer_characters():
    from otbench.modules.agent import render_tools
    from otbench.modules.tool_docs import DocumentedTool, ParameterSpec

    tool = DocumentedTool("function_1", description="Adds two numbers.", parameter_descriptions={"a": "the first"},
                          parameters=[ParameterSpec("a", "integer"), ParameterSpec("b", "float", required=False),
                                      ParameterSpec("c", "list", items={"type": "int"}, default=[1]),
                                      ParameterSpec("d", "any")])
    shown = render_tools([tool, DocumentedTool("function_2")], "signature")
    assert shown == ("function_1(a: integer, b?: number, c: array[integer] = [1], d)\n  Adds two numbers.\n"
                     "  a: the first\nfunction_2")
    assert len(shown) < len(render_tools([tool, DocumentedTool("function_2")])) / 2


def test_terse_signatures_leave_out_what_the_line_already_says_and_keep_every_other_sentence():
    from otbench.modules.agent import render_tools
    from otbench.modules.tool_docs import DocumentedTool, ParameterSpec

    tool = DocumentedTool("function_1", description=(
        "Called as function_1(year=…, country=…). Not parameters: input (the tool refused them). Returns holidays."),
        parameters=[ParameterSpec("year", "str"), ParameterSpec("country", "any")],
        parameter_descriptions={"year": "Must be a string (its own error for year). Must be a 4-digit year such as "
                                         "'2020' (its own error for year).",
                                "country": "Must be a string (its own error for country)."})
    assert render_tools([tool], "terse") == (
        "function_1(year: string, country)\n  Not parameters: input (the tool refused them). Returns holidays.\n"
        "  year: Must be a 4-digit year such as '2020'.\n  country: Must be a string.")
    assert len(render_tools([tool], "terse")) < len(render_tools([tool], "signature"))
    assert tool.description.startswith("Called as")  # the docs themselves keep every sentence


def test_compact_tools_and_the_request_first_reach_the_agent_of_the_learned_program():
    env = ToyEnvironment(1)
    for knobs, expected in ((IMPROVED, ("terse", True)), (replace(IMPROVED, terse_tools=False), ("signature", True)),
                            (PAPER, ("json", False)),
                            (replace(IMPROVED, compact_tools=False, request_first=False), ("json", False))):
        program, editor, _ = _setup(env, describing_editor)
        learned = ToolObserver(env=env, editor=editor, improvements=knobs, progress=False).compile(
            program, trainset=env.tasks())
        assert (learned.agent.tool_format, learned.agent.request_first) == expected
        assert (program.agent.tool_format, program.agent.request_first) == ("json", False)  # the student is untouched
        first = _prompts(learned)[0]
        assert (first.index("Request:") < first.index("Tools:")) == expected[1]
    offline = ToyEnvironment(2, shared=True)
    program, editor, _ = _setup(offline, describing_editor)
    learned = ToolObserver(env=offline, editor=editor, progress=False).compile(program, trainset=offline.tasks())
    # offline, a shared toolset is what its tasks' prompts share: the tools come first, as JSON, as before
    assert (learned.agent.tool_format, learned.agent.request_first) == ("json", False)


def test_short_replies_ask_for_a_brief_doc_within_tighter_bounds():
    seen = []

    def editor_reply(messages):
        seen.append(prompt_text(messages))
        return describing_editor(messages)

    tool = ToyEnvironment(1).toolbox().get("t0", "function_1")
    editor = DocEditor()
    editor.lm = scripted_lm(editor_reply, phase="editor")
    for short in (True, False):
        editor.describe(tool, ["worked: function_1(a=2, b=3) returned 5"], ["add 2 and 3"], short=short)
    assert "Be brief" in seen[0] and "Be brief" not in seen[1]
    from otbench.modules.editor import SHORT_LIMITS, describe_schema

    assert describe_schema(["a"], limits=SHORT_LIMITS)["properties"]["description"]["maxLength"] == SHORT_LIMITS[0]
