"""The results ledger: a run is kept as one small file keyed by its definition, loads into any store as an ordinary
MLflow run that comparisons reuse, and an interrupted run kept there continues on another checkout."""

import json
from pathlib import Path

import mlflow
import pytest
from test_compare import _adds_editor, _script_models, every_role_reply, offline_toy  # noqa: F401 - a fixture
from test_optimize_cli import any_role_reply
from toy_env import docs_aware_agent_reply

from otbench import evaluate, mlflow_store, optimize, reproduce
from otbench.errors import ConfigError, DataError
from otbench.evals.outcomes import Outcomes
from otbench.exits import run_main
from otbench.paths import results_dir
from otbench.run import ledger, optimization, tracking
from otbench.run import lookup as run_lookup
from otbench.run.settings import RunSettings
from otbench.study import comparing, grid
from otbench.study.rendered import render, render_page, table


def _fresh_store(tmp_path, monkeypatch, name):
    """Another checkout's store: empty, beside the same ledger."""
    monkeypatch.setenv("OTBENCH_MLRUNS", str(tmp_path / name))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # MLflow sets it to the store in use
    mlflow_store.configure()


def test_an_evaluation_is_kept_verified_and_loads_as_the_run_it_was(tmp_path, monkeypatch, capsys):
    result = evaluate.run(evaluate.EvaluateOptions(agent="oracle", limit=3, seed=4, progress=False))
    with pytest.raises(SystemExit) as stop:
        run_main(__import__("otbench.results").results.main, ["add", result.run_id])
    assert stop.value.code == 0
    kept = list(ledger.entries())
    assert len(kept) == 1 and kept[0].status == "finished" and kept[0].machine["cores"] >= 1
    assert set(kept[0].artifacts) >= {"outcomes.json", "tokens.json"} and ledger.verify() == []
    text = (results_dir() / "runs" / f"{kept[0].key}.json").read_text()
    assert len(text) < 300_000 and json.loads(text)["schema"] == ledger.SCHEMA
    capsys.readouterr()
    for artifact, code in (("tokens.json", 0), ("no_such.json", 2)):
        with pytest.raises(SystemExit) as stop:
            run_main(__import__("otbench.results").results.main, ["show", kept[0].key[:8], "--artifact", artifact])
        assert stop.value.code == code
    shown = capsys.readouterr()
    assert json.loads(shown.out) == kept[0].artifacts["tokens.json"] and "keeps no 'no_such.json'" in shown.err

    from otbench.run.outcomes import read

    original = mlflow.get_run(result.run_id)
    outcomes = read(original).row
    _fresh_store(tmp_path, monkeypatch, "elsewhere")
    wanted = evaluate.EvaluateOptions(agent="oracle", limit=3, seed=4).definition()
    found = run_lookup.find(wanted)  # nothing in this store: the ledger's entry, loaded
    assert found is not None and found.data.tags[ledger.LEDGER_TAG] == kept[0].key
    assert found.data.metrics == original.data.metrics and found.data.params == original.data.params
    assert found.info.status == "FINISHED" and found.info.run_name == original.info.run_name
    assert read(found).row == outcomes
    assert run_lookup.find(wanted).info.run_id == found.info.run_id  # loaded once


def test_add_all_keeps_every_run_of_the_store_once(tmp_path, monkeypatch, capsys):
    from otbench import results

    _fresh_store(tmp_path, monkeypatch, "own-store")  # the session's shared store holds other tests' runs
    for limit in (2, 3):
        evaluate.run(evaluate.EvaluateOptions(agent="oracle", limit=limit, progress=False))
    with pytest.raises(SystemExit) as stop:
        run_main(results.main, ["add", "--all"])
    assert stop.value.code == 0 and len(list(ledger.entries())) == 2
    with pytest.raises(SystemExit):
        run_main(results.main, ["add", "--all"])
    assert "0 entries added or replaced" in capsys.readouterr().out


def test_verify_names_what_is_wrong_one_line_each(tmp_path, monkeypatch):
    evaluate.run(evaluate.EvaluateOptions(agent="oracle", limit=2, progress=False))
    run_id = mlflow.search_runs(experiment_names=["otbench"], output_format="list")[0].info.run_id
    path, action = ledger.write(ledger.entry_of(run_id))
    assert action == "added" and ledger.write(ledger.entry_of(run_id))[1] == "kept"
    data = json.loads(path.read_text())
    data["definition"]["sample"]["limit"] = 3  # a hand edit: the key no longer matches
    path.write_text(json.dumps(data))
    (path.parent / "notes.txt").write_text("x")
    problems = ledger.verify()
    assert any("not its file name" in problem and "misfiled or edited" in problem for problem in problems)
    assert any("does not match its digest" in problem for problem in problems)  # every problem of the file at once
    assert any(problem.startswith("notes.txt: not an entry file") for problem in problems)
    path.write_text("{}")
    with pytest.raises(DataError, match="not a results entry"):
        ledger.read(path)


def test_an_interrupted_cell_kept_in_the_ledger_continues_on_another_checkout(tmp_path, monkeypatch, capsys):
    scripted = _script_models(monkeypatch, {phase: every_role_reply for phase in ("agent", "editor", "exploration")})
    monkeypatch.chdir(tmp_path)
    section = grid.Section("bfcl", "names_only", ("base", "gold", "+TO"), limit=2,
                           knobs={"toolobserver": {"iterations": 3}})
    options = reproduce.ReproduceOptions(sections=(section,), seeds=(5,), report=tmp_path / "report", progress=False,
                                         wait_seconds=0.1)
    with grid.open_grid(options) as (_, cells):
        improved = next(cell for cell in cells if cell.plan.label == "+TO")
    real, checkpoints = mlflow.log_dict, []

    def log_dict(data, artifact_file, *args, **kwargs):
        if artifact_file == "checkpoint.json":
            checkpoints.append(data["step"])
            if len(checkpoints) == 2:  # a stop after the first iteration was kept
                raise KeyboardInterrupt
        return real(data, artifact_file, *args, **kwargs)

    monkeypatch.setattr(mlflow, "log_dict", log_dict)
    with pytest.raises(KeyboardInterrupt):
        optimization.execute(improved.plan.definition, RunSettings(progress=False))
    monkeypatch.setattr(mlflow, "log_dict", real)
    stopped = run_lookup.unfinished(improved.plan.definition)[0]
    entry = ledger.entry_of(stopped.info.run_id)
    assert entry.status == "interrupted" and entry.resume["checkpoint.json"]["step"] == checkpoints[0]
    ledger.write(entry)

    _fresh_store(tmp_path, monkeypatch, "next-machine")
    states = {row["row"]: (row["state"], row["from"]) for row in reproduce.status(options)}
    assert states["+TO"] == ("interrupted", "ledger") and states["base"] == ("missing", "")
    sessions = len(scripted)
    result = reproduce.run(options)
    assert "resuming run" in capsys.readouterr().err
    finished = {row["row"]: row for row in result.cells}
    resumed = mlflow.get_run(finished["+TO"]["run_id"])
    assert resumed.info.status == "FINISHED" and resumed.data.tags[ledger.LEDGER_TAG] == entry.key
    history = mlflow.MlflowClient().get_metric_history(resumed.info.run_id, tracking.STEP_MARKER)
    steps = sorted(metric.step for metric in history)
    assert steps[0] == checkpoints[0] == 0 and steps[-1] > 0  # step 0 from the ledger, the rest resumed here
    assert len(scripted) > sessions

    ledger.write(ledger.entry_of(resumed.info.run_id))  # the finished run replaces the interrupted entry
    assert ledger.find(improved.plan.definition).status == "finished"
    _fresh_store(tmp_path, monkeypatch, "third-machine")
    monkeypatch.setattr(comparing, "run_missing", lambda plan, settings: pytest.fail(f"ran {plan.label}"))
    assert {row["row"]: row["state"] for row in reproduce.status(options)}["+TO"] == "finished"


def test_outcomes_read_from_an_entry_pair_with_the_runs(tmp_path):
    result = evaluate.run(evaluate.EvaluateOptions(agent="oracle", limit=3, progress=False))
    entry = ledger.entry_of(result.run_id)
    kept = entry.artifacts["outcomes.json"]
    outcomes = Outcomes.from_json(kept["splits"][kept["result"]], 0)
    assert len(outcomes.tasks) == 3 and all(task.metrics["E"] == 1.0 for task in outcomes.tasks)
    assert all(task.usage["tokens"] == 0 and task.usage["seconds"] >= 0 for task in outcomes.tasks)  # no model called


ROOT = Path(__file__).resolve().parents[1]


def test_every_rendered_table_is_what_the_committed_ledger_renders():
    pages = render(ROOT, ROOT / "results", write=False)
    assert {page.path.name for page in pages} >= {"README.md", "reproduce.md"}
    assert [str(page.path) for page in pages if page.changed] == [], "run: python -m otbench.results render"


def test_a_hand_edit_inside_a_rendered_region_is_caught(tmp_path):
    page = tmp_path / "page.md"
    rendered = render_page(ROOT / "README.md", ROOT / "results").text
    page.write_text(rendered)
    assert not render_page(page, ROOT / "results").changed
    start = rendered.index("<!-- results: ")
    edited = rendered[:start] + rendered[start:].replace("|", "| 0.999 |", 1)
    page.write_text(edited)
    assert render_page(page, ROOT / "results").changed


def _whole_and_stopped_evaluation(tmp_path, monkeypatch, store):
    """An 8-task evaluation run to the end, and the same one in a fresh ``store`` stopped by a Ctrl-C after its first
    keep (every 5 tasks): the finished result and the stopped MLflow run."""
    _script_models(monkeypatch, {"agent": every_role_reply})
    whole = evaluate.run(evaluate.EvaluateOptions(limit=8, progress=False))
    _fresh_store(tmp_path, monkeypatch, store)
    calls = {"n": 0}

    def stopping_reply(messages):
        calls["n"] += 1
        if calls["n"] == 7:
            raise KeyboardInterrupt
        return every_role_reply(messages)

    _script_models(monkeypatch, {"agent": stopping_reply})
    with pytest.raises(KeyboardInterrupt):
        evaluate.run(evaluate.EvaluateOptions(limit=8, progress=False))
    _script_models(monkeypatch, {"agent": every_role_reply})
    return whole, mlflow.search_runs(experiment_names=["otbench"], output_format="list")[0]


def test_a_resumed_evaluation_counts_the_tokens_and_seconds_of_every_segment(tmp_path, monkeypatch):
    whole, stopped = _whole_and_stopped_evaluation(tmp_path, monkeypatch, "stopped-machine")
    earlier = stopped.data.metrics["seconds"]
    resumed = evaluate.run(evaluate.EvaluateOptions(limit=8, progress=False, resume=stopped.info.run_id))
    assert resumed.run_id == stopped.info.run_id
    # the tasks finished before the stop are not run again, and their calls are still counted
    assert resumed.tokens_by_phase["all"]["calls"] >= whole.tokens_by_phase["all"]["calls"]
    assert resumed.tokens_by_phase["all"]["total_tokens"] >= whole.tokens_by_phase["all"]["total_tokens"]
    assert mlflow.get_run(resumed.run_id).data.metrics["seconds"] >= earlier


def test_an_evaluation_killed_outright_resumes_from_the_ledger_with_the_tokens_it_had_spent(tmp_path, monkeypatch):
    """A killed evaluation logged no ``tokens.json``, only its last keep's tasks and tokens: the ledger keeps both, so
    the resume on another checkout counts the earlier segment's tokens too."""
    from urllib.parse import urlparse

    from otbench.run.evaluation import SPENT

    whole, stopped = _whole_and_stopped_evaluation(tmp_path, monkeypatch, "killed-machine")
    (Path(urlparse(stopped.info.artifact_uri).path) / "tokens.json").unlink()  # a kill never writes it
    entry = ledger.entry_of(stopped.info.run_id)
    assert entry.status == "interrupted" and "tokens.json" not in entry.artifacts
    assert entry.resume[SPENT]["tokens_by_phase"]["all"]["calls"] >= 5  # and any call in flight at the keep
    ledger.write(entry)

    _fresh_store(tmp_path, monkeypatch, "next-machine")
    resumed = evaluate.run(evaluate.EvaluateOptions(limit=8, progress=False, resume=ledger.load(entry)))
    # 3 tasks ran here; without the earlier segment's tokens the resume would count only theirs
    assert resumed.tokens_by_phase["all"]["calls"] >= whole.tokens_by_phase["all"]["calls"] == 8
    assert resumed.tokens_by_phase["all"]["total_tokens"] >= whole.tokens_by_phase["all"]["total_tokens"]


def test_an_optimize_run_stopped_while_scoring_its_test_tasks_resumes_from_the_ledger_after_them(
        offline_toy, tmp_path, monkeypatch, capsys):  # noqa: F811 - the fixture
    """An offline run scores its learned docs on the test tasks after learning, an hour of BrowseComp questions on a
    small machine: a stop keeps the tasks scored, the ledger keeps them with the spend, and the resume on another
    checkout scores only the others and counts every segment's tokens."""
    from otbench.run.evaluation import PARTIAL, SPENT, TaskKeeper

    agent_calls = {"n": 0}

    def counted_agent(messages):
        agent_calls["n"] += 1
        return docs_aware_agent_reply(messages)

    _script_models(monkeypatch, {"agent": counted_agent, "exploration": any_role_reply, "editor": _adds_editor})
    argv = ["--env", "toy", "--optimizer", "toolobserver", "--limit", "2", "--test-limit", "6", "--num-threads", "1",
            "--json", "--quiet", "--out", str(tmp_path)]
    with pytest.raises(SystemExit):
        run_main(optimize.main, argv)
    whole = json.loads(capsys.readouterr().out)
    assert whole["test"]["E"] == 1.0

    _fresh_store(tmp_path, monkeypatch, "stopped-machine")
    real_keep, kept = TaskKeeper.keep, []

    def stopping_keep(keeper):
        real_keep(keeper)
        kept.append(len(keeper.kept))
        if len(kept) == 1:  # a Ctrl-C right after the first keep (5 tasks)
            raise KeyboardInterrupt

    monkeypatch.setattr(TaskKeeper, "keep", stopping_keep)
    with pytest.raises(KeyboardInterrupt):
        optimize.main(argv)
    monkeypatch.setattr(TaskKeeper, "keep", real_keep)
    stopped = mlflow.search_runs(experiment_names=["otbench"], output_format="list")[0]
    entry = ledger.entry_of(stopped.info.run_id)
    assert entry.status == "interrupted" and len(entry.resume[PARTIAL]) == kept[-1] >= 5
    assert entry.resume[SPENT]["tokens_by_phase"]["all"]["calls"] > entry.resume["checkpoint.json"]["tokens"]["all"][
        "calls"]
    ledger.write(entry)

    _fresh_store(tmp_path, monkeypatch, "next-machine")
    agent_calls["n"] = 0
    resumed = optimization.resume(ledger.load(entry), RunSettings(progress=False))
    assert agent_calls["n"] == 6 - kept[-1]  # only the test tasks not scored before the stop
    assert resumed.test["E"] == 1.0 and mlflow.get_run(resumed.run_id).data.metrics["test_n"] == 6
    assert resumed.tokens_by_phase["all"]["total_tokens"] >= whole["tokens_by_phase"]["all"]["total_tokens"]


def test_entries_side_by_side_render_as_one_comparison_of_their_rows():
    """A study outside the grid is cited from its runs: ``runs/KEY.KEY`` renders them as a comparison."""
    committed = ROOT / "results"
    rendered = table("runs/dd08aee4.bff58e1c", committed)
    rows = [line.split(" | ")[0].strip("| ") for line in rendered.splitlines()[2:4]]
    assert rows == ["base", "gold"] and "+0.193 [0.127, 0.267] *" in rendered and "| dd08aee4 |" in rendered
    # both on the whole test split: base's tasks recorded the seed 1 it was given, gold's 0, and they still pair
    assert "+0.807 [0.747, 0.867] *" in table("runs/5ca5ac38.bff58e1c", committed)
    with pytest.raises(ConfigError, match="one environment and setting"):
        table("runs/dd08aee4.5ca5ac38", committed)  # names_params beside names_only
    with pytest.raises(ConfigError, match="'0000000000' names no one finished ledger entry"):
        table("runs/dd08aee4.0000000000", committed)


def test_an_interrupted_entry_costs_what_it_had_spent():
    """The grid's cost table counts an interrupted cell as far as it got: by what it had spent when it last kept its
    finished tasks (an evaluation, or an optimize run scoring its test tasks), else by its last checkpoint."""
    from dataclasses import replace

    from otbench.study.rendered import _cost

    finished = ledger.starting_with("0f32e2bb", ROOT / "results")[0]
    phases = {"all": {"total_tokens": 900, "cached_tokens": 100}}
    optimizing = replace(finished, status="interrupted", tokens_by_phase={}, seconds=None,
                         resume={"checkpoint.json": {"tokens": phases, "elapsed_seconds": 1800.0}})
    assert (_cost(optimizing)["tokens"], _cost(optimizing)["hours"]) == ("1,000", "0.50")
    scoring = {"tokens_by_phase": {"all": {"total_tokens": 40, "cached_tokens": 2}}, "seconds": 720.0}
    testing = replace(optimizing, resume={**optimizing.resume, "partial_tokens.json": scoring})
    assert (_cost(testing)["tokens"], _cost(testing)["hours"]) == ("42", "0.20")
    evaluating = replace(optimizing, resume={"partial_trajectories.jsonl": [{}], "partial_tokens.json": scoring})
    assert (_cost(evaluating)["tokens"], _cost(evaluating)["hours"]) == ("42", "0.20")
    defined = replace(optimizing, resume={"definition.json": {}})  # stopped before its first checkpoint
    assert (_cost(defined)["tokens"], _cost(defined)["hours"]) == ("0", "-")


def test_a_resumed_run_loads_with_the_figures_it_ended_with(tmp_path, monkeypatch):
    """A resumed run logs its summary at step 0 once per segment, the stopped segment's first; loaded elsewhere, the
    run's figures are the last segment's, as in its own store, even where an earlier segment's is higher (at one
    step and one time, MLflow takes the highest)."""
    from dataclasses import replace

    result = evaluate.run(evaluate.EvaluateOptions(agent="oracle", limit=3, seed=4, progress=False))
    ended = mlflow.get_run(result.run_id).data.metrics
    kept = ledger.entry_of(result.run_id)
    entry = replace(kept, history={**kept.history, "E": [[0, ended["E"] + 0.5], [0, ended["E"]]]})
    ledger.write(entry)

    _fresh_store(tmp_path, monkeypatch, "elsewhere")
    assert mlflow.get_run(ledger.load(entry)).data.metrics == ended


def test_the_cost_table_totals_the_grid_once_every_cell_is_in():
    from otbench.study.rendered import _grid_total

    assert _grid_total(19, 20, 8_229_767, 24.76) == ("19 of 20 cells finished; 8,229,767 tokens and 24.76 hours in the "
                                                     "ledger so far (interrupted cells count what they spent).")
    assert _grid_total(20, 20, 8_474_502, 25.54) == "All 20 cells finished: the grid took 8,474,502 tokens and 25.54 hours."


def test_a_settings_figures_are_drawn_by_render_and_named_by_what_they_show(tmp_path):
    """``render`` draws the figures a page shows; ``--check`` draws nothing and reports a page whose figures are not
    there (their names carry their data's digest, so figures of older data do not pass for the ledger's)."""
    page = tmp_path / "docs" / "results.md"
    page.parent.mkdir()
    page.write_text("# Figures\n\n<!-- results: grid/full/bfcl/names_desc/plots -->\n<!-- /results -->\n")
    figures = tmp_path / "docs" / "images" / "grid"
    figures.mkdir(parents=True)
    (figures / "bfcl-names_desc-0123456789-E-by-row.png").write_bytes(b"older data")
    (figures / "bfcl-names_descriptions-note.png").write_bytes(b"not one of its figures")

    checked = render(tmp_path, ROOT / "results", write=False)
    assert [page.changed for page in checked] == [True]
    assert sorted(path.name for path in figures.iterdir()) == ["bfcl-names_desc-0123456789-E-by-row.png",
                                                             "bfcl-names_descriptions-note.png"]

    render(tmp_path, ROOT / "results", write=True)
    links = [line for line in page.read_text().splitlines() if line.startswith("![")]
    assert [line.split("](")[1].rstrip(")").rsplit("-", 2)[1:] for line in links] == [["vs", "tokens.png"],
                                                                                         ["by", "row.png"]]
    drawn = sorted(path.name for path in figures.iterdir())
    assert len(drawn) == 3 and "bfcl-names_descriptions-note.png" in drawn
    assert all((page.parent / line.split("](")[1].rstrip(")")).read_bytes().startswith(b"\x89PNG") for line in links)
    assert [page.changed for page in render(tmp_path, ROOT / "results", write=False)] == [False]


def test_every_checked_figure_is_one_its_sources_give():
    """A figure the prose cites between ``<!-- figures: SOURCES -->`` markers is checked against those sources, as
    ``otbench results render --check`` checks it."""
    from otbench.study.figures import check_pages

    assert [str(figure) for figure in check_pages(ROOT, ROOT / "results")] == []


def test_a_figure_its_sources_do_not_give_is_named_with_its_line(tmp_path):
    from otbench.study.figures import check_page, matches

    page = tmp_path / "page.md"
    page.write_text("# A page\n\n<!-- figures: runs/7fbf5c3f code/otbench.evals.stats.CONFIDENCE -->\n"
                    "E goes from 0.00 [0.00, 0.28] to 0.80 [0.49, 0.94] (95% intervals), 8 tests gained\n"
                    "(p = 0.008), for 10,360 tokens, `--limit 10` in code and GPT-5 as names aside;\n"
                    "a hand edit says 0.81 and 10,460.\n<!-- /figures -->\n")
    unfound = check_page(page, ROOT / "results")
    assert [(figure.line, figure.figure) for figure in unfound] == [(6, "0.81"), (6, "10,460")]
    assert matches("77%", [0.7704]) and not matches("77%", [0.7804]) and matches("-0.593", [0.5933])


def test_a_kept_benchmark_output_checks_the_figures_that_cite_it(tmp_path):
    """``bench/NAME``: what a benchmark printed, kept with its command (``--keep NAME``), is a page's source."""
    from otbench.study.figures import check_page, keep_benchmark

    results = tmp_path / "results"
    kept = keep_benchmark("retrieval-30", "python benchmarks/pool_retrieval.py --sizes 30 --keep retrieval-30",
                          [{"pool": "30", "n": 73, "recall_at_5": {"value": 0.1918, "low": 0.1064, "high": 0.2772}}],
                          results)
    assert json.loads(kept.read_text())["command"].endswith("--keep retrieval-30")
    page = tmp_path / "page.md"
    page.write_text("<!-- figures: bench/retrieval-30 -->\nOver 73 requests recall@5 is 0.192 [0.11, 0.28], not 0.25.\n"
                    "<!-- /figures -->\n")
    assert [(figure.line, figure.figure) for figure in check_page(page, results)] == [(2, "0.25")]
    with pytest.raises(ConfigError):
        keep_benchmark("../elsewhere", "python x.py", [], results)
