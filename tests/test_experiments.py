"""When no call works: the learner experiments with the request's values, and runtime errors that name no parameter
are read for the type the code used, in both learning modes, each a knob of its own."""

import json
import re

import dspy
import pytest
from scripted_lm import prompt_text, request_of, scripted_lm, shown_tools

from otbench import FunctionEnvironment
from otbench.core.calls import CallResult, ToolCall
from otbench.evals.harness import run_rollouts
from otbench.evals.invented import error_rules, rule_type, runtime_rules
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec
from otbench.optimizers import registry
from otbench.optimizers.easytool import EasyTool, EasyToolWriter
from otbench.optimizers.evidence import ToolEvidence, read_error
from otbench.optimizers.experiments import CALLS_PER_TOOL, candidate_arguments, request_values, same_input
from otbench.optimizers.toolobserver.knobs import IMPROVED, Improvements
from otbench.optimizers.toolobserver.teleprompter import ToolObserver


@pytest.mark.parametrize(("error", "arguments", "expected"), [
    ("TypeError: unsupported operand type(s) for ** or pow(): 'dict' and 'int'", {"circle": {"r": 2}}, "a number"),
    ("TypeError: unsupported operand type(s) for *: 'float' and 'dict'", {"circle": {"r": 2}}, "a number"),
    ("AttributeError: 'dict' object has no attribute 'split'", {"document": {"text": "a b"}}, "a text"),
    ("TypeError: float() argument must be a string or a real number, not 'dict'", {"invoice": {}}, "a number"),
    ("TypeError: must be real number, not dict", {"quantity": {}}, "a number"),
    ("TypeError: can only concatenate str (not \"int\") to str", {"label": 3}, "a text"),
    ("KeyError: 'price'", {"order": {"cost": 1}}, "an object with the key 'price'"),
])
def test_runtime_errors_that_name_no_parameter_say_what_the_code_used_the_argument_as(error, arguments, expected):
    ((name, rule),) = runtime_rules(error, arguments)
    assert name == next(iter(arguments)) and rule.startswith(f"is used as {expected}")
    assert error.split(": ", 1)[1] in rule  # the runtime's own words, quoted: what was observed, nothing beyond


@pytest.mark.parametrize(("error", "arguments"), [
    ("TypeError: unsupported operand type(s) for *: 'float' and 'dict'", {"a": {"r": 2}, "b": 2.0}),  # whose?
    ("TypeError: unsupported operand type(s) for +: 'dict' and 'dict'", {"a": {}}),
    ("AttributeError: 'Engine' object has no attribute 'spin'", {"a": 1}),  # the code's own object
    ("ValueError: something else", {"a": 1}),
    ("TypeError: unsupported operand type(s) for ** or pow(): 'dict' and 'int'", {"a": [1]}),  # not the caller's
])
def test_a_runtime_error_that_does_not_say_whose_value_or_what_was_wanted_gives_no_rule(error, arguments):
    assert runtime_rules(error, arguments) == []


def test_rules_read_from_runtime_errors_type_a_learned_schema():
    (_, rule), = runtime_rules("TypeError: unsupported operand type(s) for *: 'float' and 'dict'", {"x": {}})
    assert rule_type(rule) == "number"
    evidence = ToolEvidence()
    evidence.add(CallResult(ToolCall("f", {"x": {}}), False, error="TypeError: unsupported operand type(s) for *: "
                                                                     "'float' and 'dict'"))
    assert evidence.rules == {"x": [rule]}
    assert ToolEvidence(runtime_errors=False).rules == {}  # the ablation reads none


def test_candidates_take_the_requests_values_in_the_kind_the_errors_point_to_first():
    assert request_values('Count the words of "red apple river" twice, then add 2.5 and 3') == ["red apple river",
                                                                                                 2.5, 3]
    tool = DocumentedTool("function_1", parameters=[ParameterSpec("circle", "any", True)])
    failed = CallResult(ToolCall("function_1", {"circle": {"radius": 9.9}}), False,
                        error="TypeError: unsupported operand type(s) for ** or pow(): 'dict' and 'int'")
    evidence = ToolEvidence()
    evidence.add(failed)
    tried = [arguments for arguments, _ in candidate_arguments(tool, evidence, 'A "round" pond has a radius of 9.9 '
                                                                                  'metres', [failed])]
    assert tried[0] == {"circle": 9.9} and {"circle": "round"} not in tried  # a text is not what the code used
    assert {"circle": 1} in tried


def test_an_integer_no_float_holds_is_a_candidate_where_the_errors_ask_for_an_integer():
    huge = 10**400
    tool = DocumentedTool("function_1", parameters=[ParameterSpec("count", "any", True)])
    failed = CallResult(ToolCall("function_1", {"count": "many"}), False,
                        error="ValueError: count must be an integer")
    evidence = ToolEvidence()
    evidence.add(failed)
    tried = [arguments for arguments, _ in candidate_arguments(tool, evidence, f"How many digits has {huge}?", [failed])]
    assert tried[0] == {"count": huge}


def test_the_agents_own_mapping_of_values_comes_first_and_a_guessed_one_is_no_example():
    tool = DocumentedTool("f", parameters=[ParameterSpec("speed"), ParameterSpec("acceleration"), ParameterSpec("time")])
    failed = CallResult(ToolCall("f", {"speed": {"value": 0}, "acceleration": {"value": 9.8}, "time": {"value": 12}}),
                        False, error="TypeError: 'speed' must be a number, got dict {'value': 0}")
    tried = list(candidate_arguments(tool, ToolEvidence(), "From a standstill at 9.8 m/s2 for 12 s", [failed]))
    assert tried[0] == ({"speed": 0, "acceleration": 9.8, "time": 12}, True)  # the agent's own mapping, unwrapped
    assert all(not placed for _, placed in tried[1:])  # the request's values spread over the parameters: a guess
    made_up = CallResult(ToolCall("f", {"speed": {"op": "cube_root"}, "acceleration": 1, "time": 2}), False, error="x")
    assert not any(arguments.get("speed") == "cube_root"
                   for arguments, _ in candidate_arguments(tool, ToolEvidence(), "Take the cube root of 8", [made_up]))


# -- learning, end to end with scripted models -------------------------------------------------------------------------
def twice(order):
    return round(order * 2.0, 2)


def thrice(order):
    return round(order * 3.0, 2)


def _examples(values):
    return [dspy.Example(question=f"An order of {value} units is doubled. How many units is that?",
                         answer=twice(value)) for value in values]


def _metric(example, trajectory):
    return any(isinstance(out, (int, float)) and abs(out - example.answer) < 1e-6 for out in trajectory.outputs)


def _env():
    return FunctionEnvironment([twice, thrice], _examples((4, 7, 12)), _metric, test_examples=_examples((5, 9)))


def structured_agent(messages) -> str:
    """A small model's habit: a parameter named for an object gets an object, unless a doc shows a call that worked
    with a plain value; then it calls the tool whose doc quotes a request like its own."""
    value = float(re.findall(r"\d+", request_of(messages))[0])
    shown = {function["name"]: function.get("description", "") for function in shown_tools(messages)}
    for name, text in shown.items():
        if "doubled" in text or ("A call that worked" in text and name == "twice"):
            return json.dumps({"calls": [{"name": name, "arguments": {"order": value}}]})
    return json.dumps({"calls": [{"name": "twice", "arguments": {"order": {"units": value}}}]})


def _program(env, ledger):
    agent, editor = FunctionCallingAgent(), DocEditor()
    agent.lm = scripted_lm(structured_agent, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(lambda m: json.dumps({"description": "Doubles the order."}), ledger=ledger, phase="editor")
    return ToolAgentProgram(env.toolbox(), agent), editor


def _score(env, program):
    return env.summarise(run_rollouts(env, program.agent, program.toolbox, env.tasks("test"), progress=False))["score"]


@pytest.mark.parametrize("mode", ["offline", "online"])
def test_where_no_call_works_the_learner_experiments_and_the_docs_show_the_call_that_worked(mode):
    env = _env()
    ledger = TokenLedger()
    program, editor = _program(env, ledger)
    assert _score(env, program) == 0.0
    calls: list[ToolCall] = []
    execute = env.execute
    env.execute = lambda toolset, call: calls.append(call) or execute(toolset, call)  # type: ignore[method-assign]
    learned = ToolObserver(env=env, editor=editor, mode=mode, max_iterations=2, progress=False).compile(
        program, trainset=env.tasks("train"))
    docs = {tool.name: tool.description for tool in learned.toolbox.toolset("tools")}
    assert "A call that worked: twice(order=4" in docs["twice"] and "given the same, thrice returned 12" in docs["twice"]
    assert "Is used as a number" in learned.toolbox.get("tools", "twice").parameter_descriptions["order"]
    assert [(p.name, p.type) for p in learned.toolbox.get("tools", "twice").parameters] == [("order", "number")]
    assert env.toolbox().get("tools", "twice").parameters[0].type == "any"  # shown untyped, typed by what was seen
    assert _score(env, learned) == 1.0
    assert learned.detailed_results.invented.count == 0
    own = [call for call in calls if call.name == "twice"]
    assert own and len(own) <= CALLS_PER_TOOL and all(not isinstance(call.arguments["order"], dict) for call in own)
    steps = learned.detailed_results.iterations
    assert steps[0].metrics["experiment_calls"] >= 2  # the search on twice, and the same input on thrice


@pytest.mark.parametrize("switched_off", ["experiment", "runtime_errors"])
def test_each_is_an_ablation_of_its_own(switched_off):
    env = _env()
    program, editor = _program(env, TokenLedger())
    knobs = Improvements(**{**{name: getattr(IMPROVED, name) for name in Improvements.names()}, switched_off: False})
    learned = ToolObserver(env=env, editor=editor, max_iterations=2, improvements=knobs, progress=False).compile(
        program, trainset=env.tasks("train"))
    doc = learned.toolbox.get("tools", "twice")
    if switched_off == "experiment":
        assert "A call that worked" not in doc.description and _score(env, learned) == 0.0
    else:
        assert "used as" not in doc.parameter_descriptions["order"]


def test_no_experiment_where_a_call_already_works():
    env = FunctionEnvironment([twice], _examples((4, 7)), _metric)
    ledger = TokenLedger()
    program, editor = _program(env, ledger)
    program.agent.lm = scripted_lm(lambda m: json.dumps({"calls": [{"name": "twice", "arguments": {
        "order": float(re.findall(r"\d+", request_of(m))[0])}}]}), phase="agent")
    learned = ToolObserver(env=env, editor=editor, progress=False).compile(program, trainset=env.tasks("train"))
    assert learned.detailed_results.iterations[0].metrics["experiment_calls"] == 0


def test_a_learned_type_fills_only_a_parameter_shown_without_one():
    tool = DocumentedTool("f", parameters=[ParameterSpec("a", "any"), ParameterSpec("b", "string")])
    assert tool.learn_types({"a": "number", "b": "number"})
    assert [(p.name, p.type) for p in tool.parameters] == [("a", "number"), ("b", "string")]
    assert not tool.learn_types({"a": "string"})  # once typed, kept


def test_the_same_input_goes_to_every_tool_that_takes_it():
    tools = [DocumentedTool("f", parameters=[ParameterSpec("circle")]), DocumentedTool("g", parameters=[ParameterSpec("circle")]),
             DocumentedTool("h", parameters=[ParameterSpec("ball")]),
             DocumentedTool("k", parameters=[ParameterSpec("a"), ParameterSpec("b")])]
    calls = same_input(tools, ToolCall("f", {"circle": 9.9}), ["g"])
    assert [(call.name, call.arguments) for call in calls] == [("g", {"circle": 9.9}), ("h", {"ball": 9.9})]


# -- the same help for the other optimizers ----------------------------------------------------------------------------
def test_the_shared_experiment_helps_easytool_before_it_writes_and_is_a_row_of_its_own():
    env = _env()
    ledger = TokenLedger()
    program, _ = _program(env, ledger)
    writer = EasyToolWriter()
    writer.lm = scripted_lm(lambda m: json.dumps({"purpose": "Works on an order."} if "Condense" in prompt_text(m)
                                                 else {"scenario": "an order", "example_arguments": {}}),
                            ledger=ledger, phase="editor")
    plain = EasyTool(env=env, writer=writer, progress=False).compile(program, trainset=env.tasks("train"))
    helped = EasyTool(env=env, writer=writer, experiment=True, progress=False).compile(program,
                                                                                     trainset=env.tasks("train"))
    assert "A call that worked" not in plain.toolbox.get("tools", "twice").description
    assert helped.toolbox.get("tools", "twice").parameters[0].type == "number"
    spec = registry.spec_of("easytool")
    knobs = spec.knobs_from({"experiment": True})
    assert spec.define(knobs, "offline") == {"probe": False, "experiment": True}
    assert spec.define(spec.knobs_from({}), "offline") == {"probe": False}  # runs defined before it keep their key
    assert spec.row_label(spec.define(knobs, "offline"), "offline") == "+ET (experiment)"


def test_a_request_answered_twice_by_the_same_call_is_one_example():
    evidence = ToolEvidence()
    result = CallResult(ToolCall("f", {"x": 2}), True, output=4)
    evidence.add_outcome("Double 2", result, True)
    evidence.add_outcome("Double 2", result, True)
    assert evidence.example() == 'Example: "Double 2" -> f(x=2) returned 4.' and evidence.requests_answered == 2


def test_pydantic_validation_errors_name_the_required_refused_and_typed_fields():
    """FastMCP servers (and many APIs) validate with pydantic: its errors are read like Python's own."""
    missing = ("ToolError: Error executing tool function_1: 2 validation errors for function_1Arguments source_timezone "
               "Field required [type=missing, input_value={}, input_type=dict] For further information visit "
               "https://errors.pydantic.dev/2.14/v/missing time Field required [type=missing, input_value={}, "
               "input_type=dict]")
    assert read_error(missing) == (["source_timezone", "time"], None)
    assert read_error("1 validation error for fArguments\nfoo\n  Unexpected keyword argument "
                      "[type=unexpected_keyword_argument, input_value=1]") == ([], "foo")
    typed = ("1 validation error for fArguments hours Input should be a valid integer, unable to parse string as an "
             "integer [type=int_parsing, input_value='x', input_type=str]")
    (name, rule), = error_rules(typed, {"hours"}, {"hours": "x"})
    assert name == "hours" and rule.startswith("must be a valid integer") and rule_type(rule) == "integer"
