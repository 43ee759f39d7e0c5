"""One frozen run definition with a stable key: what acts defines a run, how it is carried out does not; runs carry
it, are found by it, and a resumed run must be the run its checkpoint defines."""

import json

import mlflow
import pytest

from otbench import evaluate, optimize
from otbench.envs.registry import EnvironmentOptions
from otbench.errors import ConfigError
from otbench.llm.session import LMOptions
from otbench.optimizers.gepa import GEPAKnobs
from otbench.optimizers.settings import Improvements, ToolObserverKnobs
from otbench.run import definition, tracking
from otbench.run import lookup as run_lookup


def _optimized(**changes):
    return optimize.OptimizeOptions(**changes).definition(learning="online")


def test_how_a_run_is_carried_out_does_not_change_what_defines_it():
    base = _optimized()
    assert base.key == _optimized(num_threads=4, progress=False, resume=None).key
    assert base.key == _optimized(lm=LMOptions(threads=1, cache=False, api_base="http://x:1/v1", api_key="k")).key
    assert base.key != _optimized(limit=30).key and base.key != _optimized(seed=1).key
    assert base.key != _optimized(lm=LMOptions(lm="openai/gpt-5-mini")).key
    assert base == definition.RunDefinition.from_json(json.loads(base.canonical()))


def test_only_the_knobs_that_act_in_the_runs_mode_define_it():
    assert _optimized(knobs=ToolObserverKnobs(batch_size=5)).key == _optimized().key  # a batch size acts offline
    offline = optimize.OptimizeOptions(knobs=ToolObserverKnobs(batch_size=5)).definition(learning="offline")
    assert offline.key != optimize.OptimizeOptions().definition(learning="offline").key
    assert _optimized(optimizer="gepa", knobs=GEPAKnobs(minibatch=5)).key == _optimized(optimizer="gepa").key
    offline_only = [name for name in Improvements.acting_in("offline") if name not in Improvements.acting_in("online")]
    for name in offline_only:  # an improvement that does not act online does not define an online run
        assert _optimized(switches={name: False}).key == _optimized().key
    acting = Improvements.acting_in("online")[0]
    assert _optimized(switches={acting: False}).key != _optimized().key
    assert _optimized(variant="paper", switches={"probe": True}).method == "+TO (paper) --probe"


def test_the_paper_variant_keeps_its_definition_however_the_knobs_that_act_change(monkeypatch):
    paper, improved = _optimized(variant="paper"), _optimized()
    fewer = Improvements.acting_in("online")[1:]  # one improvement fewer acts online
    monkeypatch.setattr(Improvements, "acting_in", classmethod(lambda cls, mode: fewer))
    assert _optimized(variant="paper").key == paper.key and _optimized(variant="paper").optimizer.improvements == ()
    assert _optimized().key != improved.key  # the improved variant now does more: another run


def test_evaluate_and_optimize_runs_carry_their_definition_and_are_found_by_it(capsys):
    result = evaluate.run(evaluate.EvaluateOptions(agent="oracle", limit=3, progress=False))
    run = mlflow.get_run(result.run_id)
    defined = evaluate.EvaluateOptions(agent="oracle", limit=3).definition(tasks=3)
    assert run.data.tags[definition.KEY_TAG] == defined.key
    assert run_lookup.definition_of(run) == defined and run_lookup.find(defined).info.run_id == result.run_id
    assert run.info.run_name.startswith("evaluate-bfcl-names_only-oracle-n3-")
    assert run.data.params["method"] == "oracle" and run.data.params["lm"] == "-"  # not a "base" docs row


def test_a_run_logged_before_definitions_is_read_through_the_adapter():
    tracking.configure()
    wanted = evaluate.EvaluateOptions(limit=4, seed=8).definition(tasks=4)
    with mlflow.start_run(tags={"command": "evaluate", "env": "bfcl", "setting": "names_only", "agent": "llm",
                                "lm": "embedded", "optimizer": "base"}) as run:
        mlflow.log_params({"method": "base", "limit": "4", "seed": "8", "lm": "embedded", "temperature": "0.0",
                           "embedded_model": "qwen-1.5b", "no_grammar": "false", "call_timeout": "5.0"})
    found = run_lookup.find(wanted)
    assert found is not None and found.info.run_id == run.info.run_id


def test_a_resumed_run_must_be_the_run_its_checkpoint_defines(tmp_path):
    tracking.configure()
    logged = optimize.OptimizeOptions(limit=2, mode="online")
    with mlflow.start_run() as run:
        defined = logged.definition(learning="online")
        mlflow.set_tags({definition.KEY_TAG: defined.key, definition.DEFINITION_TAG: defined.canonical()})
        other = optimize.OptimizeOptions(limit=3, mode="online")
        tracking.log_definition({key: str(value) if hasattr(value, "parts") else value
                                 for key, value in other.values().items() if key not in ("resume",)})
    mlflow.MlflowClient().set_terminated(run.info.run_id, status="KILLED")
    with pytest.raises(ConfigError, match="defines another run"):
        optimize.prepare(optimize.OptimizeOptions(resume=run.info.run_id))


def test_an_environment_option_added_later_reads_as_what_older_definitions_meant():
    chess = optimize.OptimizeOptions(environment=EnvironmentOptions(env="chess")).definition(learning="offline")
    older = json.loads(chess.canonical())
    del older["environment"]["board_diagram"]  # logged before --board-diagram existed: the diagram was shown
    read = run_lookup._completed(definition.RunDefinition.from_json(older))
    assert dict(read.environment)["board_diagram"] is True and read.key != chess.key


def test_choosing_docs_on_a_validation_sample_is_another_run_and_runs_without_it_keep_their_keys():
    offline = optimize.OptimizeOptions().definition(learning="offline")
    assert "val_limit" not in json.loads(offline.canonical())["sample"]  # the key runs logged before it had
    validated = optimize.OptimizeOptions(val_limit=8).definition(learning="offline")
    assert validated.key != offline.key and validated.method == "+TO --val-limit 8"
    assert validated.params("s", learning="offline")["val_limit"] == 8
    assert definition.RunDefinition.from_json(json.loads(validated.canonical())) == validated
    assert _optimized(val_limit=8).key == _optimized().key  # online: no docs are chosen across tasks


def test_reference_agents_runs_are_labelled_with_their_agent_not_a_docs_row():
    for agent in ("oracle", "null"):
        for docs in (None, "gold"):
            assert evaluate.EvaluateOptions(agent=agent, docs=docs).definition(tasks=3).method == agent
    assert evaluate.EvaluateOptions().definition(tasks=3).method == "base"
    assert evaluate.EvaluateOptions(docs="gold").definition(tasks=3).method == "gold"
