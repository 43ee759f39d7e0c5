"""The gate: a learned doc replaces its tool's starting doc only where the evidence says it is no worse; every
decision is kept with its evidence, and ``serve-docs`` serves only docs that carry them."""

from __future__ import annotations

import json

import dspy
import pytest
from scripted_lm import prompt_text, scripted_lm

from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory
from otbench.envs.functions import FunctionEnvironment
from otbench.exits import run_main
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import DocumentedTool, Toolbox
from otbench.optimizers import registry
from otbench.optimizers.gate import META_KEY, MIN_CALLS, beyond_one_call, decide, gated
from otbench.optimizers.toolobserver.teleprompter import ToolObserver
from otbench.serve_docs import gate_report


def _attempt(toolset, *steps):
    return Trajectory(task_id="t", toolset=toolset, question="q",
                      steps=[CallResult(ToolCall(name, {}), ok, output=output, error=None if ok else "failed")
                             for name, ok, output in steps])


def _boxes():
    start = Toolbox({"s": [DocumentedTool("f", description="Adds two numbers."), DocumentedTool("g", description="G."),
                           DocumentedTool("h", description="H.")]})
    learned = start.deepcopy()
    for name in ("f", "g", "h"):
        learned.get("s", name).with_docs(description=f"Learned {name}.")
    return start, learned


def test_a_tool_called_with_both_docs_is_decided_by_its_calls_the_others_by_the_toolset():
    start, learned = _boxes()
    before = [_attempt("s", ("f", True, 1), ("g", True, 2)), _attempt("s", ("f", True, 1), ("g", True, 2)),
              _attempt("s", ("f", True, 1), ("g", True, 2))]
    after = [_attempt("s", ("f", True, "Error: no such thing"), ("g", False, None)),
             _attempt("s", ("f", True, "Error: no such thing")),
             _attempt("s", ("f", True, 1), ("g", False, None)), _attempt("s", ("g", False, None))]
    decisions = decide(start, learned, ["s"], before, after, lambda trajectories: (0.5,))
    assert decisions["s::f"].kept == "start" and decisions["s::f"].by == "calls"  # 1 of 3 worked (errors in words)
    assert "1 of 3 times with the learned doc, 3 of 3 with the starting one" in decisions["s::f"].evidence
    assert decisions["s::g"].kept == "start"  # 0 of 3 against 3 of 3
    assert decisions["s::h"].kept == "learned" and decisions["s::h"].by == "toolset"  # not called: the tie keeps it
    docs = gated(start, learned, decisions)
    assert docs.get("s", "f").description == "Adds two numbers." and docs.get("s", "h").description == "Learned h."
    assert docs.meta[META_KEY]["s::h"]["kept"] == "learned"


def test_too_few_calls_do_not_decide_a_tool_its_toolset_does():
    start, learned = _boxes()
    before = [_attempt("s", ("f", True, 1))]
    after = [_attempt("s", ("f", True, 1)), _attempt("s", ("f", False, None))]  # 1 of 2 against 1 of 1: no evidence
    decisions = decide(start, learned, ["s"], before, after, lambda trajectories: (0.5,))
    assert decisions["s::f"].by == "toolset" and decisions["s::f"].kept == "learned"
    assert MIN_CALLS == 3


def test_one_call_more_that_failed_is_no_evidence_the_toolset_decides():
    """5 of 6 against 6 of 7: one failure, which one call flips; the toolset's score decides (here the learned docs
    score higher, as they did where the learned doc had dropped a misleading sentence of the starting one)."""
    start, learned = _boxes()
    before = [_attempt("s", ("f", True, 1))] * 6 + [_attempt("s", ("f", False, None))]
    after = [_attempt("s", ("f", True, 1))] * 5 + [_attempt("s", ("f", False, None))]
    scores = iter([(0.7,), (0.8,)])  # the starting docs' tasks, then the learned docs'
    decisions = decide(start, learned, ["s"], before, after, lambda trajectories: next(scores))
    assert decisions["s::f"].by == "toolset" and decisions["s::f"].kept == "learned"
    assert not beyond_one_call((6, 7), (5, 6)) and beyond_one_call((3, 3), (1, 3)) and not beyond_one_call((3, 3), (2, 3))


def test_by_the_toolset_learned_docs_that_score_lower_are_given_back():
    start, learned = _boxes()
    scores = iter([(0.8, 0.5), (0.6, 0.9)])
    decisions = decide(start, learned, ["s"], [], [], lambda trajectories: next(scores))
    assert {decision.kept for decision in decisions.values()} == {"start"}
    assert "0.600 / 0.900 with the learned docs, 0.800 / 0.500 with the starting ones" in decisions["s::f"].evidence


# -- end to end: a repair that made the agent worse is not kept -------------------------------------------------------
def area(width, height):
    """Area of a rectangle: width times height."""
    return width * height


def _env():
    examples = [dspy.Example(question=f"Area of a {w} by {h} rectangle?", answer=w * h) for w, h in
                [(2, 3), (4, 5), (6, 7), (3, 3), (2, 9), (5, 8), (7, 4), (9, 6)]]
    return FunctionEnvironment([area], examples, lambda example, t: example.answer in t.outputs)


def _agent_that_reads(docs_text_wins):
    """Calls the tool right while its doc speaks of a rectangle, wrong once the doc no longer does."""

    def reply(messages):
        text = prompt_text(messages)
        w, h = [int(n) for n in text.split("Request:")[-1].split("?")[0].split() if n.isdigit()]
        if docs_text_wins in text:
            return json.dumps({"calls": [{"name": "area", "arguments": {"width": w, "height": h}}]})
        return json.dumps({"calls": [{"name": "area", "arguments": {"width": str(w), "height": None}}]})

    return reply


def _compile(env, gate, editor_text):
    agent = FunctionCallingAgent()
    agent.lm = scripted_lm(_agent_that_reads("width times height"), phase="agent")
    program = ToolAgentProgram(env.toolbox(), agent)
    program.agent.lm = agent.lm
    editor = scripted_lm(lambda m: json.dumps({"description": editor_text,
                                                "updates": [{"name": "area", "description": editor_text}]}),
                         phase="editor")
    observer = ToolObserver(env=env, editor_lm=editor, max_iterations=1, gate=gate, progress=False)
    observer.improvements = observer.improvements.__class__(**{**vars(observer.improvements), "settle": False})
    return observer.compile(program, trainset=env.tasks("train")[:2])


def test_a_learned_doc_that_makes_the_agent_worse_gives_the_tool_its_starting_doc_back():
    env = _env()
    worse = "Multiplies two sides."  # no longer says what the sides are: the agent then calls it wrong
    ungated = _compile(env, False, worse)
    assert ungated.toolbox.get("tools", "area").description.startswith(worse)
    kept = _compile(env, True, worse)
    assert kept.toolbox.get("tools", "area").description == "Area of a rectangle: width times height."
    decision = kept.detailed_results.gate["tools::area"]
    assert decision["kept"] == "start" and decision["by"] == "calls"
    assert kept.toolbox.meta[META_KEY]["tools::area"]["kept"] == "start"
    better = _compile(env, True, "Area of a rectangle, width times height, in square units.")
    assert better.detailed_results.gate["tools::area"]["kept"] == "learned"


def test_the_gate_is_a_shared_switch_on_by_default_offline_and_off_by_name():
    for name in ("toolobserver", "easytool", "play2prompt", "gepa"):
        spec = registry.spec_of(name)
        assert "gate" not in spec.define(spec.knobs_from({}), "offline")  # runs defined before it keep their key
        assert spec.define(spec.knobs_from({"gate": False}), "offline")["gate"] is False
        assert "gate" not in spec.define(spec.knobs_from({"gate": False}), "online")  # it does not act online
        assert "--no-gate" in spec.row_label(spec.define(spec.knobs_from({"gate": False}), "offline"), "offline")


# -- serve-docs ---------------------------------------------------------------------------------------------------------
def test_serve_docs_says_what_the_gate_kept_and_refuses_docs_no_gate_checked(tmp_path, capsys):
    start, learned = _boxes()
    docs = gated(start, learned, decide(start, learned, ["s"], [], [], lambda trajectories: (1.0,)))
    lines = gate_report(docs, ungated=False)
    assert lines[0].startswith("f: learned doc (the toolset scored 1.000")
    with pytest.raises(ValueError, match="no gate record"):
        gate_report(learned, ungated=False)
    assert gate_report(learned, ungated=True) == ["serving docs that no gate checked (--ungated)"]
    learned.write(tmp_path / "docs.json")
    from otbench import serve_docs

    with pytest.raises(SystemExit) as stopped:
        run_main(serve_docs.main, ["--mcp", "true", "--docs", str(tmp_path / "docs.json")])
    assert stopped.value.code == 2 and "no gate record" in capsys.readouterr().err


def test_calls_that_work_equally_often_with_both_docs_leave_the_decision_to_the_toolset():
    """A call given a number on the wrong scale works and answers wrong: where the tool's calls worked as often with
    either doc, the tasks' scores decide."""
    start, learned = _boxes()
    both = [_attempt("s", ("f", True, 1))]
    scores = iter([(1.0,), (0.0,)])  # the starting docs' tasks, then the learned docs'
    decisions = decide(start, learned, ["s"], both, both, lambda trajectories: next(scores))
    assert decisions["s::f"].kept == "start" and decisions["s::f"].by == "toolset"
