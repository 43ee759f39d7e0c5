"""``optimize --coverage-from RUN_ID``: a second optimizer goes on from the first's coverage pass, the same help and
not paid again. Scripted LMs on a toolkit family; the pass itself is tested in ``test_coverage.py``."""

import json
import re
from contextlib import contextmanager

import mlflow
import pytest
from scripted_lm import prompt_text, scripted_lm
from test_optimize_cli import any_role_reply

from otbench import optimize
from otbench.exits import REFUSED_EXIT, run_main
from otbench.run import optimization
from otbench.run.checkpoints import COVERAGE_CHECKPOINT

COMMON = ["--env", "toolkit", "--toolkit", "inventory", "--setting", "names_only", "--limit", "2", "--test-limit", "2",
          "--json", "--quiet"]


@pytest.fixture
def batches(monkeypatch):
    """The tools of every coverage batch the editor is asked to describe, in order (scripted LMs for every phase)."""
    asked: list[list[str]] = []

    def reply(messages):
        text = prompt_text(messages)
        names = re.findall(r"^Tool: (\S+)", text, re.MULTILINE)
        if names:
            asked.append(names)
            return json.dumps({"tools": [{"name": name, "description": f"Learned by the pass for {name}."}
                                         for name in names]})
        return any_role_reply(messages)

    @contextmanager
    def open_scripted(options, ledger, phases=("agent",)):
        yield {phase: scripted_lm(reply, ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(optimization, "open_lms", open_scripted)
    return asked


def _optimize(argv, tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        run_main(optimize.main, [*argv, "--out", str(tmp_path)])
    captured = capsys.readouterr()
    return done.value.code, captured.out, captured.err


def test_a_second_optimizer_goes_on_from_the_first_s_pass_without_paying_for_it(batches, tmp_path, capsys):
    code, out, err = _optimize(["--optimizer", "toolobserver", "--iterations", "1", "--coverage", *COMMON], tmp_path,
                               capsys)
    assert code == 0, err
    first = json.loads(out)
    passed = len(batches)
    assert passed >= 1
    client = mlflow.MlflowClient()
    assert COVERAGE_CHECKPOINT in {artifact.path for artifact in client.list_artifacts(first["run_id"])}

    code, out, err = _optimize(["--optimizer", "easytool", "--coverage-from", first["run_id"], *COMMON], tmp_path,
                               capsys)
    assert code == 0, err
    second = json.loads(out)
    assert len(batches) == passed  # no tool described again
    run = mlflow.get_run(second["run_id"])
    assert run.data.params["coverage_from"] == first["run_id"] and run.data.params["coverage"] == "true"
    # the pass's tokens are counted as the second run's (the same budget), and its own learning comes on top
    pass_tokens = json.loads(mlflow.artifacts.load_text(f"runs:/{first['run_id']}/{COVERAGE_CHECKPOINT}"))["tokens"]
    assert second["tokens_by_phase"]["editor"]["calls"] >= pass_tokens["editor"]["calls"] >= 1
    # the second optimizer started from the pass's docs: every tool's doc carries the pass's sentence unless rewritten
    steps = sorted(int(folder.path.rsplit("_", 1)[1]) for folder in client.list_artifacts(second["run_id"], "iterations"))
    assert steps[0] >= passed  # numbered on after the pass's steps
    assert COVERAGE_CHECKPOINT in {artifact.path for artifact in client.list_artifacts(second["run_id"])}


def test_a_pass_made_on_other_tasks_or_none_at_all_is_refused_on_one_line(batches, tmp_path, monkeypatch, capsys):
    code, out, err = _optimize(["--optimizer", "toolobserver", "--iterations", "1", "--coverage", *COMMON], tmp_path,
                               capsys)
    assert code == 0, err
    covered = json.loads(out)["run_id"]
    code, out, err = _optimize(["--optimizer", "easytool", "--coverage-from", covered, *COMMON, "--seed", "3"],
                               tmp_path, capsys)
    assert code == REFUSED_EXIT and err.count("\n") == 1 and "another sample" in err

    code, out, err = _optimize(["--optimizer", "toolobserver", "--iterations", "1", *COMMON], tmp_path, capsys)
    assert code == 0, err
    code, out, err = _optimize(["--optimizer", "easytool", "--coverage-from", json.loads(out)["run_id"], *COMMON],
                               tmp_path, capsys)
    assert code == REFUSED_EXIT and err.count("\n") == 1 and "no coverage pass is checkpointed" in err

    opened = []
    real_open = optimization.open_workbench
    monkeypatch.setattr(optimization, "open_workbench", lambda *args: opened.append(args) or real_open(*args))
    code, out, err = _optimize(["--optimizer", "easytool", "--coverage-from", "no-such-run", *COMMON], tmp_path, capsys)
    assert code == REFUSED_EXIT and "no coverage pass is checkpointed" in err and not opened  # before anything loads

    code, out, err = _optimize(["--resume", covered, "--coverage-from", covered, "--quiet"], tmp_path, capsys)
    assert code == REFUSED_EXIT and "--coverage-from would be ignored" in err


@pytest.mark.parametrize("beyond_the_pass", [True, False])
def test_a_pass_kept_in_the_ledger_by_an_interrupted_run_is_gone_on_from_on_another_machine(
        beyond_the_pass, batches, tmp_path, monkeypatch, capsys):
    """A run stopped after the optimizer's own first checkpoint (``beyond_the_pass``: its checkpoint no longer the
    pass's) or before it (its checkpoint is the pass's last): its ledger entry keeps the pass's checkpoint once, and on
    an empty store the entry, once loaded, is a run another optimizer goes on from."""
    from otbench import mlflow_store
    from otbench.run import ledger
    from otbench.run.checkpoints import CHECKPOINT_STEP

    real = mlflow.log_dict

    def log_dict(data, artifact_file, *args, **kwargs):
        optimizer_s_own = artifact_file == "checkpoint.json" and "coverage_evidence" not in data and CHECKPOINT_STEP in data
        if optimizer_s_own and not beyond_the_pass:
            raise KeyboardInterrupt
        real(data, artifact_file, *args, **kwargs)
        if optimizer_s_own:
            raise KeyboardInterrupt  # once the optimizer's first checkpoint replaced the pass's

    monkeypatch.setattr(mlflow, "log_dict", log_dict)
    with pytest.raises(KeyboardInterrupt):  # as a Ctrl-C reaches the command (run_main makes it an exit)
        optimize.main(["--optimizer", "toolobserver", "--iterations", "1", "--coverage", *COMMON, "--out",
                       str(tmp_path)])
    monkeypatch.setattr(mlflow, "log_dict", real)
    capsys.readouterr()
    stopped = mlflow.search_runs(experiment_names=["otbench"], order_by=["attributes.start_time DESC"],
                                 output_format="list")[0]
    entry = ledger.entry_of(stopped.info.run_id)
    assert entry.status == "interrupted" and (COVERAGE_CHECKPOINT in entry.resume) == beyond_the_pass
    ledger.write(entry)
    passed = len(batches)

    monkeypatch.setenv("OTBENCH_MLRUNS", str(tmp_path / "next-machine"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    mlflow_store.configure()
    loaded = ledger.load(ledger.read(ledger.entry_path(entry.key)))
    code, out, err = _optimize(["--optimizer", "easytool", "--coverage-from", loaded, *COMMON], tmp_path, capsys)
    assert code == 0, err
    assert len(batches) == passed and json.loads(out)["tokens_by_phase"]["editor"]["calls"] >= 1
