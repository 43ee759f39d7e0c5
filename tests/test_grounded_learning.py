"""One learning method for any tools: hidden parameters are probed in every mode, confusable tools are told
apart by judged repeats, docs state only what calls showed, and a toolset that works costs no editor call."""

import json
import re

import dspy
from scripted_lm import prompt_text, request_of, scripted_lm, shown_tools

from otbench import FunctionEnvironment
from otbench.core.calls import CallResult, ToolCall
from otbench.envs.base import task_key
from otbench.evals.harness import run_rollouts
from otbench.evals.invented import Observed, invented_claims, supported_text, unsupported, without_call_form
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox
from otbench.optimizers.base import OBSERVED_CALLS, START_DOCS
from otbench.optimizers.toolobserver.knobs import IMPROVED
from otbench.optimizers.toolobserver.teleprompter import ToolObserver

UNITS = {"function_1": ("Celsius", "Fahrenheit"), "function_2": ("Fahrenheit", "Celsius")}


def function_1(value: float) -> float:
    return round(value * 9 / 5 + 32, 2)


def function_2(value: float) -> float:
    return round((value - 32) * 5 / 9, 2)


def function_3(a: float, b: float) -> float:
    return a + b


def _examples(split: str) -> list[dspy.Example]:
    values = (100, 37, 0, 50) if split == "train" else (10, 20, 30, 40)
    examples = []
    for value in values:
        examples.append(dspy.Example(question=f"How much is {value} degrees Celsius in Fahrenheit?",
                                     answer=function_1(value)))
        examples.append(dspy.Example(question=f"How much is {value} degrees Fahrenheit in Celsius?",
                                     answer=function_2(value)))
        examples.append(dspy.Example(question=f"What is the sum of {value} and 3?", answer=value + 3))
    return examples


def _metric(example, trajectory):
    return any(isinstance(out, (int, float)) and abs(out - example.answer) < 1e-6 for out in trajectory.outputs)


def _env(**options) -> FunctionEnvironment:
    return FunctionEnvironment([function_1, function_2, function_3], _examples("train"), _metric,
                               test_examples=_examples("test"), show_parameters=False, **options)


def _tools(content: str) -> dict[str, dict]:
    return {function["name"]: function for function in shown_tools([{"role": "user", "content": content}])}


def small_agent(messages) -> str:
    """A small model's habits: without a schema it guesses the argument name ``x``; with one it uses it; it picks
    the tool whose description names the request's units, else the first tool of the request's arity."""
    content = prompt_text(messages)
    request = request_of(messages)
    numbers = [float(n) for n in re.findall(r"\d+", request)]
    tools = _tools(content)
    asked = re.findall(r"Celsius|Fahrenheit", request)
    for name, tool in tools.items():
        if asked and re.findall(r"Celsius|Fahrenheit", tool.get("description", ""))[:2] == asked:
            names = list(tool.get("parameters", {}).get("properties", {})) or ["x"]
            return json.dumps({"calls": [{"name": name, "arguments": dict(zip(names, numbers, strict=False))}]})
    arity = 2 if "sum" in request else 1
    for name, tool in tools.items():
        names = list(tool.get("parameters", {}).get("properties", {}))
        if len(names) == arity:
            return json.dumps({"calls": [{"name": name, "arguments": dict(zip(names, numbers, strict=False))}]})
    return json.dumps({"calls": [{"name": "function_1", "arguments": {"x": numbers[0]}}]})


def small_editor(messages) -> str:
    """A small editor: it names the units of a request the facts say the tool answered; with nothing answered it
    invents, as a 1.5B model does."""
    content = prompt_text(messages)
    answered = re.search(r'answered the request "How much is \d+ degrees (\w+) in (\w+)\?"', content)
    if answered:
        text = f"Converts {answered.group(1)} to {answered.group(2)}."
    elif "answered the request \"What is the sum" in content:
        text = "Adds a and b."
    else:
        text = "Takes a string as input and returns it in uppercase."
    return json.dumps({"description": text})


def _program(env, ledger=None):
    ledger = ledger or TokenLedger()
    agent, editor = FunctionCallingAgent(), DocEditor()
    agent.lm = scripted_lm(small_agent, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(small_editor, ledger=ledger, phase="editor")
    return ToolAgentProgram(env.toolbox(), agent), editor


def _score(env, program, split="test"):
    trajectories = run_rollouts(env, program.agent, program.toolbox, env.tasks(split), progress=False)
    return env.summarise(trajectories)["score"]


def test_examples_need_no_id():
    example = dspy.Example(question="q", answer=1)
    assert task_key(example) == task_key(dspy.Example(question="q", answer=1)) != task_key(dspy.Example(question="r"))
    assert task_key(dspy.Example(question="q", id=7)) == "7"


def test_offline_learning_on_hidden_confusable_tools_probes_judges_repeats_and_tells_the_tools_apart():
    env = _env()
    program, editor = _program(env)
    assert _score(env, program) == 0.0  # every call guesses a parameter name the tools refuse
    learned = ToolObserver(env=env, editor=editor, progress=False).compile(program, trainset=env.tasks("train"))
    docs = {tool.name: tool for tool in learned.toolbox.toolset("tools")}
    assert [p.name for p in docs["function_1"].parameters] == ["value"] and docs["function_1"].parameters_learned
    assert docs["function_1"].description.startswith("Converts Celsius to Fahrenheit. Example: \"How much is ")
    assert docs["function_2"].description.startswith("Converts Fahrenheit to Celsius. Example: ")
    assert docs["function_3"].description.startswith("Adds a and b. Example: \"What is the sum of ")
    assert "function_3(a=" in docs["function_3"].description
    assert _score(env, learned) == 1.0
    assert learned.detailed_results.invented.count == 0


def test_online_mode_runs_on_examples_without_id():
    env = _env()
    program, editor = _program(env)
    learned = ToolObserver(env=env, editor=editor, mode="online", progress=False).compile(
        program, trainset=env.tasks("train"))
    assert [p.name for p in learned.toolbox.get("tools", "function_3").parameters] == ["a", "b"]


def test_an_editor_with_no_evidence_writes_nothing_and_contradicted_sentences_are_dropped():
    env = _env()
    program, editor = _program(env)
    editor.lm = scripted_lm(lambda m: json.dumps({"description": "Takes a string as input and returns it in "
                                                                 "uppercase. Adds the two numbers."}), phase="editor")
    learned = ToolObserver(env=env, editor=editor, max_iterations=1, progress=False).compile(
        program, trainset=env.tasks("train"))
    texts = {tool.name: tool.description for tool in learned.toolbox.toolset("tools")}
    assert all("uppercase" not in text for text in texts.values())
    assert texts["function_3"].startswith("Adds the two numbers. Example: ")


def test_a_toolset_that_already_works_costs_no_editor_call():
    env = FunctionEnvironment([function_3], [dspy.Example(question=f"What is the sum of {n} and 3?", answer=n + 3)
                                             for n in (1, 2, 3)], _metric)
    for mode in ("online", "offline"):
        ledger = TokenLedger()
        program, editor = _program(env, ledger)
        ToolObserver(env=env, editor=editor, mode=mode, progress=False, gate=False).compile(program, trainset=env.tasks("train"))
        assert "editor" not in ledger.snapshot() or ledger.snapshot()["editor"]["calls"] == 0, mode
        assert ledger.snapshot()["agent"]["calls"] == 3, mode  # the attempts, once: nothing is re-run


def test_docs_that_settle_offline_still_quote_a_request_their_tool_answered():
    """Every train attempt works at once: no editor is asked, yet the blank doc an agent elsewhere will read gets the
    worked example, written by code."""
    env = FunctionEnvironment([function_3], [dspy.Example(question=f"What is the sum of {n} and 3?", answer=n + 3)
                                             for n in (1, 2, 3)], _metric)
    program, editor = _program(env)
    learned = ToolObserver(env=env, editor=editor, progress=False).compile(program, trainset=env.tasks("train"))
    doc = learned.toolbox.get("tools", "function_3").description
    assert doc.startswith('Example: "What is the sum of 1 and 3?" -> function_3(a=1') and "returned 4" in doc


def test_an_offline_edit_after_which_the_tools_calls_fail_more_is_undone():
    env = _env()
    program, editor = _program(env)
    rounds = iter(range(100))

    def agent(messages):  # drops an argument once the misleading doc is shown
        content = prompt_text(messages)
        next(rounds)
        if "Misleading" in content and "sum" in request_of(messages):
            return json.dumps({"calls": [{"name": "function_3", "arguments": {"a": 1}}]})
        return small_agent(messages)

    program.agent.lm = scripted_lm(agent, phase="agent")
    editor.lm = scripted_lm(lambda m: json.dumps({"description": "Misleading doc."}), phase="editor")
    learned = ToolObserver(env=env, editor=editor, max_iterations=2, progress=False).compile(
        program, trainset=env.tasks("train"))
    assert learned.toolbox.get("tools", "function_3").description == ""
    assert learned.detailed_results.iterations[1].metrics["edits_undone"] >= 1


def test_the_judge_reads_types_names_and_evidence():
    observed = Observed({"a", "b"}, {"a": {"number"}, "b": {"number"}}, {"number"}, 3)
    assert unsupported("Takes a string as input and returns it in uppercase.", observed)
    assert not unsupported("Takes two numbers and returns their sum.", observed)
    assert not unsupported("Returns the number of days between them.", observed)
    assert unsupported("Set `text` to the phrase.", observed)
    assert unsupported("Returns a list of the values.", observed)
    assert supported_text("Adds a and b. Returns a list.", observed) == "Adds a and b."
    assert unsupported("Anything at all.", Observed({"a"}, {}, set(), 0))  # nothing worked: nothing is known
    assert unsupported("a string to repeat", observed, parameter="a")
    assert not unsupported("a number of items", observed, parameter="a")


def test_the_judge_checks_a_claimed_length_against_the_calls():
    film = Observed({"film"}, {"film": {"string"}}, {"object"}, 1, examples=[({"film": "Heat"}, {"year": 1995})])
    assert unsupported("Takes a string as input and returns its length.", film)
    assert unsupported("Returns the number of characters in the title.", film)
    counter = Observed({"text"}, {"text": {"string"}}, {"number"}, 1, examples=[({"text": "Heat"}, 4)])
    assert not unsupported("Takes a string as input and returns its length.", counter)
    hypotenuse = Observed({"a", "b"}, {"a": {"number"}, "b": {"number"}}, {"number"}, 1,
                          examples=[({"a": 3, "b": 4}, 5.0)])
    assert not unsupported("Returns the length of the hypotenuse.", hypotenuse)


def test_invented_claims_count_new_sentences_against_the_observed_calls():
    start = Toolbox({"t": [DocumentedTool("f", parameters=[ParameterSpec("a", "any")]), DocumentedTool("g")]})
    learned = start.deepcopy()
    learned.get("t", "f").with_docs(description="Doubles a. Returns a string.")
    learned.get("t", "g").with_docs(description="Searches the web.")
    calls = [("t", CallResult(ToolCall("f", {"a": 2}), True, output=4)),
             ("t", CallResult(ToolCall("g", {}), False, error="TypeError: boom"))]
    found = invented_claims(learned, start, calls)
    assert (found.count, found.sentences) == (2, 3)
    assert {quote["sentence"] for quotes in found.quotes.values() for quote in quotes} == {
        "Returns a string.", "Searches the web."}


def test_the_improved_variant_has_every_improvement_on_but_the_opt_in_ones():
    opt_in = type(IMPROVED).opt_in()
    assert all(getattr(IMPROVED, name) != (name in opt_in) for name in type(IMPROVED).names())


def test_naming_a_tool_of_the_set_names_no_parameter():
    observed = Observed({"value"}, {"value": {"number"}}, {"number"}, 2, tools={"function_3", "function_4"})
    assert not unsupported("The `function_3` tool converts Fahrenheit to Celsius.", observed)
    assert unsupported("Set `degrees` to the temperature.", observed)
def test_rules_a_tools_errors_stated_are_written_into_its_docs_and_count_as_evidence():
    from otbench.evals.invented import error_rules, rule_type
    from otbench.optimizers.evidence import EvidenceBook

    assert error_rules("ValueError: 'interval' must be one of 1d|1wk, got 'weekly'") == [
        ("interval", "must be one of 1d|1wk")]
    assert error_rules("TypeError: 'vertices[0]' must be a list, got dict") == [("vertices", "each item must be a list")]
    assert error_rules("TypeError: 'xs' must contain only numbers; item 0 is list [1, 2]") == [
        ("xs", "must contain only numbers")]
    assert error_rules("InventoryError: INVALID_QUANTITY: quantity must be a whole number, got 0", {"quantity"}) == [
        ("quantity", "must be a whole number")]
    assert error_rules("quantity must be a whole number, got 0") == []  # unquoted: only a name known to be a parameter
    assert error_rules("ValueError: unknown dataset 'Sales'; datasets: employees, orders", {"records"},
                       {"records": "Sales", "field": "x"}) == [
        ("records", "on a wrong value says: unknown dataset '…'; datasets: employees, orders")]
    lambda_error = "ValueError: 'function' is not valid Python lambda source: " + repr("f'(x)")  # "f'(x)"
    assert error_rules(lambda_error, {"function"}, {"function": "f'(x)"}) == [
        ("function", "on a wrong value says: 'function' is not valid Python lambda source: '…'")]
    calculus_error = "ValueError: 'function' may only use numbers, the variable, + - * / **; unsupported: 'x.diff()'"
    assert error_rules(calculus_error, {"function"}, {"function": "lambda x: x.diff()"}) == [
        ("function", "may only use numbers, the variable, + - * / **")]
    assert rule_type("may only use numbers") is None
    assert [rule_type(r) for r in ("must be an integer", "must be a date in MM-DD-YYYY format", "must be one of a|b")] \
        == ["integer", "string", None]

    toolbox = Toolbox({"t": [DocumentedTool("f")]})
    book = EvidenceBook()
    book.add("t", [CallResult(ToolCall("f", {}), False, error="TypeError: f() missing 2 required positional "
                                                                 "arguments: 'n' and 'unit'"),
                   CallResult(ToolCall("f", {"n": {"value": 3}, "unit": "x", "kind": 1}), False,
                              error="TypeError: f() got an unexpected keyword argument 'kind'"),
                   CallResult(ToolCall("f", {"n": {"value": 3}, "unit": "x"}), False,
                              error="TypeError: 'n' must be an integer, got dict {'value': 3}"),
                   CallResult(ToolCall("f", {"n": 3, "unit": "x"}), False,
                              error="ValueError: 'unit' must be one of km|mi, got 'x'")], {"f"})
    assert book.teach(toolbox, "t") and book.state_rules(toolbox, "t") == 1
    tool = toolbox.get("t", "f")
    assert [(p.name, p.type) for p in tool.parameters] == [("n", "integer"), ("unit", "any")]
    assert tool.parameter_descriptions["unit"] == "Must be one of km|mi (its own error for unit)."
    assert tool.description == "Called as f(n=…, unit=…). Not parameters: kind (the tool refused them)."
    assert book.state_rules(toolbox, "t") == 0  # stated once
    found = invented_claims(toolbox, Toolbox({"t": [DocumentedTool("f")]}), [("t", step) for step in [
        CallResult(ToolCall("f", {"n": 3, "unit": "x"}), False, error="ValueError: 'unit' must be one of km|mi, got 'x'"),
        CallResult(ToolCall("f", {"kind": 1}), False, error="TypeError: f() got an unexpected keyword argument 'kind'"),
        CallResult(ToolCall("f", {"n": {"value": 3}, "unit": "km"}), False,
                   error="TypeError: 'n' must be an integer, got dict {'value': 3}")]])
    assert found.count == 0 and found.sentences == 4  # every stated sentence rests on the tool's own errors


def test_a_shown_schema_gets_the_call_form_only_once_the_tool_refused_names_and_nothing_worked():
    """A shown schema already says how to call: the docs gain the form of a call only with what is news, the
    names the tool refused (an agent that passed the schema itself as arguments reads what not to send)."""
    from otbench.optimizers.evidence import EvidenceBook

    def shown() -> DocumentedTool:
        return DocumentedTool("f", parameters=[ParameterSpec("base", "integer"), ParameterSpec("height", "integer")])

    refused = CallResult(ToolCall("f", {"type": "object", "properties": {}}), False,
                         error="TypeError: f() got an unexpected keyword argument 'type'")
    toolbox, book = Toolbox({"t": [shown()]}), EvidenceBook()
    book.add("t", [refused], {"f"})
    assert book.state_rules(toolbox, "t") == 1
    assert toolbox.get("t", "f").description == "Called as f(base=…, height=…). Not parameters: type (the tool refused them)."
    assert invented_claims(toolbox, Toolbox({"t": [shown()]}), [("t", refused)]).count == 0

    quiet, book = Toolbox({"t": [shown()]}), EvidenceBook()
    book.add("t", [CallResult(ToolCall("f", {"base": "x", "height": 2}), False, error="TypeError: bad operand")], {"f"})
    assert book.state_rules(quiet, "t") == 0 and quiet.get("t", "f").description == ""
    worked, book = Toolbox({"t": [shown()]}), EvidenceBook()
    book.add("t", [refused, CallResult(ToolCall("f", {"base": 2, "height": 3}), True, output=3.0)], {"f"})
    assert book.state_rules(worked, "t") == 0  # a working call says more than the form: the editor writes from it


def test_the_call_form_is_added_after_a_starting_description_and_replaces_only_a_form_stated_before():
    """A tool that starts with docs (a one-line description, an advertised MCP doc, a docstring) keeps them when code
    states how it is called: its words stay first, and a form stated again later replaces the earlier one."""
    from otbench.optimizers.evidence import EvidenceBook

    toolbox = Toolbox({"t": [DocumentedTool("f", description="Finds the total deaths of a country from COVID.")]})
    book = EvidenceBook()
    book.add("t", [CallResult(ToolCall("f", {}), False, error="TypeError: f() missing 1 required positional "
                                                               "argument: 'country'")], {"f"})
    assert book.teach(toolbox, "t") and book.state_rules(toolbox, "t") == 1
    assert toolbox.get("t", "f").description == "Finds the total deaths of a country from COVID. Called as f(country=…)."
    book.add("t", [CallResult(ToolCall("f", {"country_name": "Brazil"}), False,
                              error="TypeError: f() got an unexpected keyword argument 'country_name'")], {"f"})
    assert book.state_rules(toolbox, "t") == 1
    assert toolbox.get("t", "f").description == ("Finds the total deaths of a country from COVID. Called as "
                                                 "f(country=…). Not parameters: country_name (the tool refused them).")
    assert without_call_form("Sums a list. Called as f(a=…, b=…). Not parameters: c (the tool refused them).") == \
        "Sums a list."
    docstring = "Sums a list.\n\n    :param items: the numbers"  # a docstring's layout is the user's: kept as written
    assert without_call_form(f"{docstring} Called as f(items=…).") == docstring


def test_a_call_form_stated_again_unchanged_leaves_the_doc_as_it_is():
    """Code states the form after every step; where it says what the doc already says, the doc is not rewritten (the
    form moved behind a sentence written since was a changed doc, and a task attempted again for nothing)."""
    from otbench.optimizers.evidence import EvidenceBook

    toolbox = Toolbox({"t": [DocumentedTool("f")]})
    book = EvidenceBook()
    book.add("t", [CallResult(ToolCall("f", {"input": 1}), False, error="TypeError: f() got an unexpected keyword "
                                                                        "argument 'input'"),
                   CallResult(ToolCall("f", {}), False, error="TypeError: f() missing 1 required positional "
                                                              "argument: 'year'")], {"f"})
    assert book.teach(toolbox, "t") and book.state_rules(toolbox, "t") == 1
    stated = toolbox.get("t", "f").description
    assert stated == "Called as f(year=…). Not parameters: input (the tool refused them)."
    toolbox.get("t", "f").with_docs(description=f"{stated} Not for requests like \"x\".")  # written since
    assert book.state_rules(toolbox, "t") == 0
    assert toolbox.get("t", "f").description == f"{stated} Not for requests like \"x\"."


def test_an_attempt_that_hedges_over_rivals_has_each_of_its_calls_judged_alone():
    def strict(example, trajectory):  # one call, the right one: hedging over two converters fails
        return len(trajectory.steps) == 1 and _metric(example, trajectory)

    env = FunctionEnvironment([function_1, function_2], [e for e in _examples("train") if "degrees" in e.question],
                              strict)

    def hedging(messages):
        value = float(re.findall(r"\d+", request_of(messages))[0])
        return json.dumps({"calls": [{"name": "function_1", "arguments": {"value": value}},
                                     {"name": "function_2", "arguments": {"value": value}}]})

    program, editor = _program(env)
    program.agent.lm = scripted_lm(hedging, phase="agent")
    learned = ToolObserver(env=env, editor=editor, max_iterations=1, progress=False).compile(
        program, trainset=env.tasks("train"))
    assert learned.toolbox.get("tools", "function_1").description.startswith("Converts Celsius to Fahrenheit.")
    assert learned.toolbox.get("tools", "function_2").description.startswith("Converts Fahrenheit to Celsius.")


def test_the_evidence_tells_the_judge_its_tools_names_and_refused_arguments():
    from otbench.optimizers.evidence import ToolEvidence

    evidence = ToolEvidence()
    evidence.add(CallResult(ToolCall("function_4", {"value": 2.0}), True, output=0.9))
    evidence.add(CallResult(ToolCall("function_4", {"unit": "lb"}), False,
                            error="TypeError: function_4() got an unexpected keyword argument 'unit'"))
    observed = evidence.observed(DocumentedTool("function_4", parameters=[ParameterSpec("value", "number")]),
                                 ["function_1"])
    assert observed.tools == {"function_4", "function_1"} and observed.rejected == {"unit"}
    assert not unsupported("The `function_4` tool converts pounds to kilograms.", observed)


def test_an_operation_a_sentence_names_is_checked_on_the_working_calls():
    seen = Observed({"value"}, {"value": {"number"}}, {"number"}, 2,
                    examples=[({"value": 222.6}, 730.315), ({"value": 9.0}, 29.5276)])
    assert unsupported("Takes a number and returns its square root.", seen)
    assert not unsupported("Converts metres to feet.", seen)
    assert unsupported("The number for which the square root is to be calculated.", seen, parameter="value")
    roots = Observed({"value"}, {"value": {"number"}}, {"number"}, 1, examples=[({"value": 9.0}, 3.0)])
    assert not unsupported("Returns the square root of the value.", roots)
    text = Observed({"text"}, {"text": {"string"}}, {"string"}, 1, examples=[({"text": "ab"}, "AB")])
    assert not unsupported("Returns the text in uppercase.", text) and unsupported("Returns it in reverse order.", text)
    # what a small editor was seen writing of a tool whose calls showed it multiplies by 26801.39
    linear = Observed({"value"}, {"value": {"number"}}, {"number"}, 3,
                      examples=[({"value": 7.9}, 211731.0), ({"value": 15.8}, 423462.0), ({"value": 11}, 294815.3)])
    for invented in ("Computes the factorial of a given non-negative integer.", "Returns e raised to the given power.",
                     "Computes the reciprocal of a given value.", "Returns the natural logarithm of the value.",
                     "Returns the cube of the value."):
        assert unsupported(invented, linear), invented
    for unjudged in ("Converts faradays to milliampere-hours.", "Returns the cube root of the value.",
                     "Returns a volume in cubic feet.", "Converts cubed metres to litres."):
        assert not unsupported(unjudged, linear), unjudged
    assert not unsupported("Returns the factorial of n.", Observed({"n"}, {"n": {"number"}}, {"number"}, 1,
                                                                    examples=[({"n": 5}, 120)]))


def test_a_sentence_denying_the_tool_any_result_or_parameter_is_checked_on_the_working_calls():
    seen = Observed({"basal_metabolic_rate", "activity_level"}, {"activity_level": {"number"}}, {"number"}, 1,
                    examples=[({"basal_metabolic_rate": 1500, "activity_level": 1.2}, 1800.0)])
    assert unsupported("The function_8 tool does not return any value and it has no parameters.", seen)
    assert unsupported("It does not return anything.", seen)
    assert unsupported("Takes no parameters.", seen)
    assert not unsupported("Returns the daily calories.", seen)
    assert not unsupported("Returns nothing if the activity level is unknown.", seen)  # a condition code cannot check
    silent = Observed(set(), {}, {"other"}, 1, examples=[({}, None)])
    assert not unsupported("It returns nothing and takes no arguments.", silent)


def test_a_tool_no_call_has_worked_on_is_documented_by_the_form_its_errors_gave_and_nothing_else():
    from otbench.optimizers.evidence import EvidenceBook

    toolbox = Toolbox({"t": [DocumentedTool("function_1")]})
    book = EvidenceBook()
    book.add("t", [CallResult(ToolCall("function_1", {}), False,
                              error="TypeError: function_1() missing 1 required positional argument: 'ASIN'"),
                   CallResult(ToolCall("function_1", {"type": "object"}), False,
                              error="TypeError: function_1() got an unexpected keyword argument 'type'"),
                   CallResult(ToolCall("function_1", {"ASIN": [1]}), False,
                              error="TypeError: 'ASIN' must contain only letters and digits")], {"function_1"})
    book.teach(toolbox, "t")
    book.state_rules(toolbox, "t")
    tool = toolbox.get("t", "function_1")
    assert tool.description == "Called as function_1(ASIN=…). Not parameters: type (the tool refused them)."
    assert tool.parameter_descriptions["ASIN"] == "Must contain only letters and digits (its own error for ASIN)."
    calls = [("t", step) for step in [
        CallResult(ToolCall("function_1", {"type": "object"}), False,
                   error="TypeError: function_1() got an unexpected keyword argument 'type'"),
        CallResult(ToolCall("function_1", {"ASIN": [1]}), False,
                   error="TypeError: 'ASIN' must contain only letters and digits")]]
    assert invented_claims(toolbox, Toolbox({"t": [DocumentedTool("function_1")]}), calls).count == 0


class _StopAfter:
    """A tracker that keeps every iteration and stops the run (as a Ctrl-C would) once ``step`` is logged."""

    def __init__(self, step: int) -> None:
        self.step = step
        self.records = []

    def log_iteration(self, record) -> None:
        self.records.append(record)
        if record.step == self.step:
            raise KeyboardInterrupt


def test_a_resumed_compile_judges_its_docs_against_the_start_docs_and_every_call_seen_before_the_stop():
    whole = ToolObserver(env=_env(), editor=_program(_env())[1], progress=False)
    uninterrupted = whole.compile(_program(_env())[0], trainset=_env().tasks("train")).detailed_results.invented
    assert uninterrupted.sentences > 0 and uninterrupted.count == 0

    env = _env()
    program, editor = _program(env)
    stopped = _StopAfter(step=0)
    try:
        ToolObserver(env=env, editor=editor, tracker=stopped, progress=False).compile(program,
                                                                                       trainset=env.tasks("train"))
    except KeyboardInterrupt:
        pass
    last = stopped.records[-1]
    assert last.observed and last.checkpoint[START_DOCS] == env.toolbox().to_json()
    resume = {**last.checkpoint, OBSERVED_CALLS: [{"toolset": toolset, **json.loads(json.dumps(result.to_dict()))}
                                                  for record in stopped.records for toolset, result in record.observed]}
    resumed_program, editor = _program(env)
    resumed_program.toolbox.adopt_docs(Toolbox.from_json(resume["docs"]))
    resumed = ToolObserver(env=env, editor=editor, progress=False).compile(
        resumed_program, trainset=env.tasks("train"), resume=resume).detailed_results.invented
    assert (resumed.count, resumed.sentences) == (uninterrupted.count, uninterrupted.sentences)


def test_a_call_result_reads_back_as_it_was_logged():
    result = CallResult(ToolCall("f", {"x": 1}), True, output=[1, 2], situation="endgame", value=0.5,
                        injected="timeout")
    assert CallResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    refused = CallResult.refused(ToolCall("f", {}, problem="arguments must be an object, not null"))
    assert CallResult.from_dict(refused.to_dict()) == refused


def test_the_judge_checks_a_claimed_sum_or_product_against_the_calls():
    lcm = Observed({"a", "b"}, {"a": {"number"}, "b": {"number"}}, {"number"}, 1, examples=[({"a": 500, "b": 300}, 1500)])
    assert unsupported("The function_2 tool takes two integers as input and returns their sum.", lcm)
    assert unsupported("Multiplies the two numbers.", lcm)
    adder = Observed({"a", "b"}, {"a": {"number"}, "b": {"number"}}, {"number"}, 1, examples=[({"a": 3, "b": 4}, 7)])
    assert not unsupported("Takes two integers and returns their sum.", adder)
    total = Observed({"values"}, {"values": {"array"}}, {"number"}, 1, examples=[({"values": [1, 2, 3]}, 6)])
    assert not unsupported("Returns the sum of the numbers.", total)
    words = Observed({"text"}, {"text": {"string"}}, {"number"}, 1, examples=[({"text": "two and two"}, 4)])
    assert not unsupported("Reads two numbers in words and returns their sum.", words)  # text cannot refute it
