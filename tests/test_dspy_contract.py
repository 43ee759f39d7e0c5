"""The optimizers keep DSPy's teleprompter contract: a new program back, the student untouched, results on
the returned program, a valset honoured, LMs given to the constructor or taken from dspy's settings; and DSPy's
own optimizers see the tools' docs as predictors' instructions."""

import copy
import dataclasses
import json

import dspy
import pytest
from recorder import Recorder
from scripted_lm import prompt_text, scripted_lm
from toy_env import ToyEnvironment, docs_aware_agent_reply, truthful_editor_reply

from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.program import ToolAgentProgram
from otbench.optimizers.easytool import EasyTool, EasyToolWriter
from otbench.optimizers.play2prompt import Play2Prompt
from otbench.optimizers.toolobserver.knobs import PAPER
from otbench.optimizers.toolobserver.teleprompter import ToolObserver

ADDS = json.dumps({"updates": [{"name": "function_1", "description": "Adds a and b."}]})


def _program(env, ledger=None):
    agent = FunctionCallingAgent()
    agent.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="agent")
    return ToolAgentProgram(env.toolbox(), agent)


def test_compile_returns_a_new_program_and_leaves_the_student_untouched():
    env = ToyEnvironment(3)
    student = _program(env)
    before = student.toolbox.to_json()
    editor_lm = scripted_lm(truthful_editor_reply, phase="editor")
    learned = ToolObserver(env=env, editor_lm=editor_lm, improvements=PAPER, progress=False).compile(
        student, trainset=env.tasks())
    assert learned is not student and student.toolbox.to_json() == before
    assert learned.toolbox.get("t0", "function_1").description == "Adds a and b."


def test_the_results_are_a_frozen_record_on_the_returned_program():
    env = ToyEnvironment(3)
    ledger = TokenLedger()
    recorder = Recorder()
    editor_lm = scripted_lm(truthful_editor_reply, ledger=ledger, phase="editor")
    optimizer = ToolObserver(env=env, editor_lm=editor_lm, improvements=PAPER, tracker=recorder, progress=False)
    results = optimizer.compile(_program(env, ledger), trainset=env.tasks()).detailed_results
    assert [r.metrics["E"] for r in results.iterations] == [r.metrics["E"] for r in recorder.records] == [0.0, 1.0, 1.0]
    assert results.iterations[0].docs == recorder.records[0].toolbox.to_json()
    assert [t.metrics["E"] for t in results.final_trajectories] == [1.0, 1.0, 1.0]
    assert results.editor_rounds == {"t0": 3, "t1": 3, "t2": 3}
    for role in ("agent", "editor"):
        assert results.tokens[role].calls == ledger.phase(role).calls
        assert results.tokens[role].total_tokens == ledger.phase(role).prompt_tokens + ledger.phase(role).completion_tokens
    assert results.val_metrics is None and results.chosen_docs == "final"
    with pytest.raises(dataclasses.FrozenInstanceError):
        results.chosen_docs = "step 0"


def test_a_valset_scores_every_iterations_docs_and_the_best_are_returned():
    env = ToyEnvironment(6, shared=True)
    tasks = env.tasks()
    rewrites = iter([ADDS, json.dumps({"updates": [{"name": "function_1", "description": "Multiplies."}]})])
    editor_lm = scripted_lm(lambda messages: next(rewrites), phase="editor")
    learned = ToolObserver(env=env, editor_lm=editor_lm, improvements=PAPER, max_iterations=2, progress=False).compile(
        _program(env), trainset=tasks[:4], valset=tasks[4:])
    results = learned.detailed_results
    # iteration 1 learns the right doc, iteration 2 spoils it: the valset keeps iteration 2's starting docs
    assert results.chosen_docs == "step 1" and results.val_metrics == {"E": 1.0, "n": 2.0}
    assert learned.toolbox.get("shared", "function_1").description == "Adds a and b."
    assert len(results.val_trajectories) == 2


class _FloorEnvironment(ToyEnvironment):
    """Every attempt fails, as a small agent's often do; a finer metric still tells the docs apart."""

    metric_names = ("E", "graded")
    tie_break_metric = "graded"

    def rollout(self, agent, toolbox, task):
        trajectory = super().rollout(agent, toolbox, task)
        graded = float(any(step.call.name == "function_2" for step in trajectory.steps))
        return dataclasses.replace(trajectory, metrics={"E": 0.0, "graded": graded}, success=False)

    def summarise(self, trajectories):
        n = len(trajectories)
        return {"E": 0.0, "graded": sum(t.metrics["graded"] for t in trajectories) / n, "n": float(n)}


def test_where_the_primary_metric_ties_the_environments_tie_break_metric_chooses():
    env = _FloorEnvironment(6, shared=True)
    tasks = env.tasks()

    def compiled(environment):
        editor_lm = scripted_lm(truthful_editor_reply, phase="editor")
        return ToolObserver(env=environment, editor_lm=editor_lm, improvements=PAPER, max_iterations=1,
                            progress=False).compile(_program(environment), trainset=tasks[:4], valset=tasks[4:])

    # the starting docs send the agent to function_2 (graded 1); once it is documented, to function_1 (graded 0)
    assert compiled(env).detailed_results.chosen_docs == "start"
    untied = _FloorEnvironment(6, shared=True)
    untied.tie_break_metric = None  # the primary metric alone: the latest docs win the tie
    assert compiled(untied).detailed_results.chosen_docs == "final"


def test_the_starting_docs_are_kept_when_every_rewrite_is_worse_on_the_valset():
    env = ToyEnvironment(6, shared=True)
    tasks = env.tasks()
    program = _program(env)
    program.toolbox.get("shared", "function_1").with_docs(description="Adds a and b.")
    writer = EasyToolWriter()
    writer.lm = scripted_lm(lambda messages: json.dumps(
        {"purpose": "Adds a and b." if '"name": "function_2"' in prompt_text(messages) else "Divides."}
        if "Condense" in prompt_text(messages) else {"scenario": "any", "example_arguments": {"a": 1, "b": 2}}))
    learned = EasyTool(env=env, writer=writer, progress=False).compile(program, trainset=tasks[:4], valset=tasks[4:])
    assert learned.detailed_results.chosen_docs == "start" and learned.detailed_results.val_metrics["E"] == 1.0
    assert {label: scores["E"] for label, scores in learned.detailed_results.val_candidates.items()} == {
        "final": 0.0, "start": 1.0}  # EasyTool's one step holds its rewritten docs: the final ones
    assert learned.toolbox.get("shared", "function_1").description == "Adds a and b."


def test_a_valset_is_refused_where_docs_are_learned_per_task():
    env = ToyEnvironment(3)
    with pytest.raises(ValueError, match="per task"):
        ToolObserver(env=env, editor_lm=scripted_lm(lambda m: ADDS), progress=False).compile(
            _program(env), trainset=env.tasks()[:2], valset=env.tasks()[2:])


def test_lms_fall_back_to_dspy_settings_scoped_with_dspy_context_even_on_worker_threads():
    env = ToyEnvironment(4, shared=True)
    seen = []

    def reply(messages):
        text = prompt_text(messages)
        if "Request:" in text and "Tools:" in text:
            return docs_aware_agent_reply(messages)
        seen.append("editor")
        return ADDS if "Tool: function_1" not in text else json.dumps({"description": "Adds a and b."})

    agent = FunctionCallingAgent()  # no LM of its own either
    program = ToolAgentProgram(env.toolbox(), agent)
    with dspy.context(lm=scripted_lm(reply)):
        learned = ToolObserver(env=env, improvements=PAPER, max_iterations=1, num_threads=2, progress=False).compile(
            program, trainset=env.tasks())
    assert seen and learned.toolbox.get("shared", "function_1").description == "Adds a and b."
    assert set(learned.detailed_results.tokens) == {"agent+editor"}


@pytest.mark.parametrize("build", [
    lambda env, lm: EasyTool(env=env, editor_lm=lm, progress=False),
    lambda env, lm: Play2Prompt(env=env, explorer_lm=lm, editor_lm=lm, initial_samples=1, progress=False),
])
def test_every_optimizer_takes_its_lms_in_the_constructor_and_returns_a_new_program(build):
    env = ToyEnvironment(2, shared=True)

    def reply(messages):
        text = prompt_text(messages)
        if '"purpose"' in text:
            return json.dumps({"purpose": "Adds a and b."})
        if '"scenario"' in text:
            return json.dumps({"scenario": "to add", "example_arguments": {"a": 1, "b": 2}})
        if '"arguments"' in text:
            return json.dumps({"arguments": {"a": 1, "b": 2}})
        if '"query"' in text:
            return json.dumps({"query": "add 1 and 2"})
        return json.dumps({"description": "Adds a and b."})

    student = _program(env)
    before = student.toolbox.to_json()
    learned = build(env, scripted_lm(reply, phase="editor")).compile(student, trainset=env.tasks())
    assert student.toolbox.to_json() == before and learned.toolbox.to_json() != before
    tokens = learned.detailed_results.tokens  # one LM in two roles is counted once, under both
    assert learned.detailed_results.iterations and next(c for r, c in tokens.items() if "editor" in r).calls > 0


def test_programs_with_documented_tools_survive_deepcopy_and_reset_copy():
    env = ToyEnvironment(1)
    program = _program(env)
    program.toolbox.get("t0", "function_1").with_docs(description="Adds a and b.")
    for twin in (copy.deepcopy(program), program.deepcopy(), program.reset_copy()):
        assert twin.toolbox.to_json() == program.toolbox.to_json()
        assert twin.agent.lm is program.agent.lm  # one metered client: calls of a copy are charged alike
        twin.toolbox.get("t0", "function_1").with_docs(description="Changed.")
        assert program.toolbox.get("t0", "function_1").description == "Adds a and b."


def _proposed(messages):
    """COPRO's prompt model: a true description for the blank tool, a rewording of a documented one."""
    basic = prompt_text(messages).split("[[ ## basic_instruction ## ]]")[-1]
    doc = "Multiplies two numbers." if "Multiplies" in basic else "Adds a and b."
    return f"[[ ## proposed_instruction ## ]]\n{doc}\n\n[[ ## proposed_prefix_for_output_field ## ]]\nResult:\n\n" \
           "[[ ## completed ## ]]"


def test_a_stock_dspy_instruction_optimizer_rewrites_a_tools_description_and_the_agent_reads_it(tmp_path):
    env = ToyEnvironment(4, shared=True)
    prompts = []

    def agent_reply(messages):
        prompts.append(prompt_text(messages))
        return docs_aware_agent_reply(messages)

    agent = FunctionCallingAgent()
    agent.lm = scripted_lm(agent_reply)
    student = ToolAgentProgram(env.toolbox(), agent)
    student.toolbox.get("shared", "function_2").with_docs(description="Multiplies a and b.")
    assert [name for name, _ in student.named_predictors()] == ["toolbox.tools['shared::function_1']",
                                                               "toolbox.tools['shared::function_2']"]

    def metric(example, reply, trace=None):
        return float(any(env.execute("shared", call).output == example.a + example.b for call in reply.calls or []))

    trainset = [dspy.Example(question=task.question, toolset="shared", a=task.a, b=task.b).with_inputs(
        "question", "toolset") for task in env.tasks()]
    learned = dspy.COPRO(prompt_model=scripted_lm(_proposed, phase="editor"), metric=metric, breadth=2, depth=1).compile(
        student, trainset=trainset, eval_kwargs={"num_threads": 1, "display_progress": False})

    assert learned.toolbox.get("shared", "function_1").description == "Adds a and b."
    assert student.toolbox.get("shared", "function_1").description == ""  # COPRO worked on a copy
    prompts.clear()
    trajectory = env.rollout(learned.agent, learned.toolbox, env.tasks()[0])
    assert '"name": "function_1", "description": "Adds a and b."' in prompts[0] and trajectory.success
    learned.save(str(tmp_path / "program.json"))  # the rewritten docs are the program's DSPy state
    reloaded = ToolAgentProgram(env.toolbox(), agent)
    reloaded.load(str(tmp_path / "program.json"))
    assert reloaded.toolbox.to_json() == learned.toolbox.to_json()


def test_a_predictors_signature_and_the_tools_docs_are_one():
    tool = ToyEnvironment(1).toolbox().get("t0", "function_1")
    tool.signature = tool.signature.with_instructions("Adds a and b.")  # as DSPy's optimizers write it
    assert tool.description == "Adds a and b." and tool.openai_schema()["function"]["description"] == "Adds a and b."
    tool.with_docs(description="Sums two integers.")
    assert tool.signature.instructions == "Sums two integers."
    tool.demos.append(dspy.Example(a=1, b=2))
    twin = copy.deepcopy(tool)
    twin.with_docs(description="Changed.")
    assert (tool.description, len(twin.demos)) == ("Sums two integers.", 1) and twin.demos is not tool.demos
