"""The comparison command: reuse of finished runs, missing rows run through the commands, the table."""

import dataclasses
import json
import sys
import types
from contextlib import contextmanager
from dataclasses import replace
from typing import ClassVar

import mlflow
import pytest
from scripted_lm import prompt_text, scripted_lm
from test_optimize_cli import any_role_reply
from toy_env import ToyEnvironment, docs_aware_agent_reply

from otbench import compare, mlflow_store, optimize
from otbench.envs import registry
from otbench.envs.base import sample_tasks
from otbench.envs.bfcl.env import BfclEnvironment
from otbench.errors import DataError
from otbench.exits import run_main
from otbench.modules.tool_docs import DocumentedTool, Toolbox
from otbench.optimizers.easytool_spec import EasyToolKnobs
from otbench.optimizers.registry import OPTIMIZERS
from otbench.optimizers.spec import OptimizerSpec
from otbench.optimizers.toolobserver.knobs import IMPROVED, Improvements, ToolObserverKnobs
from otbench.run import evaluation, naming, optimization
from otbench.run import logged as run_logged
from otbench.study import comparing

EDITOR_REPLY = json.dumps({"updates": [{"name": "function_1", "description": "Computes a value from numbers."}]})


def every_role_reply(messages):
    """Well-formed replies for the agent and every optimizer's prompts; ToolObserver's editor documents function_1."""
    return EDITOR_REPLY if '{"updates"' in prompt_text(messages) else any_role_reply(messages)


def _run(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(compare.main, argv)
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


def _script_models(monkeypatch, responders):
    """evaluate and optimize get scripted LMs (a responder per phase); returns the LM options of each session."""
    sessions = []

    @contextmanager
    def open_scripted(options, ledger, phases=("agent",)):
        sessions.append(options)
        yield {phase: scripted_lm(responders[phase], ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(evaluation, "open_lms", open_scripted)
    monkeypatch.setattr(optimization, "open_lms", open_scripted)
    return sessions


@pytest.fixture()
def scripted_models(monkeypatch):
    return _script_models(monkeypatch, {phase: every_role_reply for phase in ("agent", "editor", "exploration")})


class OfflineToy(ToyEnvironment):
    """The toy environment with one shared toolset (offline learning) and true docs under ``gold``."""

    def __init__(self) -> None:
        super().__init__(6, shared=True)

    def toolbox(self, docs=None):
        toolbox = super().toolbox(docs)
        if docs == "gold":
            toolbox.get("shared", "function_1").with_docs(description="Adds a and b.")
            toolbox.get("shared", "function_2").with_docs(description="Multiplies a and b.")
        return toolbox

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return None


@pytest.fixture()
def offline_toy(monkeypatch):
    """``--env toy`` builds :class:`OfflineToy`, through the registry like any environment."""
    options = types.ModuleType("toy_options")
    options.DEFAULT_SETTING, options.LEARNING = "opaque", "offline"
    options.add_arguments = lambda group: None
    options.settings = lambda: "the one setting"
    options.check = lambda args: None
    options.build = lambda args, workers=1: OfflineToy()
    monkeypatch.setitem(sys.modules, "toy_options", options)
    monkeypatch.setitem(registry.ENVIRONMENTS, "toy", "toy_options")


def test_a_comparisons_runs_open_in_mlflow_on_what_tells_them_apart(scripted_models, tmp_path, monkeypatch, capsys):
    """MLflow's compare page plots the first three params by name whose values differ between the runs (one a run
    lacks counts as differing) against the first metric the first run logged; its tables and charts show the runs
    in their colours, the results under one name whichever command logged them."""
    monkeypatch.chdir(tmp_path)
    argv = ["--optimizers", "toolobserver,easytool", "--limit", "2", "--seed", "202", "--plots", str(tmp_path),
            "--json", "--quiet"]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    rows = json.loads(out)["rows"]
    runs = [mlflow.get_run(row["run_id"]) for row in rows]
    assert [run.data.params["method"] for run in runs] == ["base", "gold", "+TO (paper)", "+TO", "+ET"]
    keys = sorted({key for run in runs for key in run.data.params})
    differing = [key for key in keys if len({run.data.params.get(key) for run in runs}) > 1]
    assert differing[:3] == ["method", "optimizer", "setting"]
    shared = [key for key in runs[0].data.metrics if all(key in run.data.metrics for run in runs)]
    assert shared[0] == "result/E"  # the result, which an optimize run's learning split's scores are not
    for row, run in zip(rows, runs, strict=True):
        assert run.data.metrics["result/E"] == row["E"] and run.data.metrics["result/tokens"] == row["tokens"]
    colours = [run.data.tags[naming.RUN_COLOR_TAG] for run in runs]
    assert len(set(colours)) == len(colours)


def test_missing_rows_are_run_once_then_reused(scripted_models, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # optimize writes learned_docs/ in the working directory
    argv = ["--limit", "2", "--seed", "101", "--plots", str(tmp_path), "--json", "--quiet"]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    first = json.loads(out)
    assert [row["row"] for row in first["rows"]] == ["base", "gold", "+TO (paper)", "+TO", "+P2P", "+ET", "+GEPA"]
    assert [row["optimizer"] for row in first["rows"][2:]] == ["toolobserver", *optimize.OPTIMIZERS]
    assert [row["run"] for row in first["rows"]] == ["ran"] * 7 and len(scripted_models) == 7
    assert first["metrics"] == ["E", "P", "A"] and first["learning"] == "online"
    for row in first["rows"]:
        assert set(row) >= {"E", "P", "A", "tokens", "docs_sem", "docs_lex", "run_id"} and row["tokens"] > 0
    base, gold, learned = first["rows"][:3]  # learned: the paper's ToolObserver
    assert mlflow.get_run(gold["run_id"]).data.tags["setting"] == "gold"
    assert gold["docs_sem"] == pytest.approx(1.0) and gold["docs_lex"] == pytest.approx(1.0)
    assert base["docs_sem"] == 0.0 and learned["docs_sem"] > 0.0  # names_only base docs are blank

    code, out, _ = _run(argv, capsys)
    second = json.loads(out)
    assert [row["run"] for row in second["rows"]] == ["reused"] * 7 and len(scripted_models) == 7
    assert [row["run_id"] for row in second["rows"]] == [row["run_id"] for row in first["rows"]]
    artifacts = {a.path for a in mlflow.MlflowClient().list_artifacts(second["run_id"])}
    assert {"comparison.json", "comparison.csv", "comparison.md", "plots"} <= artifacts
    assert all(path.endswith(".png") and (tmp_path / path.rsplit("/", 1)[1]).is_file() for path in second["plots"])


def test_a_probed_row_is_not_given_the_run_of_the_same_optimizer_without_probing(scripted_models, tmp_path,
                                                                                  monkeypatch, capsys):
    """A run logs its own options only where they depart from their defaults: an EasyTool run without ``probe``
    is the ``+ET`` row's, never the ``+ET (probe)`` row's."""
    monkeypatch.chdir(tmp_path)
    argv = ["--optimizers", "easytool", "--limit", "2", "--seed", "303", "--plots", str(tmp_path), "--json", "--quiet"]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    unprobed = json.loads(out)["rows"][-1]
    code, out, err = _run([*argv, "--probe"], capsys)
    assert code == 0, err
    rows = {row["row"]: row for row in json.loads(out)["rows"]}
    assert rows["+ET"]["run"] == "reused" and rows["+ET"]["run_id"] == unprobed["run_id"]
    assert rows["+ET (probe)"]["run"] == "ran" and rows["+ET (probe)"]["run_id"] != unprobed["run_id"]
    assert mlflow.get_run(rows["+ET (probe)"]["run_id"]).data.params["probe"] == "true"


def _adds_editor(messages):
    """A batch reply documenting function_1 (the paper's variant), or a true per-tool doc of the one tool
    the improved variant asks about (it asks only about tools the agent used)."""
    text = prompt_text(messages)
    if "Tool: " in text:
        return json.dumps({"description": "Adds a and b." if "Tool: function_1" in text else "Multiplies a and b."})
    return json.dumps({"updates": [{"name": "function_1", "description": "Adds a and b."}]})


def test_offline_rows_are_scored_on_the_test_split_and_gold_swaps_in_the_true_docs(offline_toy, monkeypatch, tmp_path,
                                                                                    capsys):
    monkeypatch.chdir(tmp_path)
    _script_models(monkeypatch, {"agent": docs_aware_agent_reply, "exploration": any_role_reply,
                                 "editor": _adds_editor})
    code, out, _ = _run(["--env", "toy", "--limit", "4", "--test-limit", "3", "--optimizers", "toolobserver",
                         "--plots", str(tmp_path), "--json", "--quiet"], capsys)
    result = json.loads(out)
    rows = {row["row"]: row for row in result["rows"]}
    assert code == 0 and result["learning"] == "offline" and list(rows) == ["base", "gold", "+TO (paper)", "+TO"]
    assert (rows["base"]["E"], rows["gold"]["E"], rows["+TO"]["E"]) == (0.0, 1.0, 1.0)
    assert mlflow.get_run(rows["gold"]["run_id"]).data.params["docs"] == "gold"
    learned = mlflow.get_run(rows["+TO"]["run_id"]).data
    assert learned.tags["mode"] == "offline" and learned.metrics["test_n"] == 3.0
    assert (rows["base"]["docs_sem"], rows["gold"]["docs_sem"]) == (0.0, pytest.approx(1.0))
    assert rows["+TO (paper)"]["docs_sem"] == pytest.approx(0.5)  # function_1 learned exactly, function_2 blank
    assert rows["+TO"]["docs_sem"] == pytest.approx(1.0)  # each tool learned once the agent had used it


def _log_run(tags, params, metrics, *, status="FINISHED", artifacts=None, history=None):
    """A run shaped like the ones evaluate and optimize log."""
    mlflow_store.configure()
    with mlflow.start_run(tags=tags) as run:
        mlflow.log_params(params)
        mlflow.log_metrics(metrics)
        for step, value in enumerate(history or []):
            mlflow.log_metric("E", value, step=step)
        for path, content in (artifacts or {}).items():
            mlflow.log_text(content, path)
    if status != "FINISHED":
        mlflow.MlflowClient().set_terminated(run.info.run_id, status=status)
    return run.info.run_id


def _ledger(paid_tokens, cached_tokens=0):
    """The token artefact of a run (evaluate's tokens.json, the token part of optimize's summary.json)."""
    return json.dumps({"tokens_by_phase": {"all": {"total_tokens": paid_tokens, "cached_tokens": cached_tokens}}})


def _prelogged_comparison(seed):
    """Finished base, gold and ToolObserver runs for BFCL names_only on 3 tasks, plus decoys that must not match."""
    evaluate_tags = {"command": "evaluate", "env": "bfcl", "agent": "llm", "lm": "embedded", "optimizer": "base"}
    params = {"limit": "3", "seed": str(seed)}
    base = _log_run({**evaluate_tags, "setting": "names_only"}, params, {"E": 0.0, "P": 0.0, "A": 0.6},
                    artifacts={"tokens.json": _ledger(1000)})
    gold = _log_run({**evaluate_tags, "setting": "gold"}, params, {"E": 1.0, "P": 0.9, "A": 0.95},
                    artifacts={"tokens.json": _ledger(1500)})
    with BfclEnvironment(setting="names_only") as env:  # learned docs for the first tool of each sampled test
        gold_docs = env.toolbox("gold")
        learned = Toolbox({test.id: [DocumentedTool("function_1", description=gold_docs.toolset(test.id)[0].description)]
                           for test in sample_tasks(env.tasks(), 3, seed)})
    optimize_tags = {"command": "optimize", "optimizer": "toolobserver", "mode": "online", "env": "bfcl",
                     "setting": "names_only", "lm": "embedded", "editor_lm": "embedded", "seed": str(seed)}
    optimize_params = {**params, "iterations": "null", "batch_size": "10", "oracle_feedback": "false", "p2p_samples": "3",
                       "variant": "improved"}
    summary = _ledger(8000, cached_tokens=1000)

    def optimize_run(metrics, **kwargs):
        return _log_run(optimize_tags, kwargs.pop("params", optimize_params), metrics, history=[0.0, 0.5, 0.5],
                        artifacts={"summary.json": summary, "docs/final_docs.json": json.dumps(learned.to_json())},
                        **kwargs)

    improved = {**optimize_params, **{name: str(getattr(IMPROVED, name)).lower()  # as the full method logs them
                                      for name in Improvements.always_logged()}}
    chosen = optimize_run({"final_E": 0.5, "final_P": 0.4, "final_A": 0.8}, params=improved)
    optimize_run({"final_E": 0.9, "final_P": 0.9, "final_A": 0.9}, status="FAILED")
    optimize_run({"final_E": 0.8, "final_P": 0.8, "final_A": 0.8}, params={**optimize_params, "oracle_feedback": "true"})
    optimize_run({"final_E": 0.7, "final_P": 0.7, "final_A": 0.7}, params={**optimize_params, "limit": "4"})
    optimize_run({"final_E": 0.6, "final_P": 0.6, "final_A": 0.6}, params={**optimize_params, "iterations": "4"})
    unlogged_variant = {key: value for key, value in optimize_params.items() if key != "variant"}
    paper = optimize_run({"final_E": 0.1, "final_P": 0.2, "final_A": 0.3}, params=unlogged_variant)  # before --variant
    return {"base": base, "gold": gold, "+TO (paper)": paper, "+TO": chosen}


def test_finished_runs_with_the_same_definition_are_reused_without_running_anything(monkeypatch, tmp_path, capsys):
    expected = _prelogged_comparison(seed=202)
    monkeypatch.setattr(comparing, "run_missing", lambda plan, settings: pytest.fail(f"ran {plan.label}"))  # running any command would fail the test
    code, out, _ = _run(["--limit", "3", "--seed", "202", "--optimizers", "toolobserver", "--plots", str(tmp_path),
                         "--json"], capsys)
    rows = {row["row"]: row for row in json.loads(out)["rows"]}
    assert code == 0 and {label: row["run_id"] for label, row in rows.items()} == expected
    assert (rows["+TO"]["E"], rows["+TO"]["P"], rows["+TO"]["A"], rows["+TO"]["tokens"]) == (0.5, 0.4, 0.8, 9000)
    assert (rows["base"]["A"], rows["base"]["tokens"], rows["gold"]["tokens"]) == (0.6, 1000, 1500)
    assert (rows["+TO"]["tokens_vs_to"], rows["base"]["tokens_vs_to"]) == (1.0, 0.11)  # 1000 / 9000
    assert 0.0 < rows["+TO"]["docs_sem"] < 1.0 and 0.0 < rows["+TO"]["docs_lex"] < 1.0
    assert rows["gold"]["docs_sem"] == pytest.approx(1.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bfcl-names_only-E-by-iteration.png",
                                                         "bfcl-names_only-E-by-row.png",
                                                         "bfcl-names_only-E-vs-tokens.png"]


def test_the_printed_table_has_the_paper_layout(monkeypatch, tmp_path, capsys):
    _prelogged_comparison(seed=303)
    monkeypatch.setattr(comparing, "run_missing", lambda plan, settings: pytest.fail(f"ran {plan.label}"))
    code, out, err = _run(["--limit", "3", "--seed", "303", "--optimizers", "toolobserver", "--plots", str(tmp_path)],
                          capsys)
    lines = out.splitlines()
    assert code == 0 and lines[1].split()[:11] == ["row", "E", "P", "A", "vs_base", "vs_TO", "tokens", "tokens_vs_to",
                                                   "docs_sem", "docs_lex", "docs_faults"]
    assert [line.split()[0] for line in lines[3:7]] == ["base", "gold", "+TO", "+TO"]  # "+TO (paper)", "+TO"
    assert lines[6].split()[1:3] == ["0.500", "†"]  # logged before per-task outcomes were kept: no interval
    assert "no per-task outcomes" in err and "†: no per-task outcomes" in lines[7]


class BfclLike:
    name, setting, learning = "bfcl", "names_only", "online"

    def tasks(self, split="test"):
        return [None] * 150


def _plans(argv, env=BfclLike):
    return comparing.plan_rows(compare.options_from(vars(compare.build_parser(argv).parse_args(argv))), env())


def test_the_optimizer_rows_follow_the_optimizer_registry(monkeypatch):
    @dataclasses.dataclass(frozen=True)
    class NewcomerKnobs:
        flag_prefix: ClassVar[str] = "newcomer"

    newcomer = OptimizerSpec("newcomer", "+newcomer", NewcomerKnobs, lambda *parts: None)
    monkeypatch.setattr(comparing, "OPTIMIZERS", {"toolobserver": OPTIMIZERS["toolobserver"], "newcomer": newcomer})
    monkeypatch.setitem(OPTIMIZERS, "newcomer", newcomer)
    plans = _plans(["--optimizers", "toolobserver,newcomer"])
    assert [plan.label for plan in plans] == ["base", "gold", "+TO (paper)", "+TO", "+newcomer"]
    paper, improved = plans[2].definition.optimizer.part, plans[3].definition.optimizer.part
    assert (paper["variant"], paper["improvements"], improved["variant"]) == ("paper", [], "improved")
    assert improved["oracle_feedback"] is False and improved["iterations"] is None and "batch_size" not in improved
    assert "num_threads" not in plans[2].definition.canonical() and "cache" not in plans[0].definition.canonical()
    assert plans[1].definition.setting == "gold" and plans[1].command == "evaluate"
    assert plans[4].definition.optimizer.name == "newcomer" and plans[4].command == "optimize"

    class Offline(BfclLike):
        learning = "offline"

        def tasks(self, split="test"):
            return [None] * 150

    gold = _plans(["--test-limit", "7"], Offline)[1]
    assert gold.definition.docs == "gold" and gold.definition.sample.limit == 7


def test_a_validation_sample_is_the_same_help_for_every_optimizer_row():
    class Offline(BfclLike):
        learning = "offline"

    validated = _plans(["--val-limit", "4", "--optimizers", "toolobserver,easytool"], Offline)
    assert [plan.label for plan in validated] == ["base", "gold", "+TO (paper) --val-limit 4", "+TO --val-limit 4",
                                                  "+ET --val-limit 4"]


def test_probe_adds_a_probed_row_for_each_optimizer_offered_the_shared_probe():
    plans = _plans(["--probe", "--optimizers", "toolobserver,easytool"])
    assert [plan.label for plan in plans] == ["base", "gold", "+TO (paper)", "+TO", "+ET", "+ET (probe)"]
    assert plans[-1].definition.optimizer.part["probe"] is True and plans[-2].definition.optimizer.part["probe"] is False
    assert plans[-1].definition.optimizer.chosen.probe and not plans[-2].definition.optimizer.chosen.probe
    assert not plans[3].definition.optimizer.chosen.switches  # ToolObserver probes by its own variant
    only = _plans(["--probe-only", "--optimizers", "toolobserver,easytool,gepa"])
    assert [plan.label for plan in only] == ["base", "gold", "+TO (paper)", "+TO", "+ET (probe)", "+GEPA (probe)"]


def test_ablations_add_a_toolobserver_row_per_improvement_its_learning_mode_uses():
    plans = _plans(["--ablations", "--optimizers", "toolobserver,easytool"])
    ablations = [f"+TO --no-{name.replace('_', '-')}" for name in Improvements.acting_in("online")
                 if getattr(IMPROVED, name)]
    assert [plan.label for plan in plans] == ["base", "gold", "+TO (paper)", "+TO", *ablations, "+ET"]
    assert ablations[1] == "+TO --no-facts"
    assert plans[5].definition.optimizer.chosen.switches == {"facts": False}
    assert "facts" not in plans[5].definition.optimizer.part["improvements"]
    assert "facts" in plans[3].definition.optimizer.part["improvements"]  # the full method's row never takes an ablation's run
    assert len({plan.definition.key for plan in plans}) == len(plans)

    class Offline(BfclLike):
        learning = "offline"

    offline = [plan.label for plan in _plans(["--ablations", "--optimizers", "toolobserver"], Offline)]
    assert offline[4:] == [f"+TO --no-{name.replace('_', '-')}" for name in Improvements.acting_in("offline")
                           if getattr(IMPROVED, name)]  # an opt-in improvement is off: no row switches it off


def test_an_improvement_added_later_is_logged_where_it_acts_so_older_runs_read_as_without_it():
    class Offline(BfclLike):
        learning = "offline"

    plans = {plan.label: plan for plan in _plans(["--ablations", "--optimizers", "toolobserver"], Offline)}
    paper, improved, no_replay = plans["+TO (paper)"], plans["+TO"], plans["+TO --no-replay-calls"]
    assert "replay_calls" not in paper.definition.optimizer.part["improvements"]
    assert "replay_calls" in improved.definition.optimizer.part["improvements"]
    assert "replay_calls" not in no_replay.definition.optimizer.part["improvements"]
    # an offline run logged before the improvement existed lacks the parameter: it ran without it
    legacy = {"command": "optimize", "optimizer": "toolobserver", "mode": "offline", "env": "bfcl",
              "setting": "names_only", "lm": "embedded", "editor_lm": "embedded", "seed": "0"}
    logged = {name: str(value).lower() if isinstance(value, bool) else str(value)
              for name, value in improved.definition.params("names_only", learning="offline").items()}
    # such a run logged every other improvement declared always logged where it acted (as the improved variant has it)
    logged |= {name: str(getattr(IMPROVED, name)).lower() for name in Improvements.always_logged()
               if name != "replay_calls" and name in Improvements.acting_in("offline")}
    assert run_logged._from_params(legacy, logged).key == no_replay.definition.key
    online = _plans(["--optimizers", "toolobserver"])[3]  # where it does not act: neither defined nor logged
    acts_online = "replay_calls" in Improvements.acting_in("online")
    assert ("replay_calls" in online.definition.optimizer.part["improvements"]) == acts_online
    assert "replay_calls" not in online.definition.params("names_only", learning="online")  # in its definition tag


def test_chess_rows_are_defined_by_the_move_question_and_older_runs_showed_the_diagram_but_no_phase():
    class ChessLike(BfclLike):
        name, setting, learning = "chess", "phase", "offline"

    base = dict(_plans(["--env", "chess", "--optimizers", "toolobserver"], ChessLike)[0].definition.environment)
    assert (base["board_diagram"], base["phase_name"]) == (False, True)
    assert dict(_plans(["--env", "chess", "--board-diagram"], ChessLike)[0].definition.environment)["board_diagram"]
    assert not dict(_plans(["--env", "chess", "--no-phase-name"], ChessLike)[0].definition.environment)["phase_name"]
    # a Chess run logged before an option existed lacks its parameter: its agent saw the diagram, no phase name
    assert (run_logged.MEANT_WHEN_ABSENT["board_diagram"], run_logged.MEANT_WHEN_ABSENT["phase_name"]) == (True, False)
    assert "board_diagram" not in dict(_plans([])[0].definition.environment)  # not a BFCL option


def test_wild_rows_refuse_repeats_and_cue_the_answer_and_older_runs_did_neither():
    class WildLike(BfclLike):
        name, setting, learning = "wild", "names_only", "offline"

    row = _plans(["--env", "wild", "--optimizers", "toolobserver"], WildLike)[0].definition
    assert (dict(row.environment)["refuse_repeats"], dict(row.environment)["answer_cue"]) == (True, True)
    ablation = dict(_plans(["--env", "wild", "--no-refuse-repeats", "--no-answer-cue"], WildLike)[0].definition.environment)
    assert (ablation["refuse_repeats"], ablation["answer_cue"]) == (False, False)
    # a Wild run logged before the options existed ran every repeat with no cue: it is that ablation's run
    older = replace(row, environment=tuple((name, value) for name, value in row.environment
                                           if name not in ("refuse_repeats", "answer_cue")))
    completed = dict(run_logged._completed(older).environment)
    assert (completed["refuse_repeats"], completed["answer_cue"]) == (False, False)


def test_a_run_is_labelled_with_the_improvements_switched_away_from_its_variant():
    spec = OPTIMIZERS["toolobserver"]

    def label(mode="online", **knobs):
        return spec.row_label(spec.define(ToolObserverKnobs(**knobs), mode), mode)

    assert label() == "+TO" and label(variant="paper") == "+TO (paper)"
    assert label(switches={"facts": False, "probe": True}) == "+TO --no-facts"
    assert label(variant="paper", switches={"probe": True}) == "+TO (paper) --probe"
    assert label(switches={"request_values": False}) == "+TO --no-request-values"
    assert label("offline", switches={"request_values": False}) == "+TO"  # it does not act offline
    easytool = OPTIMIZERS["easytool"]
    assert easytool.row_label(easytool.define(EasyToolKnobs(probe=True), "online"), "online") == "+ET (probe)"


def test_play2prompt_knobs_reach_only_its_row_and_its_run_definition():
    plans = {p.optimizer: p for p in _plans(["--p2p-samples", "2"])}
    assert plans["play2prompt"].definition.optimizer.chosen.samples == 2
    assert dict(plans["play2prompt"].definition.optimizer.knobs)["p2p_samples"] == 2
    assert "p2p_samples" not in dict(plans["toolobserver"].definition.optimizer.knobs)  # not a knob that acts there


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--optimizers", "toolobserver,magic"], "unknown optimizer 'magic'"),
        (["--env", "atari"], "unknown environment 'atari'"),
        (["--setting", "names_everything"], "unknown setting 'names_everything'"),
        (["--limit", "0"], "expected a number >= 1"),
        (["--ablations", "--optimizers", "easytool"], "add toolobserver to --optimizers"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(argv, message, capsys):
    code, _out, err = _run(argv, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_token_ratios_need_a_toolobserver_row_that_cost_something():
    rows = [{"row": "base", "tokens": 100}, {"row": "+P2P", "tokens": 700}]
    assert not comparing.add_token_ratios(rows) and "tokens_vs_to" not in rows[0]
    assert not comparing.add_token_ratios([{"row": "+TO", "tokens": 0}])
    rows.append({"row": "+TO", "tokens": 200})
    assert comparing.add_token_ratios(rows)
    assert [row["tokens_vs_to"] for row in rows] == [0.5, 3.5, 1.0]


def test_row_results_keep_only_the_metrics_the_split_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chess test games have no evaluation-change metric (exploration games do): the row leaves it out."""
    from types import SimpleNamespace

    monkeypatch.setattr(comparing, "_artifact_json", lambda run_id, path: {
        "tokens_by_phase": {"all": {"total_tokens": 100, "cached_tokens": 20}}})
    env = SimpleNamespace(learning="offline", primary_metric="optimal_pct",
                          metric_names=("optimal_pct", "elo", "eval_change_cp"))
    run = SimpleNamespace(info=SimpleNamespace(run_id="r1"),
                          data=SimpleNamespace(metrics={"test_optimal_pct": 50.0, "test_elo": 1210.0}))
    plan = SimpleNamespace(command="optimize", label="+TO")
    # a run logged before doc contamination was measured shows none
    assert comparing.row_results(plan, run, env) == {"optimal_pct": 50.0, "elo": 1210.0, "tokens": 120, "docs_faults": "-"}
    run.data.metrics = {"test_elo": 1210.0}
    with pytest.raises(DataError, match="no test_optimal_pct"):
        comparing.row_results(plan, run, env)
