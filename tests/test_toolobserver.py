import json
from functools import partial

import pytest
from recorder import Recorder
from scripted_lm import prompt_text, scripted_lm
from toy_env import ToyEnvironment, docs_aware_agent_reply, truthful_editor_reply

from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.optimizers.toolobserver.knobs import PAPER
from otbench.optimizers.toolobserver.teleprompter import ToolObserver

# the paper's protocol: these tests pin its exact behaviour
PaperTO = partial(ToolObserver, improvements=PAPER)

ADDS = json.dumps({"updates": [{"name": "function_1", "description": "Adds a and b."}]})


def endless_rewriter():
    """An editor that always rewrites the tool that was called, so docs never settle."""
    counter = iter(range(1000))

    def reply(messages):
        name = "function_1" if "Call 1: function_1(" in prompt_text(messages) else "function_2"
        return json.dumps({"updates": [{"name": name, "description": f"Some tool, version {next(counter)}."}]})

    return reply


def _setup(env, editor_reply, *, ledger=None):
    ledger = ledger or TokenLedger()
    agent, editor = FunctionCallingAgent(), DocEditor()
    agent.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(editor_reply, ledger=ledger, phase="editor")
    return ToolAgentProgram(env.toolbox(), agent), editor, ledger


def test_online_converges_when_the_editor_changes_nothing_and_reuses_unchanged_tasks():
    env = ToyEnvironment(3)
    program, editor, ledger = _setup(env, truthful_editor_reply)
    recorder = Recorder()
    program = PaperTO(env=env, editor=editor, tracker=recorder, progress=False).compile(program, trainset=env.tasks())
    # step 0: explores function_2 (multiplies) and fails; step 1: explores function_1, succeeds;
    # step 2: both documented, the editor changes nothing and every task converges.
    assert [r.metrics["E"] for r in recorder.records] == [0.0, 1.0, 1.0]
    assert [r.metrics["docs_changed"] for r in recorder.records] == [3.0, 3.0, 0.0]
    assert recorder.records[-1].metrics["converged"] == 3.0
    assert ledger.phase("agent").calls == 9 and ledger.phase("editor").calls == 9
    assert program.toolbox.get("t0", "function_1").description == "Adds a and b."
    assert program.toolbox.get("t0", "function_2").description == "Multiplies a and b."


def test_online_stops_at_max_iterations_when_the_editor_keeps_rewriting():
    env = ToyEnvironment(2)
    program, editor, ledger = _setup(env, endless_rewriter())
    recorder = Recorder()
    optimizer = PaperTO(env=env, editor=editor, max_iterations=3, tracker=recorder, progress=False)
    program = optimizer.compile(program, trainset=env.tasks())
    assert [r.step for r in recorder.records] == [0, 1, 2, 3]
    assert ledger.phase("agent").calls == 2 * 4 and ledger.phase("editor").calls == 2 * 3
    assert optimizer.editor_rounds == {"t0": 3, "t1": 3}


def test_a_task_the_editor_leaves_alone_is_not_run_again():
    env = ToyEnvironment(2)
    program, editor, _ledger = _setup(
        env, lambda m: truthful_editor_reply(m) if "add 2 and 3" in prompt_text(m) else '{"updates": []}')
    recorder = Recorder()
    program = PaperTO(env=env, editor=editor, tracker=recorder, progress=False).compile(program, trainset=env.tasks())
    assert [r.metrics["tasks_run"] for r in recorder.records] == [2.0, 1.0, 1.0]
    assert [r.metrics["E"] for r in recorder.records] == [0.0, 0.5, 0.5]


def test_oracle_feedback_shows_the_outcome_to_the_editor_only_when_asked():
    for oracle, expected in ((False, False), (True, True)):
        env = ToyEnvironment(1)
        program, editor, _ = _setup(env, lambda m: '{"updates": []}')
        program = PaperTO(env=env, editor=editor, oracle_feedback=oracle, progress=False).compile(program, trainset=env.tasks())
        seen = prompt_text(editor.lm.history[-1]["messages"])
        assert ("Outcome:" in seen) is expected


def test_an_interrupted_run_resumes_from_its_last_checkpoint_with_the_same_result():
    env = ToyEnvironment(2)
    rewrite = endless_rewriter()
    program, editor, _ledger = _setup(env, rewrite)
    interrupted = Recorder(stop_after=1)
    with pytest.raises(KeyboardInterrupt):
        program = PaperTO(env=env, editor=editor, max_iterations=3, tracker=interrupted, progress=False).compile(
            program, trainset=env.tasks())
    checkpoint = interrupted.records[-1].checkpoint
    assert checkpoint["next_step"] == 2

    fresh_program, fresh_editor, fresh_ledger = _setup(env, rewrite)
    fresh_program.toolbox.adopt_docs(type(fresh_program.toolbox).from_json(checkpoint["docs"]))
    resumed = Recorder()
    fresh_program = PaperTO(env=env, editor=fresh_editor, max_iterations=3, tracker=resumed, progress=False).compile(
        fresh_program, trainset=env.tasks(), resume=checkpoint)
    assert [r.step for r in resumed.records] == [2, 3]
    assert fresh_ledger.phase("agent").calls == 4  # steps 2 and 3 only: nothing finished is paid twice
    assert fresh_program.toolbox.get("t0", "function_2").description.startswith("Some tool, version")


def test_offline_batches_trajectories_merges_by_consensus_and_iterates_k_times():
    env = ToyEnvironment(25, shared=True)
    jobs = []

    def editor_reply(messages):
        content = prompt_text(messages)
        jobs.append("merge" if "Candidate descriptions" in content else "batch")
        return ADDS

    program, editor, ledger = _setup(env, editor_reply)
    recorder = Recorder()
    program = PaperTO(env=env, editor=editor, mode="offline", max_iterations=2, batch_size=10, tracker=recorder, gate=False,
                 progress=False).compile(program, trainset=env.tasks())
    assert jobs == ["batch"] * 3 + ["merge"] + ["batch"] * 3 + ["merge"]
    assert [r.metrics["E"] for r in recorder.records] == [0.0, 1.0]
    assert ledger.phase("agent").calls == 50
    assert program.toolbox.get("shared", "function_1").description == "Adds a and b."
    batch_prompt = next(e.prompt for e in recorder.records[0].exchanges if e.job == "batch")
    assert "Outcome: failure" in batch_prompt and "Feedback: expected 5" in batch_prompt


def test_offline_with_a_single_batch_skips_the_merge_call():
    env = ToyEnvironment(5, shared=True)
    program, editor, ledger = _setup(env, lambda m: ADDS)
    program = PaperTO(env=env, editor=editor, mode="offline", max_iterations=1, progress=False).compile(
        program, trainset=env.tasks())
    assert ledger.phase("editor").calls == 1


def test_the_editor_must_document_a_called_tool_that_has_no_description():
    env = ToyEnvironment(1)
    program, editor, _ = _setup(env, truthful_editor_reply)
    program = PaperTO(env=env, editor=editor, max_iterations=1, progress=False).compile(program, trainset=env.tasks())
    documented, editor2, _ = _setup(env, truthful_editor_reply)
    for name, text in (("function_1", "Adds a and b."), ("function_2", "Multiplies a and b.")):
        documented.toolbox.get("t0", name).with_docs(description=text)
    documented = PaperTO(env=env, editor=editor2, max_iterations=1, progress=False).compile(documented, trainset=env.tasks())

    def least_updates(lm):
        return [c["kwargs"]["response_format"]["json_schema"]["schema"]["properties"]["updates"]["minItems"]
                for c in lm.history]

    assert least_updates(editor.lm) == [1]  # the called tool had no description: one update is required
    assert least_updates(editor2.lm) == [0]
