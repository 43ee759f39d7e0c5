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
from otbench.optimizers.toolobserver.knobs import IMPROVED
from otbench.optimizers.toolobserver.teleprompter import ToolObserver
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


def _learn(vary_repeats: bool, tools: list) -> Trajectory:
    examples = [dspy.Example(question=QUESTION, answer="Beverly Hills")]
    env = FunctionEnvironment(tools, examples, lambda example, trajectory: example.answer in trajectory.outputs)
    agent, editor = FunctionCallingAgent(), DocEditor()
    agent.lm = scripted_lm(habit_agent)
    editor.lm = scripted_lm(lambda m: json.dumps({"description": ""}), phase="editor")
    optimizer = ToolObserver(env=env, editor=editor, mode="online", progress=False, max_iterations=3,
                             improvements=replace(IMPROVED, vary_repeats=vary_repeats))
    learned = optimizer.compile(ToolAgentProgram(env.toolbox(), agent), trainset=examples)
    return learned.detailed_results.final_trajectories[0]


def test_online_a_repeated_refusal_is_made_again_without_its_tool():
    final = _learn(True, [ip_city, zip_city])
    assert [step.call.name for step in final.steps] == ["zip_city"] and final.success
    ablated = _learn(False, [ip_city, zip_city])
    assert [step.call.name for step in ablated.steps] == ["ip_city"] and not ablated.success
    alone = _learn(True, [ip_city])  # no other tool to turn to: the attempt stands
    assert [step.call.name for step in alone.steps] == ["ip_city"]
