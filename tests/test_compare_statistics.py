"""``compare`` from finished runs that kept their per-task outcomes: every metric with its interval, each row's
paired difference to base and to +TO marked where it holds after Holm, pooled samples, warnings, and --plan."""

import json

import mlflow
import pytest
from test_compare import BfclLike, _ledger, _log_run

from otbench import compare
from otbench.envs.base import sample_tasks
from otbench.envs.bfcl.env import BfclEnvironment
from otbench.evals import stats
from otbench.exits import run_main
from otbench.modules.tool_docs import DocumentedTool, Toolbox
from otbench.study import comparing, comparison

LIMIT = 30


def _outcomes(tests, passed, seed):
    """An ``outcomes.json`` where the first ``passed`` of ``tests`` scored E = P = 1 and the rest 0."""
    records = [{"task": test, "sample": seed, "metrics": {"E": float(i < passed), "P": float(i < passed),
                                                          "A": 0.5 + 0.5 * (i < passed)}}
               for i, test in enumerate(tests)]
    return json.dumps({"result": "result", "splits": {"result": records}})


def _prelog(seed, passed, commits=None):
    """Finished base, gold, +TO (paper) and +TO runs on BFCL names_only, LIMIT tests of sample ``seed``, each logged
    with its definition (as the commands log it) and per-task outcomes (``passed``: row -> how many tests it
    passed, the same first ones in every row; ``commits``: row -> the code version its run records, as MLflow
    records it for a run started from a git checkout)."""
    with BfclEnvironment(setting="names_only") as env:
        tests = [test.id for test in sample_tasks(env.tasks(), LIMIT, seed)]
        gold_docs = env.toolbox("gold")
    learned = Toolbox({test: [DocumentedTool("function_1", description=gold_docs.toolset(test)[0].description)]
                       for test in tests})
    options = compare.options_from(vars(compare.build_parser().parse_args(
        ["--limit", str(LIMIT), "--seed", str(seed), "--optimizers", "toolobserver"])))
    for plan in comparing.plan_rows(options, BfclLike()):
        defined = plan.definition
        setting = "gold" if defined.setting == "gold" else "names_only"
        mean = passed[plan.label] / LIMIT
        records = json.loads(_outcomes(tests, passed[plan.label], seed))["splits"]["result"]
        tags = defined.tags(setting) | ({comparison.CODE_VERSION_TAGS[1]: commits[plan.label]} if commits else {})
        params = defined.params(setting, learning="online")
        if plan.command == "evaluate":
            _log_run(tags, params, {"E": mean, "P": mean, "A": 0.5 + mean / 2},
                     artifacts={"tokens.json": _ledger(1000), "outcomes.json": _outcomes(tests, passed[plan.label], seed)})
        else:
            _log_run(tags, params, {"final_E": mean, "final_P": mean, "final_A": 0.5 + mean / 2}, history=[0.0, mean],
                     artifacts={"summary.json": _ledger(8000), "docs/final_docs.json": json.dumps(learned.to_json()),
                                "outcomes.json": json.dumps({"result": "after", "splits": {"after": records}})})


def _compare(argv, capsys, monkeypatch):
    monkeypatch.setattr(comparing, "run_missing", lambda plan, settings: pytest.fail(f"ran {plan.label}"))  # every row is reused: running one would fail the test
    with pytest.raises(SystemExit) as stop:
        run_main(compare.main, ["--limit", str(LIMIT), "--optimizers", "toolobserver", *argv])
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    return captured.out, captured.err


def test_rows_carry_intervals_and_paired_differences_marked_where_they_hold(tmp_path, monkeypatch, capsys):
    _prelog(seed=11, passed={"base": 0, "gold": 27, "+TO (paper)": 5, "+TO": 20})
    out, _ = _compare(["--seed", "11", "--plots", str(tmp_path), "--json"], capsys, monkeypatch)
    rows = {row["row"]: row for row in json.loads(out)["rows"]}
    learned = rows["+TO"]
    assert (learned["E"], learned["E_n"], learned["E_interval"]) == (pytest.approx(20 / 30), 30, "wilson")
    assert (learned["E_ci_low"], learned["E_ci_high"]) == (pytest.approx(stats.wilson(20, 30).low),
                                                           pytest.approx(stats.wilson(20, 30).high))
    assert learned["vs_base"]["test"] == "exact McNemar" and learned["vs_base"]["holds"]
    assert learned["vs_base"]["value"] == pytest.approx(20 / 30)
    # 5 discordant tests: p = 2 / 2**5 = 0.0625 before adjustment, so it cannot hold
    paper = rows["+TO (paper)"]
    assert paper["vs_base"]["p_value"] == pytest.approx(0.0625) and not paper["vs_base"]["holds"]
    assert paper["vs_TO"]["holds"] and rows["gold"]["vs_TO"]["value"] == pytest.approx(7 / 30)
    assert rows["base"]["vs_TO"] is None and rows["+TO"]["vs_TO"] is None  # tested once, as +TO against base
    assert learned["gap_share"]["value"] == pytest.approx(20 / 27) and rows["base"]["gap_share"] is None
    assert all(row["outcomes"] for row in rows.values())

    out, err = _compare(["--seed", "11", "--plots", str(tmp_path)], capsys, monkeypatch)
    line = next(line for line in out.splitlines() if line.startswith("+TO  "))
    assert "0.667 [0.488, 0.808]" in line and "+0.667 [" in line and "] *" in line
    assert "* where it holds" in out and not err
    run = mlflow.get_run(out.split("MLflow run: ")[1].split()[0])
    table = json.loads(mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/comparison.json"))
    flat = {values[table["columns"].index("row")]: dict(zip(table["columns"], values, strict=True))
            for values in table["data"]}
    assert flat["+TO"]["vs_base_holds"] is True and flat["+TO"]["E_ci_low"] == pytest.approx(learned["E_ci_low"])
    assert "[0.488, 0.808]" in mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/comparison.md")
    assert (tmp_path / "bfcl-names_only-E-by-row.png").is_file()


def test_a_table_whose_rows_cannot_be_told_apart_says_so(tmp_path, monkeypatch, capsys):
    _prelog(seed=12, passed={"base": 3, "gold": 5, "+TO (paper)": 3, "+TO": 4})
    _, err = _compare(["--seed", "12", "--plots", str(tmp_path)], capsys, monkeypatch)
    assert "no difference in this table holds" in err and "detect only a rise of" in err


def test_a_table_of_runs_from_different_code_versions_says_which_rows_come_from_which(tmp_path, monkeypatch,
                                                                                     capsys):
    older, newer = "a" * 40, "b" * 40
    _prelog(seed=13, passed={"base": 0, "gold": 27, "+TO (paper)": 5, "+TO": 20},
            commits={"base": older, "gold": older, "+TO (paper)": older, "+TO": newer})
    _, err = _compare(["--seed", "13", "--plots", str(tmp_path)], capsys, monkeypatch)
    assert ("recorded on 2 versions of the code (aaaaaaa: base, gold, +TO (paper); bbbbbbb: +TO)" in err
            and "may come from the code as well as the docs" in err)


def test_runs_of_one_code_version_draw_no_warning_about_versions(tmp_path, monkeypatch, capsys):
    _prelog(seed=14, passed={"base": 0, "gold": 27, "+TO (paper)": 5, "+TO": 20},
            commits=dict.fromkeys(["base", "gold", "+TO (paper)", "+TO"], "c" * 40))
    _, err = _compare(["--seed", "14", "--plots", str(tmp_path)], capsys, monkeypatch)
    assert "versions of the code" not in err


def test_seeds_pool_samples_as_clusters_with_their_spread(tmp_path, monkeypatch, capsys):
    for seed, learned in ((21, 18), (22, 24)):
        _prelog(seed=seed, passed={"base": 1, "gold": 27, "+TO (paper)": 6, "+TO": learned})
    out, err = _compare(["--seeds", "21,22", "--plots", str(tmp_path), "--json"], capsys, monkeypatch)
    result = json.loads(out)
    rows = {row["row"]: row for row in result["rows"]}
    assert result["seeds"] == [21, 22] and rows["+TO"]["E_n"] == 60
    assert rows["+TO"]["E"] == pytest.approx(42 / 60) and rows["+TO"]["E_by_sample"] == {"21": 0.6, "22": 0.8}
    assert rows["+TO"]["E_sd"] == pytest.approx(0.1414, abs=1e-3) and rows["+TO"]["E_interval"] == "cluster-robust t"
    assert rows["+TO"]["vs_base"]["clusters"] == 2 and not rows["+TO"]["vs_base"]["holds"]
    assert len(rows["+TO"]["run_id"].split(",")) == 2
    assert "cannot separate its rows" in err and "on 2 independent units (samples)" in err


def test_plan_sizes_a_comparison_before_any_run(tmp_path, monkeypatch, capsys):
    out, _ = _compare(["--plan", "--base-rate", "0.188", "--difference", "0.015"], capsys, monkeypatch)
    assert "30 tasks per row (150 available); 5 paired tests in the table (Holm)" in out
    assert "base rate 0.188 (assumed: --base-rate)" in out
    needed = stats.tasks_needed(0.188, 0.015)
    assert f"tasks per row to detect +0.015 at alpha 0.05: {needed:,.0f}: more than the 150" in out
    _prelog(seed=13, passed={"base": 3, "gold": 27, "+TO (paper)": 6, "+TO": 20})
    out, _ = _compare(["--plan", "--seed", "13", "--json"], capsys, monkeypatch)
    planned = json.loads(out)
    assert planned["base_rate"] == pytest.approx(0.1) and planned["base_from"].startswith("observed: base run")
    assert planned["detectable"]["0.05"] == pytest.approx(stats.detectable_difference(30, 0.1))


def test_plan_without_a_base_rate_to_go_by_is_refused_on_one_line(monkeypatch, capsys):
    monkeypatch.setattr(comparing, "run_missing", lambda plan, settings: pytest.fail(f"ran {plan.label}"))
    with pytest.raises(SystemExit) as stop:
        run_main(compare.main, ["--plan", "--seed", "99"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "give --base-rate" in err and len(err.strip().splitlines()) == 1


def test_plan_of_a_share_of_moves_asks_for_the_spread_of_its_differences(monkeypatch, capsys):
    """Chess's % optimal tool is a ratio over moves clustered by game: before any run it is planned from the spread
    of per-game differences, never as a share of games passed."""
    monkeypatch.setattr(comparing, "run_missing", lambda plan, settings: pytest.fail(f"ran {plan.label}"))
    with pytest.raises(SystemExit) as stop:
        run_main(compare.main, ["--env", "chess", "--plan", "--test-limit", "12", "--base-rate", "0.45", "--seed", "99"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "give --spread" in err and len(err.strip().splitlines()) == 1
    out, _ = _compare(["--env", "chess", "--plan", "--test-limit", "12", "--base-rate", "0.45", "--spread", "20",
                       "--seed", "99"], capsys, monkeypatch)
    assert "optimal_pct (continuous, per-task differences' spread 20)" in out
    assert f"80% power at alpha 0.05: {stats.detectable_mean_difference(12, 20.0):.3f}" in out
