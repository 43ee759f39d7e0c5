import json

import pytest
from recorder import Recorder
from scripted_lm import prompt_text, scripted_lm
from toy_env import ToyEnvironment, docs_aware_agent_reply

from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import Toolbox
from otbench.optimizers.easytool import REWRITES_PER_STEP, EasyTool, EasyToolWriter, compose_description


def writer_reply(messages):
    """Condense: guess the purpose from the name; guideline: a scenario and example arguments."""
    content = prompt_text(messages)
    if "Condense" in content:
        adds = '"name": "function_1"' in content
        return json.dumps({"purpose": "Adds a and b." if adds else "Multiplies a and b."})
    return json.dumps({"scenario": "the user needs this result", "example_arguments": {"a": 1, "b": 2}})


def _setup(env):
    ledger = TokenLedger()
    agent, writer = FunctionCallingAgent(), EasyToolWriter()
    agent.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="agent")
    writer.lm = scripted_lm(writer_reply, ledger=ledger, phase="editor")
    return ToolAgentProgram(env.toolbox(), agent), writer, ledger


def test_two_writer_calls_per_tool_then_one_scoring_run_per_task():
    env = ToyEnvironment(3)
    program, writer, ledger = _setup(env)
    recorder = Recorder()
    optimizer = EasyTool(env=env, writer=writer, tracker=recorder, progress=False)
    program = optimizer.compile(program, trainset=env.tasks())
    assert ledger.phase("editor").calls == 3 * 2 * 2  # three toolsets, two tools, two calls each
    assert ledger.phase("agent").calls == 3
    assert ledger.phase("exploration").calls == 0  # EasyTool never runs a tool
    description = program.toolbox.get("t1", "function_1").description
    assert description == 'Adds a and b. Use it when: the user needs this result Example: function_1({"a": 1, "b": 2})'
    assert [r.step for r in recorder.records] == [0]
    assert recorder.records[0].metrics["E"] == 1.0 and recorder.records[0].metrics["docs_changed"] == 6.0
    assert len(optimizer.final_trajectories) == 3
    assert {e.to_dict()["job"] for e in recorder.records[0].exchanges} == {"easytool"}


def test_the_writer_prompt_holds_the_condensed_purpose():
    env = ToyEnvironment(1)
    program, writer, _ = _setup(env)
    program = EasyTool(env=env, writer=writer, progress=False).compile(program, trainset=env.tasks())
    guideline_prompts = [prompt_text(r["messages"]) for r in writer.lm.history if "guideline" in
                         prompt_text(r["messages"])]
    assert any("Core purpose: Adds a and b." in prompt for prompt in guideline_prompts)


def test_a_shared_toolset_is_rewritten_once():
    env = ToyEnvironment(4, shared=True)
    program, writer, ledger = _setup(env)
    program = EasyTool(env=env, writer=writer, progress=False).compile(program, trainset=env.tasks())
    assert ledger.phase("editor").calls == 2 * 2


def test_unusable_replies_leave_the_doc_alone():
    assert compose_description("f", "", {}) == ""
    assert compose_description("f", "Does x.", {"scenario": "  ", "example_arguments": "not a dict"}) == "Does x."
    assert compose_description("f", "Does x.", {"scenario": ["a", "list"]}) == "Does x."  # no Python repr
    env = ToyEnvironment(1)
    program, writer, _ = _setup(env)
    writer.lm = scripted_lm(lambda m: "I cannot answer in JSON.", phase="editor")
    program = EasyTool(env=env, writer=writer, progress=False).compile(program, trainset=env.tasks())
    assert program.toolbox.get("t0", "function_1").description == ""


def test_a_resumed_run_whose_step_finished_does_nothing():
    env = ToyEnvironment(2)
    program, writer, ledger = _setup(env)
    program = EasyTool(env=env, writer=writer, progress=False).compile(program, trainset=env.tasks(), resume={"next_step": 1})
    assert ledger.phase("editor").calls == 0 and ledger.phase("agent").calls == 0


def test_a_purpose_that_is_no_text_is_left_out_not_printed_as_python():
    env = ToyEnvironment(1)
    program, writer, _ = _setup(env)
    writer.lm = scripted_lm(lambda m: json.dumps({"purpose": {"nested": 1}} if "Condense" in prompt_text(m)
                                                 else {"scenario": 42}), phase="editor")
    program = EasyTool(env=env, writer=writer, progress=False).compile(program, trainset=env.tasks())
    assert program.toolbox.get("t0", "function_1").description == ""


def test_a_rewrite_stopped_half_way_goes_on_after_the_tools_it_had_rewritten():
    """A pool's rewrite takes hours: each step of REWRITES_PER_STEP tools is a checkpoint, and a run resumed from it
    (on a machine with no LM cache) pays no call for the tools before it and ends with the same docs."""
    env = ToyEnvironment(15)  # 30 tools: a full step, then the rest with the scoring
    whole, writer, _ = _setup(env)
    whole = EasyTool(env=env, writer=writer, progress=False).compile(whole, trainset=env.tasks())

    program, writer, _ = _setup(env)
    stopped = Recorder(stop_after=0)
    with pytest.raises(KeyboardInterrupt):
        EasyTool(env=env, writer=writer, tracker=stopped, progress=False).compile(program, trainset=env.tasks())
    checkpoint = stopped.records[-1].checkpoint
    assert len(checkpoint["rewritten"]) == REWRITES_PER_STEP and "E" not in stopped.records[-1].metrics

    resumed, writer, ledger = _setup(env)
    resumed.toolbox.adopt_docs(Toolbox.from_json(checkpoint["docs"]))
    recorder = Recorder()
    resumed = EasyTool(env=env, writer=writer, tracker=recorder, progress=False).compile(
        resumed, trainset=env.tasks(), resume=checkpoint)
    assert ledger.phase("editor").calls == 2 * (30 - REWRITES_PER_STEP)
    assert [r.step for r in recorder.records] == [1] and recorder.records[0].metrics["tools_rewritten"] == 30
    assert resumed.toolbox.to_json() == whole.toolbox.to_json()
