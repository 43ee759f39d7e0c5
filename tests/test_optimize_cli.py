"""``otbench.optimize`` end to end on BFCL with scripted LMs: every optimizer runs, logs and saves docs."""

import json
import re
from contextlib import contextmanager

import mlflow
import pytest
from scripted_lm import prompt_text, scripted_lm, shown_tool_names

from otbench import optimize
from otbench.exits import run_main
from otbench.run import optimization


def any_role_reply(messages):
    """A scripted model that answers every prompt of the three optimizers with well-formed JSON."""
    content = prompt_text(messages)
    if '{"calls"' in content:
        return json.dumps({"calls": [{"name": shown_tool_names(messages)[0], "arguments": {}}]})
    if '{"updates"' in content:
        name = re.search(r'Call 1: ([A-Za-z0-9_]+)\(', content)
        return json.dumps({"updates": [{"name": name.group(1), "description": "Learned doc."}] if name else []})
    if '{"purpose"' in content:
        return json.dumps({"purpose": "Does something."})
    if '{"scenario"' in content:
        return json.dumps({"scenario": "when asked", "example_arguments": {}})
    if '{"arguments"' in content:
        return json.dumps({"arguments": {}})
    if '{"query"' in content:
        return json.dumps({"query": "do it"})
    if '{"score"' in content:
        return json.dumps({"score": 5})
    return json.dumps({"description": "Refined doc."})


@pytest.fixture
def scripted_lms(monkeypatch):
    @contextmanager
    def open_scripted(options, ledger, phases=("agent",)):
        yield {phase: scripted_lm(any_role_reply, ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(optimization, "open_lms", open_scripted)


def test_the_paper_variant_reports_its_starting_docs_as_before(scripted_lms, tmp_path, capsys):
    argv = ["--limit", "2", "--iterations", "1", "--variant", "paper", "--json", "--quiet", "--out", str(tmp_path)]
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, argv)
    assert stop.value.code == 0
    assert set(json.loads(capsys.readouterr().out)["before"]) == {"E", "P", "A"}


def test_the_main_command_prints_the_starting_docs_before_the_learned_ones(scripted_lms, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, ["--optimizer", "toolobserver", "--limit", "2", "--iterations", "1", "--quiet",
                                 "--out", str(tmp_path)])
    assert stop.value.code == 0
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()[:4]]
    assert rows[0] == "docs" and rows[2:4] == ["before", "after"]


@pytest.mark.parametrize("optimizer, phases, extra, scored_apart", [
    # No scripted call works, so ToolObserver would write no doc (--grounded): editing is asked for anyway. Its
    # first attempts are made with the starting docs (--start-docs-first), so they are its "before" row.
    ("toolobserver", {"agent", "editor"}, ["--no-grounded", "--iterations", "3"], False),
    # Showing the probed schema from the first attempt on, it scores the starting docs apart.
    ("toolobserver", {"agent", "editor"}, ["--no-grounded", "--iterations", "3", "--no-start-docs-first"], True),
    ("easytool", {"agent", "editor"}, [], True),
    # Calls without arguments fail on these tests, so play finds no example and nothing is rewritten.
    ("play2prompt", {"agent", "exploration"}, ["--p2p-samples", "1"], True),
    ("gepa", {"agent", "exploration", "editor"}, [], True),
])
def test_every_optimizer_runs_logs_and_saves_docs(optimizer, phases, extra, scored_apart, scripted_lms, tmp_path,
                                                  capsys):
    argv = ["--optimizer", optimizer, "--limit", "2", "--json", "--quiet", "--out", str(tmp_path), *extra]
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, argv)
    assert stop.value.code == 0, capsys.readouterr().err
    summary = json.loads(capsys.readouterr().out)
    assert summary["optimizer"] == optimizer and summary["n"] == 2
    assert set(summary["after"]) == {"E", "P", "A"}
    # An optimizer whose first step does not score the starting docs has them scored apart, on the same tasks, for
    # the "before" row; one whose first attempts were made with them reads the row from those attempts.
    assert set(summary["before"]) == {"E", "P", "A"}
    paid = {phase for phase, row in summary["tokens_by_phase"].items() if row["total_tokens"] and phase != "all"}
    start = summary["tokens_by_phase"].get("start_docs", {"total_tokens": 0, "cached_tokens": 0})
    if scored_apart:
        assert mlflow.artifacts.load_text(f"runs:/{summary['run_id']}/start_docs_trajectories.jsonl").count("\n") == 1
        assert paid == {*phases, "start_docs"}  # the "before" scoring, charged apart: not the row's cost
        assert start["total_tokens"] + start["cached_tokens"] > 0
    else:
        assert "start_docs_trajectories.jsonl" not in {a.path for a in mlflow.MlflowClient().list_artifacts(
            summary["run_id"])}
        assert paid == phases  # no prompt of the starting docs is processed twice
    logged = mlflow.get_run(summary["run_id"]).data.metrics["result/tokens"]
    all_tokens = summary["tokens_by_phase"]["all"]
    assert logged == all_tokens["total_tokens"] + all_tokens["cached_tokens"] - start["total_tokens"] - start["cached_tokens"]
    run = mlflow.get_run(summary["run_id"])
    assert run.data.tags["optimizer"] == optimizer and run.info.status == "FINISHED"
    assert "final_E" in run.data.metrics
    assert (tmp_path / summary["run_id"] / "final_docs.json").exists()


def _sweep(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, ["--limit", "1", "--json", "--quiet", *argv])
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


def test_a_sweep_runs_nested_trials_and_reports_the_best(scripted_lms, tmp_path, capsys):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    code, out, err = _sweep(["--sweep", "2", "--storage", storage, "--study-name", "s", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    sweep = json.loads(out)
    assert [t["state"] for t in sweep["trials"]] == ["COMPLETE", "COMPLETE"]
    assert {"iterations", "E", "tokens"} <= set(sweep["best"])
    for trial in sweep["trials"]:
        assert mlflow.get_run(trial["run_id"]).data.tags["mlflow.parentRunId"] == sweep["sweep_run_id"]
    # A second worker joins the same study through the shared storage.
    code, out, _ = _sweep(["--sweep", "1", "--storage", storage, "--study-name", "s", "--out", str(tmp_path)], capsys)
    assert code == 0 and len(json.loads(out)["trials"]) == 3


def test_a_sweep_stops_at_the_token_budget(scripted_lms, tmp_path, capsys):
    code, out, err = _sweep(["--sweep", "5", "--token-budget", "1", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    states = [t["state"] for t in json.loads(out)["trials"]]
    assert states == ["COMPLETE"]


def test_sweeping_an_optimizer_without_knobs_is_a_user_error(capsys):
    code, _, err = _sweep(["--optimizer", "easytool", "--sweep", "2"], capsys)
    assert code == 2 and "easytool has no knobs" in err


def test_runs_are_named_to_be_told_apart_and_log_only_what_defines_them(scripted_lms, tmp_path, capsys):
    argv = ["--limit", "2", "--iterations", "2", "--json", "--quiet", "--out", str(tmp_path)]
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, argv)
    assert stop.value.code == 0, capsys.readouterr().err
    run = mlflow.get_run(json.loads(capsys.readouterr().out)["run_id"])
    assert re.fullmatch(r"toolobserver-bfcl-names_only-n2-qwen-1\.5b-\d{4}-\d{6}", run.info.run_name)
    params = run.data.params
    assert {"method", "limit", "seed", "setting", "variant", "iterations", "lm"} <= set(params)
    assert params["method"] == "+TO" and params["variant"] == "improved"
    assert not {name for name in params if name.startswith("p2p_")}
    assert not {"max_moves", "retriever", "batch_size", "test_limit", "num_threads"} & set(params)
    # unset options and ToolObserver's options at their default say nothing the method does not
    assert not {"probe", "per_tool", "oracle_feedback", "mode", "editor_lm", "faults"} & set(params)


def test_every_step_shows_what_changed_in_the_docs_and_the_editor_exchanges_as_markdown(scripted_lms, tmp_path,
                                                                                         capsys):
    argv = ["--limit", "2", "--iterations", "2", "--variant", "paper", "--json", "--quiet", "--out", str(tmp_path)]
    with pytest.raises(SystemExit):
        run_main(optimize.main, argv)
    run_id = json.loads(capsys.readouterr().out)["run_id"]

    def artifact(path):
        return mlflow.artifacts.load_text(f"runs:/{run_id}/{path}")

    docs = json.loads(artifact("iterations/step_01/docs.json"))
    assert len(docs["toolsets"]) == 2 == len(docs["meta"]["optimized_toolsets"])  # not all 150 of BFCL
    diff = artifact("iterations/step_01/docs_diff.md")
    assert diff.startswith("# step 1 against step 0: ") and "```diff\n" in diff
    assert "-description: \n+description: Learned doc." in diff
    editor = artifact("iterations/step_01/editor.md")
    assert editor.startswith("# step 1: ") and "### prompt\n\n```text\n" in editor


def test_a_run_registers_each_optimized_toolsets_docs_as_a_prompt_version(scripted_lms, tmp_path, capsys):
    from otbench.run.docs_io import load_docs

    argv = ["--limit", "2", "--iterations", "1", "--json", "--quiet", "--out", str(tmp_path)]
    summaries = []
    for _ in range(2):
        with pytest.raises(SystemExit):
            run_main(optimize.main, argv)
        summaries.append(json.loads(capsys.readouterr().out.splitlines()[-1]))
    first, second = summaries
    toolsets = json.loads((tmp_path / second["run_id"] / "final_docs.json").read_text())["meta"]["optimized_toolsets"]
    assert sorted(second["prompts"]) == sorted(toolsets) and len(toolsets) == 2
    for toolset, uri in second["prompts"].items():
        name, version = uri.removeprefix("prompts:/").split("/")
        assert name == f"otbench.bfcl.names_only.{toolset}"
        assert int(version) == int(first["prompts"][toolset].split("/")[-1]) + 1  # one version per run
        latest = load_docs(f"prompts:/{name}@latest")
        assert latest.toolset_ids() == [toolset] and latest.toolset(toolset)[0].name == "function_1"


@pytest.mark.parametrize(("argv", "message"), [
    (["--resume", "0123456789abcdef", "--env", "pool"], "--env would be ignored"),
    (["--resume", "0123456789abcdef", "--limit", "3"], "--limit would be ignored"),
    (["--resume", "0123456789abcdef", "--optimizer", "gepa"], "--optimizer would be ignored"),
    (["--resume", "0123456789abcdef", "--batch-size", "4"], "--batch-size would be ignored"),
    (["--batch-size", "4"], "--batch-size acts only in offline learning; this run learns online"),
    (["--env", "chess", "--request-values"], "--request-values acts only in online learning; this run learns offline"),
])
def test_a_flag_the_run_would_ignore_is_refused_before_anything_is_written(argv, message, tmp_path, capsys):
    store = tmp_path / "store"
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, [*argv, "--mlruns", str(store)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and err.count("\n") == 1 and not store.exists(), err
