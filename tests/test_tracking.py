import json
from functools import partial

import mlflow
from scripted_lm import scripted_lm
from toy_env import ToyEnvironment, docs_aware_agent_reply, truthful_editor_reply

from modules.agent import FunctionCallingAgent
from modules.editor import DocEditor
from modules.program import ToolAgentProgram
from optimizers.settings import PAPER
from optimizers.toolobserver import ToolObserver
from otbench import tracking
from otbench.llm.metering import TokenLedger

# the paper's protocol: these tests pin its exact behaviour
PaperTO = partial(ToolObserver, improvements=PAPER)


def test_every_iteration_is_logged_with_docs_trajectories_editor_and_checkpoint():
    tracking.configure()
    env, ledger = ToyEnvironment(2), TokenLedger()
    agent, editor = FunctionCallingAgent(), DocEditor()
    agent.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(truthful_editor_reply, ledger=ledger, phase="editor")
    tracker = tracking.MlflowIterationTracker(ledger, extra_checkpoint={"args": {"env": "toy"}})
    with tracking.tracked_run("toy", tags={"optimizer": "toolobserver"}, params={"n": 2}) as run:
        PaperTO(env=env, editor=editor, tracker=tracker, progress=False).compile(
            ToolAgentProgram(env.toolbox(), agent), trainset=env.tasks())
    client = mlflow.MlflowClient()
    history = client.get_metric_history(run.info.run_id, "E")
    assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == [(0, 0.0), (1, 1.0), (2, 1.0)]
    editor_tokens = sorted(client.get_metric_history(run.info.run_id, "tokens_editor_total"), key=lambda m: m.step)
    assert editor_tokens[0].value > 0 and editor_tokens[-1].value >= editor_tokens[0].value
    step_files = {a.path for a in client.list_artifacts(run.info.run_id, "iterations/step_01")}
    assert {"iterations/step_01/docs.json", "iterations/step_01/trajectories.jsonl",
            "iterations/step_01/editor.md"} <= step_files
    checkpoint = tracking.load_checkpoint(run.info.run_id)
    assert checkpoint["args"] == {"env": "toy"} and checkpoint["next_step"] == 3
    assert json.dumps(checkpoint["tokens"])
