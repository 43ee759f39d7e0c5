"""A working call that took nothing from its request is not taken as working (``request_values``): with no success
bit, it is how test-time learning sees that a small agent picked the wrong tool."""

import json
from dataclasses import replace

import dspy
from scripted_lm import prompt_text, scripted_lm, shown_tool_names

from otbench import FunctionEnvironment
from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory
from otbench.evals.invented import Observed, not_for_sentence, unsupported
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import DocumentedTool, Toolbox
from otbench.optimizers.request_values import OffRequest, Sources, calls_off_request, refused_off_request
from otbench.optimizers.toolobserver.knobs import IMPROVED
from otbench.optimizers.toolobserver.teleprompter import ToolObserver, _state_not_for

DENSITY = "My object weighs 50 kilograms and takes up about 10 cubic meters. What is its density?"


def _attempt(question: str, *calls: tuple[str, dict, object]) -> Trajectory:
    steps = [CallResult(ToolCall(name, arguments), ok=True, output=output) for name, arguments, output in calls]
    return Trajectory(task_id="t", toolset="t", question=question, steps=steps)


def test_values_are_read_as_said_in_digits_words_percentages_and_ratios():
    said = Sources(["I roll the die twenty times; each roll has a one in six chance, at a 5% fee, for 1,200 dollars.",
                    "It is in New York."])
    assert all(said.gives(value) for value in (20, 1 / 6, 0.05, 1200, "1200", "New York", "new york"))
    assert not any(said.gives(value) for value in (7, 0.7, "AAPL", "Boston"))


def test_an_integer_no_float_holds_is_read_as_its_digits():
    huge = 10**400
    assert Sources([f"Is {huge} even?"]).gives(huge) and not Sources(["Is 12 even?"]).gives(huge)


def test_a_working_call_with_no_value_and_no_word_from_the_request_is_flagged():
    wrong = _attempt(DENSITY, ("function_3", {"stock_name": "AAPL"}, 210.62))
    right = _attempt(DENSITY, ("function_1", {"mass": 50, "volume": 10}, 5.0))
    ticker = _attempt("What is the latest price of Apple's stock?", ("function_1", {"stock_name": "AAPL"}, 210.62))
    interfaces = {"function_1": ["mass", "volume"], "function_3": ["stock_name"]}
    assert calls_off_request(wrong, interfaces) == [OffRequest(0, "with no value the request gives")]
    assert calls_off_request(right, interfaces) == []
    assert calls_off_request(ticker, {"function_1": ["stock_name"]}) == []  # "stock" is said: a value known of the world


def test_a_call_beside_a_tool_whose_parameters_the_request_names_is_flagged():
    request = "The triangle has a base of 500 meters and a height of 300 meters. What is its area?"
    interfaces = {"function_1": ["stock_name"], "function_2": ["a", "b"], "function_3": ["base", "height"]}
    lcm = _attempt(request, ("function_2", {"a": 500, "b": 300}, 1500))
    area = _attempt(request, ("function_3", {"base": 500, "height": 300}, 75000.0))
    assert calls_off_request(lcm, interfaces) == [
        OffRequest(0, "while the request names the parameters of function_3 (base, height)")]
    assert calls_off_request(area, interfaces) == []


def test_a_name_said_as_two_words_is_used_by_the_request():
    request = "I have a zip code, 90210: which city is it?"
    interfaces = {"function_2": ["zipcode"], "function_3": ["function", "x"]}
    wrong = _attempt(request, ("function_3", {"function": "city", "x": 90210}, 0))
    assert calls_off_request(wrong, interfaces) == [
        OffRequest(0, "while the request names the parameters of function_2 (zipcode)")]


def _refused(question: str, name: str, arguments: dict, error: str) -> Trajectory:
    return Trajectory(task_id="t", toolset="t", question=question,
                      steps=[CallResult(ToolCall(name, arguments), ok=False, error=error)])


def test_a_refused_call_is_off_request_only_with_a_sign_of_the_wrong_tool():
    deaths = "What is the latest total COVID-19 death count for Brazil, the country I study?"
    interfaces = {"function_3": ["year", "country"], "function_4": ["country"], "function_1": ["ASIN"]}
    holidays = _refused(deaths, "function_3", {"year": "2020", "country": "Brazil"}, "ValueError: 'country' must be …")
    assert refused_off_request(holidays, interfaces) == [
        OffRequest(0, "which it refused, while the request names the parameters of function_4 (country)")]
    product = _refused(deaths, "function_1", {"ASIN": "B07"}, "ValueError: 'ASIN' must be …")
    assert refused_off_request(product, interfaces) == [OffRequest(0, "which it refused, with no value the request gives")]
    covid = _refused(deaths, "function_4", {"country": "BR"}, "LookupError: no data for 'BR'")
    assert refused_off_request(covid, interfaces) == []  # the right tool refused a value: nothing says the tool is wrong
    booking = "Book a king room from 2023-12-11 to 2024-08-15."
    date = _refused(booking, "function_1", {"room_type": "king", "check_in_date": "2023-12-11"},
                    "ValueError: 'check_in_date' must be a date in MM-DD-YYYY format")
    assert refused_off_request(date, {"function_1": ["room_type", "check_in_date"], "function_2": ["ip_address"]}) == []
    assert calls_off_request(holidays, interfaces) == []  # working calls only there


def test_a_value_an_earlier_call_returned_is_taken_from_the_attempt():
    series = _attempt("What is the weather where the Eiffel Tower stands?",
                      ("function_1", {"place": "Eiffel Tower"}, {"latitude": 48.86, "longitude": 2.29}),
                      ("function_2", {"coordinates": [48.86, 2.29]}, {"temperature": 11}))
    assert calls_off_request(series, {}) == []


def test_the_not_for_sentence_is_one_sentence_the_claims_judge_accepts():
    sentence = not_for_sentence("I'm doing physics. " + DENSITY, 'function_3(stock_name="AAPL")',
                                "with no value the request gives")
    observed = Observed({"stock_name"}, {"stock_name": {"string"}}, {"number"}, 1, tools={"function_3"})
    assert sentence.startswith('Not for requests like "I\'m doing physics My object')
    assert unsupported(sentence, observed) == []


def stock_price(stock_name: str) -> float:
    return 210.62 if stock_name.isupper() else 0.0


def density(mass: float, volume: float) -> float:
    return mass / volume


def first_tool_agent(messages) -> str:
    """A small agent's habit: the first tool, with a value of its own, unless that tool's doc says it is not for
    this request (or it is not shown); then the tool with the request's words in its parameters."""
    content = prompt_text(messages)
    if "Not for requests like" in content or "stock_price" not in shown_tool_names(messages):
        return json.dumps({"calls": [{"name": "density", "arguments": {"mass": 50, "volume": 10}}]})
    return json.dumps({"calls": [{"name": "stock_price", "arguments": {"stock_name": "AAPL"}}]})


def _learn(request_values: bool, code_first: bool = True) -> tuple[Trajectory, str, TokenLedger]:
    examples = [dspy.Example(question=DENSITY, answer=5.0)]
    env = FunctionEnvironment([stock_price, density], examples,
                              lambda example, trajectory: example.answer in trajectory.outputs)
    ledger = TokenLedger()
    agent, editor = FunctionCallingAgent(), DocEditor()
    agent.lm = scripted_lm(first_tool_agent, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(lambda m: json.dumps({"description": ""}), ledger=ledger, phase="editor")
    optimizer = ToolObserver(env=env, editor=editor, mode="online", progress=False,
                             improvements=replace(IMPROVED, request_values=request_values, code_first=code_first))
    learned = optimizer.compile(ToolAgentProgram(env.toolbox(), agent), trainset=examples)
    final = learned.detailed_results.final_trajectories[0]
    return final, learned.toolbox.get(env.toolset, "stock_price").description, ledger


def test_online_an_attempt_with_no_request_value_is_not_settled_and_its_tool_is_marked_not_for_it():
    final, doc, ledger = _learn(request_values=True)
    assert [step.call.name for step in final.steps] == ["density"] and final.success
    assert doc.startswith('Not for requests like "My object weighs 50 kilograms')
    assert 'stock_price(stock_name="AAPL")' in doc
    ablated, ablated_doc, ablated_ledger = _learn(request_values=False)
    assert [step.call.name for step in ablated.steps] == ["stock_price"] and not ablated.success
    assert "Not for" not in ablated_doc
    # not settled: attempted again, with what code wrote (code_first), the editor asked only once that is not enough
    assert ablated_ledger.phase("agent").calls == 1 < ledger.phase("agent").calls
    _, _, asking = _learn(request_values=True, code_first=False)
    assert ablated_ledger.phase("editor").calls == 0 < asking.phase("editor").calls


def test_two_off_request_calls_to_one_tool_each_leave_their_sentence():
    toolbox = Toolbox({"t": [DocumentedTool(name="function_3", description="")]})
    attempt = _attempt(DENSITY, ("function_3", {"stock_name": "AAPL"}, 210.62),
                       ("function_3", {"stock_name": "MSFT"}, 420.1))
    off = calls_off_request(attempt, {"function_3": ["stock_name"]})
    assert [item.step for item in off] == [0, 1]
    assert _state_not_for(toolbox, attempt, off) == 1
    doc = toolbox.get("t", "function_3").description
    assert 'function_3(stock_name="AAPL")' in doc and 'function_3(stock_name="MSFT")' in doc


DEATHS = "What is the latest total COVID-19 death count for Brazil, the country I study?"


def holidays(year: str, country: str) -> list:
    if country not in ("US", "DE"):
        raise ValueError(f"'country' must be one of US, DE, got {country!r}")
    return []


def covid_deaths(country: str) -> int:
    return 700_000 if country == "Brazil" else 0


def holiday_habit_agent(messages) -> str:
    """A small agent's habit: the first tool, refused, again and again, unless its doc says it is not for this
    request (or it is not shown); then the tool whose parameters the request names."""
    if "Not for requests like" in prompt_text(messages) or "holidays" not in shown_tool_names(messages):
        return json.dumps({"calls": [{"name": "covid_deaths", "arguments": {"country": "Brazil"}}]})
    return json.dumps({"calls": [{"name": "holidays", "arguments": {"year": "2020", "country": "Brazil"}}]})


def _learn_refused(refused_requests: bool, tools: list, **switches: bool) -> tuple[Trajectory, str]:
    examples = [dspy.Example(question=DEATHS, answer=700_000)]
    env = FunctionEnvironment(tools, examples, lambda example, trajectory: example.answer in trajectory.outputs)
    agent, editor = FunctionCallingAgent(), DocEditor()
    agent.lm = scripted_lm(holiday_habit_agent)
    editor.lm = scripted_lm(lambda m: json.dumps({"description": ""}))
    optimizer = ToolObserver(env=env, editor=editor, mode="online", progress=False, max_iterations=2,
                             improvements=replace(IMPROVED, refused_requests=refused_requests, **switches))
    learned = optimizer.compile(ToolAgentProgram(env.toolbox(), agent), trainset=examples)
    return learned.detailed_results.final_trajectories[0], learned.toolbox.get(env.toolset, "holidays").description


def test_online_a_refused_call_to_the_wrong_tool_marks_it_not_for_the_request():
    final, doc = _learn_refused(True, [holidays, covid_deaths])
    assert [step.call.name for step in final.steps] == ["covid_deaths"] and final.success
    assert doc.startswith('Not for requests like "What is the latest total COVID-19')
    assert "which it refused, while the request names the parameters of covid_deaths (country)" in doc
    # vary_repeats would make the repeated refusal again without its tool: off, the ablation shows the sentence's part
    ablated, ablated_doc = _learn_refused(False, [holidays, covid_deaths], vary_repeats=False)
    assert [step.call.name for step in ablated.steps] == ["holidays"] and "Not for" not in ablated_doc
    _, alone_doc = _learn_refused(True, [holidays])  # the only tool: a refusal says how to call it, not to leave it
    assert "Not for" not in alone_doc
