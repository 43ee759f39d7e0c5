"""Your own tools, tasks and metric: FunctionEnvironment with every optimizer, the harness and DSPy's ReAct."""

import json
import re
from pathlib import Path

import dspy
import pytest
from scripted_lm import prompt_text, scripted_lm
from toy_env import docs_aware_agent_reply

from evals.harness import run_rollouts
from optimizers.easytool import EasyTool
from optimizers.gepa import GEPA
from optimizers.play2prompt import Play2Prompt
from optimizers.toolobserver import ToolObserver
from otbench import FunctionEnvironment
from otbench.calls import ToolCall

README = Path(__file__).resolve().parents[1] / "README.md"
TRUTH = {"function_1": "Adds a and b.", "function_2": "Multiplies a and b."}


def function_1(a: int, b: int) -> int:
    return a + b


def function_2(a: int, b: int) -> int:
    return a * b


def _examples(pairs=((2, 3), (4, 5), (6, 7), (8, 9))):
    return [dspy.Example(question=f"add {a} and {b}", answer=a + b) for a, b in pairs]


def _env(**options):
    return FunctionEnvironment([function_1, function_2], _examples(),
                               metric=lambda example, trajectory: example.answer in trajectory.outputs, **options)


def react_reply(messages):
    """Scripted ``dspy.ReAct``: call the tool whose description says it adds, then finish, then answer."""
    text = prompt_text(messages)
    if "starting with the field `[[ ## next_thought ## ]]`" in text:
        if "[[ ## observation_0 ## ]]" in text:
            return "[[ ## next_thought ## ]]\ndone\n\n[[ ## next_tool_name ## ]]\nfinish\n\n" \
                   "[[ ## next_tool_args ## ]]\n{}\n\n[[ ## completed ## ]]"
        adder = re.search(r"\((\d)\) (\w+), whose description is <desc>Adds", text)
        a, b = re.findall(r"\d+", text.split("[[ ## question ## ]]")[-1])[:2]
        return (f"[[ ## next_thought ## ]]\nadd\n\n[[ ## next_tool_name ## ]]\n{adder.group(2) if adder else 'finish'}"
                f"\n\n[[ ## next_tool_args ## ]]\n{json.dumps({'a': int(a), 'b': int(b)})}\n\n[[ ## completed ## ]]")
    observation = text.split("[[ ## observation_0 ## ]]")[-1].split("[[")[0].strip()
    return f"[[ ## reasoning ## ]]\nthe tool said so\n\n[[ ## answer ## ]]\n{observation}\n\n[[ ## completed ## ]]"


def everyone(messages):
    """One scripted LM for every role: the agent, a truthful editor (one tool per call, or a toolset's
    updates), and ReAct."""
    text = prompt_text(messages)
    if "[[ ## " in text:
        return react_reply(messages)
    if "Request:" in text and "Tools:" in text:
        return docs_aware_agent_reply(messages)
    tool = re.search(r"^Tool: (\w+)", text, re.MULTILINE)
    if tool:
        return json.dumps({"description": TRUTH[tool.group(1)]})
    reflected = re.search(r"^## Tool\n(\w+)", text, re.MULTILINE)  # GEPA's reflection on one tool
    if reflected:
        return f"```\n{TRUTH[reflected.group(1)]}\n```"
    return json.dumps({"updates": [{"name": name, "description": doc} for name, doc in TRUTH.items()]})


def _readme_loop() -> str:
    section = README.read_text().split("## Your tools, your tasks, your metric", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_loop_runs_as_printed(capsys):
    code = _readme_loop()
    assert len([line for line in code.splitlines() if line.strip()]) <= 12
    with dspy.context(lm=scripted_lm(everyone)):
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})  # noqa: S102 - the README as printed
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
