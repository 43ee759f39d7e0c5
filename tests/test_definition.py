"""One frozen run definition with a stable key: what acts defines a run, how it is carried out does not; runs carry
it, are found by it, and a resumed run must be the run its checkpoint defines."""

import json

import mlflow
import pytest

from otbench import evaluate, mlflow_store, optimize
from otbench.envs.registry import EnvironmentOptions
from otbench.errors import ConfigError
from otbench.llm.session import LMOptions
from otbench.optimizers.easytool_spec import EasyToolKnobs
from otbench.optimizers.gepa import GEPAKnobs
from otbench.optimizers.toolobserver.knobs import Improvements, ToolObserverKnobs
from otbench.run import checkpoints, definition, tracking
from otbench.run import logged as run_logged
from otbench.run import lookup as run_lookup


def _optimized(**changes):
    return optimize.OptimizeOptions(**{"mode": "online", **changes}).definition()


def _toolobserver(**knobs):
    return _optimized(knobs=ToolObserverKnobs(**knobs))


def test_how_a_run_is_carried_out_does_not_change_what_defines_it():
    base = _optimized()
    assert base.key == _optimized(num_threads=4, progress=False, resume=None).key
    assert base.key == _optimized(lm=LMOptions(threads=1, cache=False, api_base="http://x:1/v1", api_key="k")).key
    assert base.key != _optimized(limit=30).key and base.key != _optimized(seed=1).key
    assert base.key != _optimized(lm=LMOptions(lm="openai/gpt-5-mini")).key
    assert base == definition.RunDefinition.from_json(json.loads(base.canonical()))


def test_a_prefilled_opening_defines_another_run_and_runs_without_it_keep_their_keys():
    base = _optimized()
    assert "prefill" not in json.loads(base.canonical())["models"]  # the key runs logged before it had
    prefilled = _optimized(lm=LMOptions(prefill=True))
    assert prefilled.key != base.key and json.loads(prefilled.canonical())["models"]["prefill"] is True
    assert definition.RunDefinition.from_json(json.loads(prefilled.canonical())) == prefilled
    assert prefilled.lm_options(LMOptions()).prefill and not base.lm_options(LMOptions(prefill=True)).prefill
    assert _optimized(lm=LMOptions(prefill=True, grammar=False)).key == _optimized(lm=LMOptions(grammar=False)).key
    assert _optimized(lm=LMOptions(lm="openai/gpt-5-mini", prefill=True)).models.prefill is False
    assert prefilled.method == "+TO --prefill" and base.method == "+TO"


def test_only_the_knobs_that_act_in_the_runs_mode_define_it():
    assert _optimized(knobs=ToolObserverKnobs(batch_size=5)).key == _optimized().key  # a batch size acts offline
    offline = optimize.OptimizeOptions(knobs=ToolObserverKnobs(batch_size=5), mode="offline").definition()
    assert offline.key != optimize.OptimizeOptions(mode="offline").definition().key
    assert _optimized(optimizer="gepa", knobs=GEPAKnobs(minibatch=5)).key == _optimized(optimizer="gepa").key
    offline_only = [name for name in Improvements.acting_in("offline") if name not in Improvements.acting_in("online")]
    for name in offline_only:  # an improvement that does not act online does not define an online run
        assert _toolobserver(switches={name: False}).key == _optimized().key
    acting = Improvements.acting_in("online")[0]
    assert _toolobserver(switches={acting: False}).key != _optimized().key
    assert _toolobserver(variant="paper", switches={"probe": True}).method == "+TO (paper) --probe"


def test_the_paper_variant_keeps_its_definition_however_the_knobs_that_act_change(monkeypatch):
    paper, improved = _toolobserver(variant="paper"), _optimized()
    fewer = Improvements.acting_in("online")[1:]  # one improvement fewer acts online
    monkeypatch.setattr(Improvements, "acting_in", classmethod(lambda cls, mode: fewer))
    assert _toolobserver(variant="paper").key == paper.key
    assert _toolobserver(variant="paper").optimizer.part["improvements"] == []
    assert _optimized().key != improved.key  # the improved variant now does more: another run


def test_evaluate_and_optimize_runs_carry_their_definition_and_are_found_by_it(capsys):
    result = evaluate.run(evaluate.EvaluateOptions(agent="oracle", limit=3, progress=False))
    run = mlflow.get_run(result.run_id)
    defined = evaluate.EvaluateOptions(agent="oracle", limit=3).definition()
    assert run.data.tags[definition.KEY_TAG] == defined.key
    assert run_logged.definition_of(run) == defined and run_lookup.find(defined).info.run_id == result.run_id
    assert run.info.run_name.startswith("evaluate-bfcl-names_only-oracle-n3-")
    assert run.data.params["method"] == "oracle" and run.data.params["lm"] == "-"  # not a "base" docs row


def test_a_run_logged_before_definitions_is_read_through_the_adapter():
    mlflow_store.configure()
    wanted = evaluate.EvaluateOptions(limit=4, seed=8).definition()
    with mlflow.start_run(tags={"command": "evaluate", "env": "bfcl", "setting": "names_only", "agent": "llm",
                                "lm": "embedded", "optimizer": "base"}) as run:
        mlflow.log_params({"method": "base", "limit": "4", "seed": "8", "lm": "embedded", "temperature": "0.0",
                           "embedded_model": "qwen-1.5b", "no_grammar": "false", "call_timeout": "5.0"})
    found = run_lookup.find(wanted)
    assert found is not None and found.info.run_id == run.info.run_id


def test_a_resumed_run_must_be_the_run_its_checkpoint_defines(tmp_path):

    mlflow_store.configure()
    with mlflow.start_run() as run:
        defined = _optimized(limit=2)
        mlflow.set_tags({definition.KEY_TAG: defined.key, definition.DEFINITION_TAG: defined.canonical()})
        tracking.log_definition(_optimized(limit=3).to_json())
    mlflow.MlflowClient().set_terminated(run.info.run_id, status="KILLED")
    with pytest.raises(ConfigError, match="defines another run"):
        checkpoints.resumable(run.info.run_id)


def test_an_environment_option_added_later_reads_as_what_older_definitions_meant():
    chess = optimize.OptimizeOptions(environment=EnvironmentOptions(env="chess")).definition()
    older = json.loads(chess.canonical())
    del older["environment"]["board_diagram"]  # logged before --board-diagram existed: the diagram was shown
    read = run_logged._completed(definition.RunDefinition.from_json(older))
    assert dict(read.environment)["board_diagram"] is True and read.key != chess.key


def test_choosing_docs_on_a_validation_sample_is_another_run_and_runs_without_it_keep_their_keys():
    chess = EnvironmentOptions(env="chess")
    offline = optimize.OptimizeOptions(environment=chess).definition()
    assert "val_limit" not in json.loads(offline.canonical())["sample"]  # the key runs logged before it had
    validated = optimize.OptimizeOptions(environment=chess, val_limit=8).definition()
    assert validated.key != offline.key and validated.method == "+TO --val-limit 8"
    assert validated.params("s", learning="offline")["val_limit"] == 8
    assert definition.RunDefinition.from_json(json.loads(validated.canonical())) == validated
    online = optimize.OptimizeOptions(environment=chess, mode="online", val_limit=8).definition()
    assert online.key == optimize.OptimizeOptions(environment=chess, mode="online").definition().key  # no valset
    with pytest.raises(ConfigError, match="--val-limit: bfcl learns docs per task"):
        _optimized(val_limit=8)


def test_reference_agents_runs_are_labelled_with_their_agent_not_a_docs_row():
    for agent in ("oracle", "null"):
        for docs in (None, "gold"):
            assert evaluate.EvaluateOptions(agent=agent, docs=docs).definition().method == agent
    assert evaluate.EvaluateOptions().definition().method == "base"
    assert evaluate.EvaluateOptions(docs="gold").definition().method == "gold"


def test_a_sample_of_every_task_is_the_same_whatever_its_seed_and_limit_beyond_it():
    sizes = {"test": 150}
    full = [evaluate.EvaluateOptions(limit=limit, seed=seed).definition().sized(sizes)
            for limit, seed in ((150, 0), (150, 1), (400, 7), (None, 3))]
    assert len({defined.key for defined in full}) == 1
    assert full[0].sample.seed is None and full[0].sample.limit == 150
    assert full[0].params("names_only", learning="online")["seed"] == "all"
    part = evaluate.EvaluateOptions(limit=30, seed=1).definition()
    assert part.sized(sizes) == part  # a sample of some tasks keeps its seed
    online = [_optimized(limit=150, seed=seed).sized(sizes) for seed in (0, 1)]
    assert online[0].key == online[1].key and online[0].sample.seed is None
    drawn = [_optimized(optimizer="gepa", limit=150, seed=seed).sized(sizes) for seed in (0, 1)]
    assert drawn[0].key != drawn[1].key  # GEPA draws at random with the run's seed


def test_a_run_found_under_its_seed_is_the_whole_split_run_wanted_without_one():
    found = evaluate.EvaluateOptions(limit=150, seed=1).definition()
    wanted = found.sized({"test": 150})
    assert found.key != wanted.key and definition.same_run(found, wanted)
    assert not definition.same_run(evaluate.EvaluateOptions(limit=30, seed=1).definition(), wanted)


def test_a_definition_of_the_first_format_reads_as_the_same_run():
    improved = _toolobserver(switches={"facts": False})
    first = {key: value for key, value in json.loads(improved.canonical()).items() if key != "version"}
    knobs = first["optimizer"].pop("knobs")
    first["optimizer"] |= {"variant": knobs.pop("variant"), "improvements": knobs.pop("improvements"),
                           "oracle_feedback": knobs.pop("oracle_feedback"), "probe": None, "knobs": knobs}
    assert run_logged.definition_from_json(first) == improved
    probed = _optimized(optimizer="easytool", knobs=EasyToolKnobs(probe=True))
    first = {key: value for key, value in json.loads(probed.canonical()).items() if key != "version"}
    first["optimizer"] |= {"variant": None, "improvements": [], "oracle_feedback": None,
                           "probe": first["optimizer"]["knobs"].pop("probe")}
    assert run_logged.definition_from_json(first) == probed
