"""Your own tools, tasks and metric: FunctionEnvironment with every optimizer, the harness and DSPy's ReAct."""

import inspect
import json
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import dspy
import pytest
from own_tools_lm import everyone
from scripted_lm import scripted_lm
from toy_env import docs_aware_agent_reply

from otbench import FunctionEnvironment
from otbench.core.calls import ToolCall
from otbench.envs.functions import task_id
from otbench.evals.harness import run_rollouts
from otbench.llm import session
from otbench.optimizers.easytool import EasyTool
from otbench.optimizers.gepa import GEPA
from otbench.optimizers.play2prompt import Play2Prompt
from otbench.optimizers.toolobserver.teleprompter import ToolObserver

README = Path(__file__).resolve().parents[1] / "README.md"


def function_1(a: int, b: int) -> int:
    return a + b


def function_2(a: int, b: int) -> int:
    return a * b


def _examples(pairs=((2, 3), (4, 5), (6, 7), (8, 9))):
    return [dspy.Example(question=f"add {a} and {b}", answer=a + b) for a, b in pairs]


def _env(**options):
    return FunctionEnvironment([function_1, function_2], _examples(),
                               metric=lambda example, trajectory: example.answer in trajectory.outputs, **options)


def _readme_loop() -> str:
    section = README.read_text().split("## Your tools, your tasks, your metric", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_loop_runs_as_printed(capsys, monkeypatch):
    code = _readme_loop()
    assert len([line for line in code.splitlines() if line.strip()]) <= 12

    @contextmanager
    def scripted_embedded_lm():  # the embedded model itself runs in the embedded test set
        yield scripted_lm(everyone)

    monkeypatch.setattr(session, "embedded_lm", scripted_embedded_lm)
    try:
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})  # noqa: S102 - the README as printed
    finally:
        dspy.configure(lm=None)
    assert capsys.readouterr().out.strip() == "{'score': 1.0, 'n': 1.0} 42"


def test_every_optimizer_learns_on_plain_functions_and_the_harness_scores_the_result():
    env = _env()
    with dspy.context(lm=scripted_lm(everyone)):
        start = env.summarise(run_rollouts(env, env.program().agent, env.toolbox(), env.tasks("test"), progress=False))
        for optimizer in (ToolObserver(env=env, max_iterations=1, progress=False),
                          EasyTool(env=env, progress=False),
                          Play2Prompt(env=env, initial_samples=1, progress=False),
                          GEPA(env=env, budget=2, progress=False)):
            learned = optimizer.compile(env.program(), trainset=env.tasks("train")[:2])
            assert learned.detailed_results.iterations, type(optimizer).__name__
            run_rollouts(env, learned.agent, learned.toolbox, env.tasks("test"), progress=False)
    assert start == {"score": 0.0, "n": 4.0}  # blank docs: the agent guesses function_2 and multiplies


def test_names_and_docstrings_are_shown_as_written_and_signatures_as_parameters():
    def function_3(text: str, times: int = 2) -> str:
        """Repeats text."""
        return text * times

    env = FunctionEnvironment([function_1, function_3], _examples(), metric=lambda e, t: 0.0)
    one, three = env.toolbox().toolset("tools")
    assert (one.name, one.description, [p.name for p in one.parameters]) == ("function_1", "", ["a", "b"])
    assert three.description == "Repeats text."
    assert [(p.name, p.type, p.required) for p in three.parameters] == [("text", "string", True),
                                                                        ("times", "integer", False)]
    def function_4(values: "list[float]", label: "str | None" = None) -> float:
        return sum(values)

    strings = FunctionEnvironment([function_4], _examples(), metric=lambda e, t: 0.0).toolbox().toolset("tools")[0]
    assert [(p.name, p.type, p.required) for p in strings.parameters] == [("values", "array", True),
                                                                          ("label", "any", False)]
    hidden = FunctionEnvironment([function_1], _examples(), metric=lambda e, t: 0.0, show_parameters=False)
    assert hidden.toolbox().toolset("tools")[0].parameters is None


def test_calls_run_the_functions_and_failures_read_as_python_errors():
    env = _env()
    assert env.execute("tools", ToolCall("function_1", {"a": 2, "b": 3})).output == 5
    missing = env.execute("tools", ToolCall("function_1", {"a": 2}))
    assert not missing.ok and missing.error == "TypeError: function_1() missing 1 required positional argument: 'b'"
    assert env.execute("tools", ToolCall("function_9", {})).error == "NameError: no tool named 'function_9'"
    refused = env.execute("tools", ToolCall("function_1", {}, problem="arguments must be an object, not null"))
    assert not refused.ok and refused.error == "function_1(): arguments must be an object, not null"


def test_a_metric_may_return_a_score_with_feedback_for_the_editor():
    env = FunctionEnvironment([function_1], _examples(), metric=lambda e, t: dspy.Prediction(score=0.5, feedback="close"))
    with dspy.context(lm=scripted_lm(docs_aware_agent_reply)):
        trajectory = env.rollout(env.program().agent, env.toolbox(), env.tasks()[0])
    assert (trajectory.metrics, trajectory.success, trajectory.feedback) == ({"score": 0.5}, False, "close")


def test_learned_docs_come_out_as_dspy_tools():
    env = _env()
    toolbox = env.toolbox()
    toolbox.get("tools", "function_1").with_docs(description="Adds a and b.")
    tools = env.dspy_tools(toolbox)
    assert [t.name for t in tools] == ["function_1", "function_2"]
    assert tools[0].desc == "Adds a and b." and not tools[1].desc  # a blank doc stays blank
    assert tools[0](a=2, b=40) == 42


@pytest.mark.parametrize(("functions", "examples", "message"), [
    ([lambda a: a], _examples(), "named function"),
    ([function_1, function_1], _examples(), "two tools are named 'function_1'"),
    ([function_1], [dspy.Example(prompt="add 1 and 2")], "needs a 'question' text"),
])
def test_bad_arguments_are_refused_with_a_clear_message(functions, examples, message):
    with pytest.raises(ValueError, match=message):
        FunctionEnvironment(functions, examples, metric=lambda e, t: 0.0)


# -- opaque presentation, gold docs, the oracle and per-task state --------------------------------------------
def add_numbers(a: int, b: int) -> int:
    """Adds a and b."""
    return a + b


def multiply_numbers(a: int, b: int) -> int:
    """Multiplies a and b."""
    return a * b


def scale_text(text: str, times: int = 2) -> str:
    """Repeats text."""
    return text * times


REAL = (add_numbers, multiply_numbers, scale_text)
REAL_NAMES = {function.__name__ for function in REAL}


def _gold_examples():
    return [dspy.Example(question=f"add {a} and {b}", answer=a + b,
                         calls=[{"name": "add_numbers", "arguments": {"a": a, "b": b}}]) for a, b in [(2, 3), (4, 5)]]


def _opaque(presentation="names_only", seed=0, **options):
    return FunctionEnvironment.opaque(REAL, _gold_examples(), lambda e, t: e.answer in t.outputs,
                                      presentation=presentation, seed=seed, **options)


def test_opaque_tools_are_numbered_in_a_seeded_order_and_show_what_the_presentation_shows():
    env = _opaque()
    assert list(env.functions) == ["function_1", "function_2", "function_3"]
    assert _opaque(seed=0).real_names == env.real_names  # the same seed, the same order
    assert len({tuple(_opaque(seed=seed).real_names.values()) for seed in range(6)}) > 1
    assert set(env.real_names.values()) == REAL_NAMES and env.setting == "names_only"
    shown = {tool.name: tool for tool in env.toolbox().toolset("tools")}
    assert all(tool.description == "" and tool.parameters is None for tool in shown.values())
    with_params = {tool.name: tool for tool in _opaque("names_params").toolbox().toolset("tools")}
    scale = next(name for name, real in env.real_names.items() if real == "scale_text")
    assert with_params[scale].description == ""
    assert [(p.name, p.type, p.required) for p in with_params[scale].parameters] == [("text", "string", True),
                                                                                   ("times", "integer", False)]
    gold_shown = {tool.name: tool.description for tool in _opaque("gold").toolbox().toolset("tools")}
    assert gold_shown[scale] == "Repeats text."


def test_gold_docs_are_the_true_docs_under_the_opaque_names_in_every_presentation():
    for presentation in ("names_only", "names_params", "gold"):
        env = _opaque(presentation)
        gold = {tool.name: tool for tool in env.toolbox("gold").toolset("tools")}
        assert set(gold) == set(env.functions)
        for shown, real in env.real_names.items():
            assert gold[shown].description == inspect.getdoc(globals()[real])
            assert [p.name for p in gold[shown].parameters] == list(inspect.signature(globals()[real]).parameters)
        gold[next(iter(gold))].with_docs(description="edited")  # fresh docs every time: editing one copy changes no other
        assert env.toolbox("gold").toolset("tools")[0].description != "edited"
    plain = _env()  # docs given as the functions show them: gold is the same
    assert [t.description for t in plain.toolbox("gold").toolset("tools")] == ["", ""]


def test_python_errors_name_the_opaque_tool_and_no_real_name_reaches_the_agent():
    env = _opaque()
    seen = []
    for shown in env.functions:
        for arguments in ({}, {"nonsense": 1}, {"a": 1, "b": 2, "c": 3}, {"text": 5, "times": "x"}):
            result = env.execute("tools", ToolCall(shown, arguments))
            seen.append(result.error or repr(result.output))
    adder = next(name for name, real in env.real_names.items() if real == "add_numbers")
    missing = env.execute("tools", ToolCall(adder, {"a": 1})).error
    assert missing == f"TypeError: {adder}() missing 1 required positional argument: 'b'"
    unexpected = env.execute("tools", ToolCall(adder, {"a": 1, "b": 2, "c": 3})).error
    assert unexpected == f"TypeError: {adder}() got an unexpected keyword argument 'c'"
    docs = [json.dumps(tool.openai_schema()) for tool in env.toolbox().toolset("tools")]
    assert not any(real in text for real in REAL_NAMES for text in [*seen, *docs])
    assert env.execute("tools", ToolCall(adder, {"a": 2, "b": 3})).output == 5
    assert add_numbers.__name__ == "add_numbers" and add_numbers(1, 2) == 3  # the originals are left as they were


def test_only_plain_functions_can_be_renamed():
    with pytest.raises(ValueError, match="plain functions"):
        FunctionEnvironment.opaque([len], _gold_examples(), metric=lambda e, t: 0.0)
    with pytest.raises(ValueError, match="unknown presentation 'names_desc'"):
        _opaque("names_desc")


def test_the_oracle_replays_gold_calls_under_the_shown_names_and_scores_one():
    for presentation in ("names_only", "gold"):
        env = _opaque(presentation, seed=3)
        tasks = env.tasks("test")
        trajectories = run_rollouts(env, env.oracle_agent(tasks), env.toolbox(), tasks, progress=False)
        assert env.summarise(trajectories) == {"score": 1.0, "n": 2.0}
        assert {step.call.name for t in trajectories for step in t.steps} == {
            name for name, real in env.real_names.items() if real == "add_numbers"}
    with pytest.raises(ValueError, match="no gold calls"):
        _env().oracle_agent(_env().tasks())
    stray = [dspy.Example(question="q", calls=[{"name": "subtract_numbers", "arguments": {}}])]
    with pytest.raises(ValueError, match="'subtract_numbers', which is none of the tools"):
        FunctionEnvironment.opaque(REAL, stray, metric=lambda e, t: 0.0).oracle_agent(stray)
    plain = FunctionEnvironment([function_1], [dspy.Example(question="q", calls=[
        {"name": "function_1", "arguments": {"a": 1, "b": 2}}])], metric=lambda e, t: 3 in t.outputs)
    assert plain.rollout(plain.oracle_agent(plain.tasks()), plain.toolbox(), plain.tasks()[0]).metrics == {"score": 1.0}


def test_an_example_without_an_id_is_a_task_by_its_digest():
    example = _gold_examples()[0]
    assert task_id(example) == task_id(dspy.Example(**example.toDict())) and len(task_id(example)) == 12
    assert task_id(dspy.Example(id="t-1", question="q")) == "t-1"


COUNTER: ContextVar[list[int] | None] = ContextVar("counter", default=None)


def tick(step: int) -> int:
    """Adds step to the task's counter and returns it."""
    counter = COUNTER.get()
    counter[0] += step
    return counter[0]


@contextmanager
def counter_state(task):
    """Each task's counter starts at its ``start``; a call outside any task at 1000."""
    token = COUNTER.set([task.start if task is not None else 1000])
    try:
        yield
    finally:
        COUNTER.reset(token)


def test_stateful_tools_get_a_fresh_state_per_task_and_per_outside_call_even_on_parallel_threads():
    examples = [dspy.Example(id=f"t{n}", question=f"count {n}", start=n * 100, answer=n * 100 + 3,
                             calls=[{"name": "tick", "arguments": {"step": 1}}, {"name": "tick", "arguments": {"step": 2}}])
                for n in range(24)]
    entered = []

    def recorded(task):
        entered.append(task.id if task is not None else None)
        return counter_state(task)

    def metric(example, trajectory):  # scored inside the task's state: the counter as the calls left it
        return example.answer in trajectory.outputs and COUNTER.get()[0] == example.answer

    env = FunctionEnvironment.opaque([tick], examples, metric, state=recorded)
    trajectories = run_rollouts(env, env.oracle_agent(examples), env.toolbox(), examples, num_threads=6, progress=False)
    assert env.summarise(trajectories) == {"score": 1.0, "n": 24.0}
    assert sorted(entered) == sorted(example.id for example in examples)
    assert [env.execute("tools", ToolCall("function_1", {"step": 5})).output for _ in range(2)] == [1005, 1005]
    assert COUNTER.get() is None  # nothing is left behind
