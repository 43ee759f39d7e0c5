"""An attempt that only repeats a refused call is made again without the tool it called (``vary_repeats``): a small
agent at temperature 0 makes the same choice whatever its doc now says, and a repeat teaches nothing."""

import json
from dataclasses import replace

import dspy
from scripted_lm import scripted_lm, shown_tool_names

from otbench import FunctionEnvironment
from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec
from otbench.optimizers.toolobserver.knobs import IMPROVED
from otbench.optimizers.toolobserver.teleprompter import ToolObserver, _well_formed
from otbench.optimizers.toolobserver.varied import FailedCalls

QUESTION = "Which city has the zip code 90210?"


def _attempt(*steps: tuple[str, dict, bool]) -> Trajectory:
    return Trajectory(task_id="t", toolset="t", question=QUESTION,
                      steps=[CallResult(ToolCall(name, arguments), ok=ok, output=1 if ok else None,
                                        error=None if ok else "ValueError: no")
                             for name, arguments, ok in steps])


def test_a_repeat_is_every_call_failed_before_on_the_task_and_leaves_out_the_tools_that_only_failed():
    tried = FailedCalls()
    tried.note(_attempt(("ip_city", {"ip": "90210"}, False)))
    tried.note(_attempt(("zip_city", {"zipcode": "90210"}, True), ("geo", {"place": "x"}, True)), off_request={1})
    assert tried.left_out(_attempt(("ip_city", {"ip": "90210"}, False))) == {"ip_city", "geo"}
    assert tried.left_out(_attempt(("geo", {"place": "x"}, True))) == {"ip_city", "geo"}  # off the request before
    assert tried.left_out(_attempt(("ip_city", {"ip": "90211"}, False))) == set()  # another value: news
    assert tried.left_out(_attempt(("zip_city", {"zipcode": "90210"}, True))) == set()  # it worked and fit
    assert tried.left_out(_attempt()) == set()  # no call: nothing repeated
    assert FailedCalls().left_out(_attempt(("ip_city", {"ip": "90210"}, False))) == set()  # a first attempt
    assert FailedCalls.from_dict(json.loads(json.dumps(tried.to_dict()))) == tried  # a checkpoint keeps it


def ip_city(ip: str) -> str:
    if ip.count(".") != 3:
        raise ValueError(f"'ip' must be an IPv4 address, got {ip!r}")
    return "Mountain View"


def zip_city(zipcode: str) -> str:
    return "Beverly Hills" if zipcode == "90210" else "unknown"


def habit_agent(messages) -> str:
    """A small agent's habit: ``ip_city`` with the request's number, whenever it is shown."""
    if "ip_city" in shown_tool_names(messages):
        return json.dumps({"calls": [{"name": "ip_city", "arguments": {"ip": "90210"}}]})
    return json.dumps({"calls": [{"name": "zip_city", "arguments": {"zipcode": "90210"}}]})


def _learn(tools: list, habit, improvements, question: str = QUESTION,
           answer: object = "Beverly Hills") -> tuple[Trajectory, int]:
    """The final attempt after learning online from one request, and how many times the agent was asked."""
    asked = []

    def counted(messages) -> str:
        asked.append(1)
        return habit(messages)

    examples = [dspy.Example(question=question, answer=answer)]
    env = FunctionEnvironment(tools, examples, lambda example, trajectory: example.answer in trajectory.outputs)
    agent, editor = FunctionCallingAgent(), DocEditor()
    agent.lm = scripted_lm(counted)
    editor.lm = scripted_lm(lambda m: json.dumps({"description": ""}), phase="editor")
    optimizer = ToolObserver(env=env, editor=editor, mode="online", progress=False, max_iterations=3,
                             improvements=improvements)
    learned = optimizer.compile(ToolAgentProgram(env.toolbox(), agent), trainset=examples)
    return learned.detailed_results.final_trajectories[0], len(asked)


def test_online_a_repeated_refusal_is_made_again_without_its_tool():
    final, _ = _learn([ip_city, zip_city], habit_agent, IMPROVED)
    assert [step.call.name for step in final.steps] == ["zip_city"] and final.success
    ablated, _ = _learn([ip_city, zip_city], habit_agent, replace(IMPROVED, vary_repeats=False,
                                                                  set_aside_misfits=False))
    assert [step.call.name for step in ablated.steps] == ["ip_city"] and not ablated.success
    alone, _ = _learn([ip_city], habit_agent, IMPROVED)  # no other tool to turn to: the attempt stands
    assert [step.call.name for step in alone.steps] == ["ip_city"]


def test_a_tool_is_set_aside_on_a_task_when_its_latest_calls_there_were_made_to_the_wrong_tool():
    tried = FailedCalls()
    tried.note(_attempt(("ip_city", {"ip": "90210"}, False), ("geo", {"place": "x"}, False)), misfits={0})
    assert tried.set_aside("t") == {"ip_city"}  # geo's refusal fit the request: its call was wrong, not the tool
    tried.note(_attempt(("geo", {"place": "90210"}, False)), misfits={0})
    assert tried.set_aside("t") == {"ip_city", "geo"}  # the latest call of each was made to the wrong tool
    tried.note(_attempt(("ip_city", {"ip": "8.8.8.8"}, False), ("ip_city", {"ip": "1.1.1.1"}, False)), misfits={1})
    assert tried.set_aside("t") == {"geo"}  # one of its latest calls fit: the tool may be the right one
    tried.note(_attempt(("geo", {"place": "x"}, True)), off_request={0}, misfits={0})
    assert tried.set_aside("t") == {"geo"}  # working, and still not for the request
    tried.note(_attempt(("geo", {"place": "Beverly Hills"}, True)))
    assert tried.set_aside("t") == set()  # it answered the task: never set aside
    assert tried.set_aside("another task") == set()
    assert FailedCalls.from_dict(json.loads(json.dumps(tried.to_dict()))) == tried  # a checkpoint keeps it


def weather(city: str) -> str:
    if city not in {"Paris", "Lyon"}:
        raise ValueError(f"unknown city {city!r}")
    return "sunny"


def population(country: str) -> int:
    return 68_000_000 if country == "France" else 0


def test_online_a_tool_called_for_the_wrong_request_is_left_out_of_the_next_attempt_instead_of_after_a_repeat():
    """The agent's habit is ``weather`` for a request naming ``population``'s parameter: with ``set_aside_misfits`` the
    second attempt is already made without it; with only ``vary_repeats`` the repeat is paid for first."""
    def habit(messages) -> str:
        name, arguments = (("weather", {"city": "France"}) if "weather" in shown_tool_names(messages)
                           else ("population", {"country": "France"}))
        return json.dumps({"calls": [{"name": name, "arguments": arguments}]})

    question, tools = "How many people live in the country France?", [weather, population]
    final, calls = _learn(tools, habit, IMPROVED, question, 68_000_000)
    assert [step.call.name for step in final.steps] == ["population"] and final.success
    ablated, ablated_calls = _learn(tools, habit, replace(IMPROVED, set_aside_misfits=False), question, 68_000_000)
    assert [step.call.name for step in ablated.steps] == ["population"] and ablated.success  # vary_repeats got there
    assert (calls, ablated_calls) == (2, 3)


def test_only_a_call_naming_parameters_its_tool_takes_can_show_the_tool_was_the_wrong_one():
    tools = {"weather": DocumentedTool("weather", parameters=[ParameterSpec("city")]),
             "population": DocumentedTool("population")}  # no schema known yet
    def step(name: str, **arguments: object) -> CallResult:
        return CallResult(ToolCall(name, arguments), ok=False, error="ValueError: no")
    assert _well_formed(step("weather", city="France"), tools)
    assert not _well_formed(step("weather", place="France"), tools)  # a guess at its parameters: maybe called wrong
    assert not _well_formed(step("population", country="France"), tools)  # nothing known to check the call against
    assert not _well_formed(step("elevation", place="France"), tools)
