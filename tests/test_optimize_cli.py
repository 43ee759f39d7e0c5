"""``otbench.optimize`` end to end on BFCL with scripted LMs: every optimizer runs, logs and saves docs."""

import json
import re
from contextlib import contextmanager

import mlflow
import pytest

from otbench import optimize
from otbench.cli import run_main
from scripted_lm import scripted_lm


def any_role_reply(messages):
    """A scripted model that answers every prompt of the three optimizers with well-formed JSON."""
    content = messages[-1]["content"]
    if '{"calls"' in content:
        name = re.search(r'"name": "([^"]+)"', content.split("Tools:")[1]).group(1)
        return json.dumps({"calls": [{"name": name, "arguments": {}}]})
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

    monkeypatch.setattr(optimize, "open_lms", open_scripted)


@pytest.mark.parametrize("optimizer, phases", [
    ("toolobserver", {"agent", "editor"}),
    ("easytool", {"agent", "editor"}),
    # Calls without arguments fail on these tests, so play finds no example and nothing is rewritten.
    ("play2prompt", {"agent", "exploration"}),
])
def test_every_optimizer_runs_logs_and_saves_docs(optimizer, phases, scripted_lms, tmp_path, capsys):
    argv = ["--optimizer", optimizer, "--limit", "2", "--iterations", "2", "--p2p-samples", "1", "--json", "--quiet",
            "--out", str(tmp_path)]
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, argv)
    assert stop.value.code == 0, capsys.readouterr().err
    summary = json.loads(capsys.readouterr().out)
    assert summary["optimizer"] == optimizer and summary["n"] == 2
    assert set(summary["after"]) == {"E", "P", "A"}
    assert bool(summary["before"]) is (optimizer == "toolobserver")
    paid = {phase for phase, row in summary["tokens_by_phase"].items() if row["total_tokens"] and phase != "all"}
    assert paid == phases
    run = mlflow.get_run(summary["run_id"])
    assert run.data.tags["optimizer"] == optimizer and run.info.status == "FINISHED"
    assert "final_E" in run.data.metrics
    assert (tmp_path / summary["run_id"] / "final_docs.json").exists()
