"""The coverage pass: every tool gets evidence from its own calls and a description from them, starting from the
docs it has; answers that are errors in words are read as failed calls."""

from __future__ import annotations

import json
import math
import re

import dspy
import pytest
from scripted_lm import prompt_text, scripted_lm

from otbench.core.calls import CallResult, ToolCall, read_worded_error, worded_error
from otbench.envs.functions import FunctionEnvironment
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import DocumentedTool
from otbench.optimizers import coverage as coverage_module
from otbench.optimizers import registry
from otbench.optimizers.base import COVERAGE, IterationRecord
from otbench.optimizers.coverage import apply_evidence, keep_evidence, relation_sentence, request_literals
from otbench.optimizers.easytool import EasyTool, EasyToolWriter
from otbench.optimizers.evidence import ToolEvidence
from otbench.optimizers.toolobserver.teleprompter import ToolObserver


# -- errors in words ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("output, expected", [
    ("Error: unknown unit 'kms'; use km, mi", "Error: unknown unit 'kms'; use km, mi"),
    ("Invalid expression: 2*(3", "Invalid expression: 2*(3"),
    ("Traceback (most recent call last): ...", "Traceback (most recent call last): ..."),
    ({"error": "bad input", "message": "say a number"}, "bad input: say a number"),
    ("❌ 表达式语法错误：invalid syntax", "❌ 表达式语法错误：invalid syntax"),  # a calculator server's own words
    ("Database error: no such table: users", "Database error: no such table: users"),  # an SQLite server's words
    ("ValueError: unknown unit", "ValueError: unknown unit"),
])
def test_an_answer_that_is_an_error_in_words_is_read_as_one(output, expected):
    assert worded_error(output) == expected
    read = read_worded_error(CallResult(ToolCall("f", {}), True, output=output))
    assert not read.ok and read.error == expected


@pytest.mark.parametrize("output", ["Unknown", "invalid", "The error function of 1 is 0.84", "Unknown city",
                                    "Standard error: 0.12", "Margin of error: 3 points", "Mean error: 0.4 mm",
                                    "Terror: a novel",
                                    {"error": "x", "rows": []}, 3.2, ["Error"]])
def test_a_plain_answer_that_merely_holds_such_a_word_is_an_answer(output):
    assert worded_error(output) is None


# -- what code reads from calls ----------------------------------------------------------------------------------------
def test_three_calls_on_one_number_say_what_the_tool_computes():
    assert relation_sentence("value", [(5, 8.04672), (10, 16.09344), (15, 24.14016)]) == "Returns 1.609344 times value."
    assert relation_sentence("degrees", [(20, 68), (40, 104), (60, 140)]) == "Returns 1.8 times degrees plus 32."
    assert relation_sentence("n", [(2, 7), (4, 7), (6, 7)]).startswith("Returns 7 whatever n is")
    assert relation_sentence("n", [(1, 1), (2, 4), (3, 9)]) == ""  # a square fits no line: nothing is claimed
    assert relation_sentence("n", [(0, 3), (0, 3), (5, 13)]) == ""  # one input twice: no slope is claimed


def test_a_requests_literal_values_are_its_numbers_quotes_codes_dates_and_names():
    assert request_literals("cities with more than 250,000 people, 3, 4 and 1,234.5 kg") == [250000, 3, 4, 1234.5]
    assert request_literals("the fraction nearest to 4.4787 with a denominator of at most 50.") == [4.4787, 50]
    assert request_literals("Tell me the number of airports serving Bhātpāra.") == ["Bhātpāra"]
    values = request_literals('Tell me the city served by airport CDG on 2024-05-01, near Lyon, for "gate 4" and 2.5')
    assert values[:3] == ["gate 4", 2024, 2.5] or {"gate 4", 2.5, "CDG", "2024-05-01", "Lyon"} <= set(values)
    assert {"CDG", "2024-05-01", "Lyon"} <= set(values)


# -- the pass, end to end with scripted models ---------------------------------------------------------------------------
def miles_to_km(distance):
    return round(distance * 1.609344, 6)


def celsius_to_fahrenheit(degrees):
    return round(degrees * 1.8 + 32, 6)


def airport_city(code):
    cities = {"CDG": "Paris", "LHR": "London", "JFK": "New York"}
    if code not in cities:  # a common habit: the error as an answer, not raised
        return f"Error: unknown airport code {code!r}; use a three-letter IATA code such as CDG"
    return cities[code]


TRAIN = [("Tell me 5 miles in kilometres.", 8.04672), ("Please work out 20 degrees Celsius in Fahrenheit.", 68.0),
         ("Find out the city served by airport CDG.", "Paris")]
TEST = [("I need to know 12 miles in kilometres.", miles_to_km(12)), ("Look up the city of airport LHR.", "London")]


def _metric(example, trajectory):
    return any(out == example.answer or (isinstance(out, float) and isinstance(example.answer, float)
                                         and abs(out - example.answer) < 1e-6) for out in trajectory.outputs)


def _env(presentation="names_only"):
    examples = [dspy.Example(question=q, answer=a) for q, a in TRAIN]
    tests = [dspy.Example(question=q, answer=a) for q, a in TEST]
    return FunctionEnvironment.opaque([miles_to_km, celsius_to_fahrenheit, airport_city], examples, _metric,
                                      test_examples=tests, presentation=presentation)


def _describing_editor(calls):
    """An editor that describes every tool of a batch, noting each batch it is asked."""

    def reply(messages):
        text = prompt_text(messages)
        names = re.findall(r"^Tool: (\S+)", text, re.MULTILINE)
        calls.append(names)
        return json.dumps({"tools": [{"name": name, "description": f"Looks something up for {name}."}
                                     for name in names]})

    return scripted_lm(reply, phase="editor")


def _silent_agent():
    """An agent that calls nothing: whatever is learned comes from the pass alone."""
    return scripted_lm(lambda messages: json.dumps({"calls": []}), phase="agent")


def _program(env):
    agent = FunctionCallingAgent()
    agent.lm = _silent_agent()
    return ToolAgentProgram(env.toolbox(), agent)


def _real(env, learned):
    return {env.real_names[tool.name]: tool for tool in learned.toolbox.toolset("tools")}


def test_every_tool_gets_a_working_call_what_it_computes_and_a_description_though_the_agent_called_none():
    env = _env()
    batches: list[list[str]] = []
    editor_lm = _describing_editor(batches)
    observer = ToolObserver(env=env, editor_lm=editor_lm, max_iterations=1, coverage=True, progress=False)
    learned = observer.compile(_program(env), trainset=env.tasks("train"))
    docs = _real(env, learned)
    assert "Returns 1.609344 times distance." in docs["miles_to_km"].description
    assert "Returns 1.8 times degrees plus 32." in docs["celsius_to_fahrenheit"].description
    city = docs["airport_city"].description
    # opened by the request it answered (its call shown there: no other working call is added), then the editor's words
    assert city.startswith('It answered: "Find out the city served by airport CDG." -> ') and "A call that worked" not in city
    assert "returned 'Paris'" in city and "Looks something up" in city
    assert all("Looks something up" in doc.description for doc in docs.values())
    assert batches and sorted(name for batch in batches for name in batch) == sorted(env.real_names)
    assert learned.detailed_results.tools_learned == 3
    first = learned.detailed_results.iterations[0]
    assert first.metrics["coverage_tools_tried"] == 3 and first.metrics["coverage_editor_calls"] == 1
    assert learned.detailed_results.invented.count == 0


def test_a_tool_s_doc_closes_with_a_request_it_answered_found_among_the_train_requests():
    """What a tool is for is said in the words of a request it answers: its working call is given each train request's
    values until the task's metric says one is answered (here by playing the call as the attempt's one reply)."""
    env = _env()
    learned = ToolObserver(env=env, editor_lm=_describing_editor([]), max_iterations=1, coverage=True,
                           progress=False).compile(_program(env), trainset=env.tasks("train"))
    docs = _real(env, learned)
    assert 'It answered: "Tell me 5 miles in kilometres."' in docs["miles_to_km"].description
    assert 'It answered: "Please work out 20 degrees Celsius in Fahrenheit."' in docs["celsius_to_fahrenheit"].description
    assert 'It answered: "Find out the city served by airport CDG."' in docs["airport_city"].description


class _Answering:
    """An environment that says whether an output is a request's answer with no run (as the pool does): unit tests of
    the search's rules; the pool's own ``answers`` is tested in ``test_pool.py``."""

    one_reply = False

    def __init__(self):
        self.functions = {"tool_1": lambda value: 2 * value, "tool_2": lambda value: 2 * value,
                          "tool_3": lambda value: round(3.0001 * value, 4)}
        self.calls: list[ToolCall] = []

    def execute(self, toolset, call):
        self.calls.append(call)
        return CallResult(call, True, output=self.functions[call.name](**call.arguments))

    def answers(self, task, output, *, within=0.0):
        return abs(output - task.answer) <= within * abs(task.answer) if within else output == task.answer


def test_a_working_call_is_given_a_request_s_values_kind_for_kind_and_each_for_a_kind_s_one_place():
    filled = coverage_module._filled
    assert list(filled({"city": "Lyon"}, ["IATA", "Mombasa"])) == [{"city": "IATA"}, {"city": "Mombasa"}]
    assert list(filled({"number": 1, "most": 1, "unit": "kg"}, [4.5, 50, "lb"])) == [
        {"number": 4.5, "most": 50, "unit": "lb"}]
    assert list(filled({"a": 1, "b": 2}, [3])) == [] and list(filled({"items": [1]}, [3])) == []


def test_a_request_two_tools_answer_is_kept_for_neither_and_a_line_s_prediction_is_confirmed_by_a_call():
    from otbench.modules.tool_docs import DocumentedTool, ParameterSpec
    from otbench.optimizers.evidence import EvidenceBook

    env = _Answering()
    tasks = [dspy.Example(question=q, answer=a) for q, a in
             [("Double 4, please.", 8), ("Scale 0 by three.", 0.0), ("Scale 5 by three.", env.functions["tool_3"](5)),
              ("Scale 7 by three.", 21.0)]]  # 21.0: within the prediction's reach of 3.0001 * 7, not what the tool returns
    book = EvidenceBook()
    tools = [DocumentedTool(name, parameters=[ParameterSpec("value", "number")]) for name in env.functions]
    for tool in tools:
        for value in (1, 2, 3):
            book.of("t", tool.name).add(env.execute("t", ToolCall(tool.name, {"value": value})))
    env.calls.clear()
    coverage = coverage_module.Coverage(env, editor=None, judge=True, exhausted=lambda: True)
    coverage.seek_answers(None, "t", tools, [(task, task.question) for task in tasks], book)
    assert not book.of("t", "tool_1").answered and not book.of("t", "tool_2").answered  # both answer "Double 4"
    (answered,) = book.of("t", "tool_3").answered
    assert answered.startswith('"Scale 5 by three." -> tool_3(value=5)')
    # the predictions cost nothing: calls only where a prediction answered (0 says nothing of a line through 0)
    assert sorted(call.arguments["value"] for call in env.calls if call.name == "tool_3") == [5, 7]


def factorial_of(count: int) -> int:
    """The factorial of count."""
    return math.factorial(count)


def test_a_tool_whose_results_outgrow_a_float_is_covered_with_no_relation_claimed():
    """A factorial of 340 is an integer no float holds: the pass fits no line through it and goes on."""
    examples = [dspy.Example(question="Work out 170 factorial.", answer=math.factorial(170))]
    env = FunctionEnvironment.opaque([factorial_of], examples, lambda example, trajectory: example.answer
                                     in trajectory.outputs, test_examples=examples)
    learned = ToolObserver(env=env, editor_lm=_describing_editor([]), max_iterations=1, coverage=True,
                           progress=False).compile(_program(env), trainset=env.tasks("train"))
    (doc,) = learned.toolbox.toolset("tools")
    assert 'It answered: "Work out 170 factorial."' in doc.description and "Returns " not in doc.description


def test_a_starting_description_is_shown_to_the_editor_to_repair_and_kept_where_it_wrote_nothing():
    env = _env("gold")
    prompts: list[str] = []

    def reply(messages):
        prompts.append(prompt_text(messages))
        return json.dumps({"tools": []})  # an editor that writes nothing: the starting docs stand, closed by code

    observer = ToolObserver(env=env, editor_lm=scripted_lm(reply, phase="editor"), max_iterations=1, coverage=True,
                            progress=False)
    learned = observer.compile(_program(env), trainset=env.tasks("train"))
    # these functions have no docstring: no current description is shown (a small editor copied a "(none)" back)
    assert prompts and "Tool: " in prompts[0] and "Current description:" not in prompts[0]
    doc = _real(env, learned)["miles_to_km"]
    assert doc.description == ('It answered: "Tell me 5 miles in kilometres." -> function_1(distance=5) returned 8.04672. '
                               'Returns 1.609344 times distance.')


def test_an_interrupted_pass_resumes_with_the_tools_it_finished(monkeypatch):
    monkeypatch.setattr(coverage_module, "TOOLS_PER_CALL", 1)
    env = _env()
    batches: list[list[str]] = []
    records: list[IterationRecord] = []

    class StopAfterOne:
        def log_iteration(self, record):
            records.append(record)
            if len(records) == 1:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ToolObserver(env=env, editor_lm=_describing_editor(batches), max_iterations=1, coverage=True, progress=False,
                     tracker=StopAfterOne()).compile(_program(env), trainset=env.tasks("train"))
    assert len(batches) == 1
    checkpoint = records[0].checkpoint
    assert checkpoint[COVERAGE]["steps"] == 1 and not checkpoint[COVERAGE]["finished"]
    program = _program(env)
    program.toolbox = type(program.toolbox).from_json(checkpoint["docs"])
    learned = ToolObserver(env=env, editor_lm=_describing_editor(batches), max_iterations=1, coverage=True,
                           progress=False).compile(program, trainset=env.tasks("train"), resume=checkpoint)
    assert sorted(name for batch in batches for name in batch) == sorted(env.real_names)  # none described twice
    steps = [record.step for record in learned.detailed_results.iterations]
    assert steps == sorted(steps) and steps[0] == 1  # numbered on after the interrupted pass's step


def test_the_pass_is_the_same_help_for_another_optimizer_and_a_knob_of_its_own():
    env = _env()
    helped = EasyTool(env=env, writer=_easytool_writer(), coverage=True, progress=False)
    learned = helped.compile(_program(env), trainset=env.tasks("train"))
    assert helped.coverage_evidence is not None
    assert learned.detailed_results.iterations[0].metrics["coverage_tools_tried"] == 3
    for name in ("easytool", "toolobserver", "play2prompt", "gepa"):
        spec = registry.spec_of(name)
        knobs = spec.knobs_from({"coverage": True})
        part = spec.define(knobs, "offline")
        assert part["coverage"] is True and "coverage" not in spec.define(spec.knobs_from({}), "offline")
        assert "coverage" in spec.row_label(part, "offline")
        assert spec.define(spec.knobs_from({"worded_errors": False}), "offline")["worded_errors"] is False
    assert registry.spec_of("easytool").row_label(
        registry.spec_of("easytool").define(registry.spec_of("easytool").knobs_from({"coverage": True}), "offline"),
        "offline") == "+ET (coverage)"


def _easytool_writer():
    writer = EasyToolWriter()
    writer.lm = scripted_lm(lambda m: json.dumps({"purpose": "Works on a value."} if "Condense" in prompt_text(m)
                                                 else {"scenario": "a value", "example_arguments": {}}), phase="editor")
    return writer


@pytest.mark.parametrize("keep", [True, False])
def test_a_doc_rewritten_after_the_pass_gets_back_the_request_it_answered_and_what_it_computes(keep):
    """EasyTool rewrites every doc in its own layout, which drops the pass's sentences; with ``keep_evidence`` (the
    default) they are put back where the pass placed them, its words between them; switched off, they stay dropped."""
    env = _env()
    learned = EasyTool(env=env, writer=_easytool_writer(), coverage=True, keep_evidence=keep,
                       progress=False).compile(_program(env), trainset=env.tasks("train"))
    docs = _real(env, learned)
    opened = [doc.description.startswith("It answered: ") for doc in docs.values()]
    related = "Returns 1.609344 times distance." in docs["miles_to_km"].description
    assert all("Works on a value." in doc.description for doc in docs.values())
    if keep:
        assert all(opened) and related and docs["miles_to_km"].description.endswith("Returns 1.609344 times distance.")
        assert learned.detailed_results.evidence_kept == 3
    else:
        assert not any(opened) and not related and learned.detailed_results.evidence_kept is None
    assert registry.spec_of("easytool").define(registry.spec_of("easytool").knobs_from({"keep_evidence": False}),
                                               "offline")["keep_evidence"] is False


def test_a_description_s_own_returns_sentence_stays_and_only_what_code_wrote_before_is_replaced():
    """A sentence opening with "Returns" is an editor's or a starting doc's as often as code's: only code's forms (a
    relation, a working call, a request answered) are taken for a sentence an earlier pass wrote and replaced."""
    evidence = ToolEvidence(relation="Returns 2.204623 times value.")
    tool = DocumentedTool("f", description="")
    apply_evidence(tool, "Converts kilograms to pounds. Returns the result in pounds.", evidence)
    assert tool.description == "Converts kilograms to pounds. Returns the result in pounds. Returns 2.204623 times value."
    earlier = DocumentedTool("f", description="Converts kg. Returns 2.2 times value. A call that worked: f(value=1) returned 2.2.")
    apply_evidence(earlier, "", evidence)
    assert earlier.description == "Converts kg. Returns 2.204623 times value."
    small = DocumentedTool("f", description="")
    apply_evidence(small, "Scales it. Returns 1e-05 times value.", ToolEvidence(relation="Returns 1e-05 times value."))
    assert small.description == "Scales it. Returns 1e-05 times value."


def test_keeping_the_pass_s_sentences_leaves_its_own_docs_as_they_are_and_adds_no_sentence_twice():
    evidence = ToolEvidence(answered=['"Tell me 5 miles in kilometres." -> f(distance=5) returned 8.04672'],
                            relation="Returns 1.609344 times distance.")
    opening = f"It answered: {evidence.answered[0]}."
    as_left = DocumentedTool("f", description=f"{opening} Converts miles. {evidence.relation}")
    assert keep_evidence(as_left, evidence) == 0
    moved = DocumentedTool("f", description=f"Converts miles to km. {evidence.relation} Example: {evidence.answered[0]}.")
    assert keep_evidence(moved, evidence) == 1
    assert moved.description == f"{opening} Converts miles to km. {evidence.relation}"
    assert keep_evidence(moved, evidence) == 0
    # no request answered: the call that worked closes it, and one already said (its arguments in another order) stays
    worked = ToolEvidence(examples=[[{"a": 1, "b": 2}, 3]])
    said = DocumentedTool("g", description="Adds. A call that worked: g(b=2, a=1) returned 3.")
    assert keep_evidence(said, worked) == 0
    blank = DocumentedTool("g", description="Adds two numbers.")
    assert keep_evidence(blank, worked) == 1 and blank.description == "Adds two numbers. A call that worked: g(a=1, b=2) returned 3."


def test_coverage_is_refused_where_docs_are_learned_per_task():
    env = _env()
    observer = ToolObserver(env=env, editor_lm=_describing_editor([]), mode="online", coverage=True, progress=False)
    with pytest.raises(ValueError, match="coverage"):
        observer.compile(_program(env), trainset=env.tasks("train"))


def test_a_call_answered_with_an_error_in_words_is_evidence_that_starts_experiments():
    """The agent calls the airport tool with a city name; the tool answers with an error in words. Read as a failed
    call, its words are evidence and the learner experiments on it (without reading errors in words, the call
    "worked" and nothing was learned)."""
    env = _env("names_params")
    shown = {real: shown for shown, real in env.real_names.items()}

    def agent_reply(messages):
        return json.dumps({"calls": [{"name": shown["airport_city"], "arguments": {"code": "Paris"}}]})

    def run(worded_errors):
        program = _program(env)
        program.agent.lm = scripted_lm(agent_reply, phase="agent")
        editor = scripted_lm(lambda m: json.dumps({"description": "Finds a city."}), phase="editor")
        return ToolObserver(env=env, editor_lm=editor, max_iterations=1, progress=False,
                            worded_errors=worded_errors).compile(program, trainset=env.tasks("train")[2:])

    read = run(True).detailed_results.iterations[0]
    unread = run(False).detailed_results.iterations[0]
    assert read.metrics["experiment_calls"] >= 1 and unread.metrics["experiment_calls"] == 0
    assert TokenLedger  # the scripted LMs meter tokens as served ones do


def test_a_call_that_passes_the_request_s_percent_as_a_fraction_is_read_as_a_doubt_to_test():
    """0.15 for the request's 15% gets a plausible answer and no error: read against the request, it is a failed call
    whose error says so; the value as written, another number of the request and other requests stay as they are."""
    from otbench.core.calls import read_against_request, scale_mismatch

    request = "What is a 15% tip on a bill of 80 dollars?"
    doubted = read_against_request(request, CallResult(ToolCall("tip", {"bill": 80, "rate": 0.15}), True, output=0.12))
    assert not doubted.ok and "says 15% and the call passed 0.15" in str(doubted.error) and doubted.output == 0.12
    assert "passed 1500" in str(scale_mismatch(request, ToolCall("tip", {"bill": 80, "rate": 1500})))
    assert scale_mismatch(request, ToolCall("tip", {"bill": 80, "rate": 15})) is None
    assert scale_mismatch("What is 50% of 0.5?", ToolCall("f", {"x": 0.5, "share": 0.5})) is None  # 0.5 is written
    assert scale_mismatch("Add 0.15 to 80", ToolCall("f", {"a": 0.15, "b": 80})) is None  # no percent asked


def test_a_call_that_returns_the_whole_where_the_request_asks_for_a_part_is_read_as_a_doubt_to_test():
    """A tool that answers "each of 4 pays what of 120?" with 120, or "the average of these" with their sum, returns a
    plausible number and no error: read against the request it is a failed call whose error says so; the part itself,
    a request that asks for no part, and a whole the request gives nothing to divide by stay as they are."""
    from otbench.core.calls import part_mismatch, read_against_request

    split = "Four friends split a dinner bill of 120 dollars evenly. How much does each pay?"
    doubted = read_against_request(split, CallResult(ToolCall("split", {"total": 120, "people": 4}), True, output=120))
    assert not doubted.ok and "returned 120, the whole" in str(doubted.error) and doubted.output == 120
    assert read_against_request(split, CallResult(ToolCall("split", {"total": 120, "people": 4}), True, output=30)).ok
    mean = "What is the average score of the class?"
    summed = CallResult(ToolCall("stats", {"scores": [70, 80, 90]}), True, output="Result: 240.0")
    assert "returned 240" in str(part_mismatch(mean, summed))
    assert part_mismatch(mean, CallResult(ToolCall("stats", {"scores": [70, 80, 90]}), True, output=80.0)) is None
    assert part_mismatch("What is the total of 120 and 4?", CallResult(ToolCall("f", {"a": 120, "b": 4}), True,
                                                                       output=120)) is None  # no part asked
    assert part_mismatch("What is the mean of 2 and 2?", CallResult(ToolCall("f", {"a": 2, "b": 2}), True,
                                                                    output=2)) is None  # nothing to divide
    assert part_mismatch("Interest is 5 per cent of 200: what is it?", CallResult(ToolCall("f", {"a": 200}), True,
                                                                               output=200)) is None  # per cent: no part


def tip(bill, percent):
    return round(bill * percent / 100, 6)


def test_a_call_on_the_wrong_scale_starts_experiments_only_when_read_against_its_request():
    """The agent passes 0.15 for the request's 15%: the tool answers 0.12 and raises nothing. Read against the
    request, the call is a doubt the learner tests (experiments run); without that reading it "worked" and nothing is
    tried."""
    examples = [dspy.Example(question=f"What is a {p}% tip on a bill of {b} dollars?", answer=tip(b, p))
                for b, p in ((80, 15), (40, 20), (60, 10))]
    env = FunctionEnvironment.opaque([tip], examples, _metric, test_examples=examples[:1])
    shown = next(iter(env.real_names))

    def agent_reply(messages):
        bill, percent = re.findall(r"(\d+)% tip on a bill of (\d+)", prompt_text(messages))[0][::-1]
        return json.dumps({"calls": [{"name": shown, "arguments": {"bill": int(bill), "percent": int(percent) / 100}}]})

    def run(request_scales):
        program = _program(env)
        program.agent.lm = scripted_lm(agent_reply, phase="agent")
        editor = scripted_lm(lambda m: json.dumps({"description": "Gives a tip."}), phase="editor")
        return ToolObserver(env=env, editor_lm=editor, max_iterations=1, progress=False, gate=False,
                            request_scales=request_scales).compile(program, trainset=env.tasks("train"))

    read = run(True).detailed_results.iterations[0]
    unread = run(False).detailed_results.iterations[0]
    assert read.metrics["experiment_calls"] >= 1 and unread.metrics["experiment_calls"] == 0


def test_a_batch_description_that_copies_its_prompt_back_keeps_only_what_it_wrote_before_it():
    """A small editor given a current description copies it, then goes on into the prompt's parameter and fact lines:
    those lines are the prompt, not a description."""
    from otbench.modules.editor import DocEditor
    from otbench.modules.tool_docs import DocumentedTool, ParameterSpec

    tools = [DocumentedTool("f", description="The square root of quantity.", parameters=[ParameterSpec("quantity")]),
             DocumentedTool("g")]
    copied = "The square root of quantity, rounded to 4 decimals.\nParameters:\n- quantity (any)\n- worked: f(quantity=4)"
    editor = DocEditor()

    def reply(messages):
        return json.dumps({"tools": [{"name": "f", "description": copied},
                                     {"name": "g", "description": "Doubles a number."}]})

    editor.lm = scripted_lm(reply, phase="editor")
    exchange = editor.describe_batch(tools, {"f": ["worked: f(quantity=4) returned 2.0"], "g": []})
    assert exchange.updates == {"f": "The square root of quantity, rounded to 4 decimals.", "g": "Doubles a number."}


def test_a_batch_description_cut_off_at_its_bound_ends_at_its_last_whole_sentence():
    from otbench.modules.editor import DocEditor

    long = "Returns the ISO code of a country. " + "It looks the name up in a table of every country " * 8
    editor = DocEditor()
    editor.lm = scripted_lm(lambda messages: json.dumps({"tools": [{"name": "f", "description": long[:240]}]}),
                            phase="editor")
    assert editor.describe_batch([DocumentedTool("f")], {"f": []}).updates == {"f": "Returns the ISO code of a country."}


def test_where_the_budget_is_spent_the_tools_left_are_closed_by_code_alone():
    """Describing costs tokens, what calls showed does not: with no budget left the docs still say it."""
    from otbench.optimizers.evidence import EvidenceBook

    env = _env()
    toolbox = env.toolbox()
    reports = []
    state = coverage_module.Coverage(env, editor=None, judge=True, exhausted=lambda: True).run(
        toolbox, env.tasks("train"), EvidenceBook(), coverage_module.CoverageState(), reports.append)
    docs = {env.real_names[tool.name]: tool.description for tool in toolbox.toolset("tools")}
    assert not reports and state.editor_calls == 0 and not state.finished
    assert docs["miles_to_km"].startswith('It answered: "Tell me 5 miles in kilometres."')
    assert docs["miles_to_km"].endswith("Returns 1.609344 times distance.")
