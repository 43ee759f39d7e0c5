"""Input refused only once the environment or the ledger is read (docs for other tools, an unknown entry key) is
still refused before the command writes a store: one line, exit 2, and no ``mlflow.db`` left behind."""

import json
import os
from pathlib import Path

import pytest

from otbench import evaluate, results
from otbench.exits import run_main


def _refused_without_store(main, argv, capsys):
    store = Path(os.environ["OTBENCH_MLRUNS"])
    before = store.exists()
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert store.exists() == before
    return err


def test_docs_of_other_tools_are_refused_before_a_store_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OTBENCH_MLRUNS", str(tmp_path / "mlruns"))
    docs = tmp_path / "other.json"
    docs.write_text(json.dumps({"format": "otbench.docs/1", "toolsets": {"x": [{"name": "elsewhere",
                                                                               "description": "", "parameters": []}]}}))
    err = _refused_without_store(evaluate.main, ["--docs", str(docs), "--agent", "null", "--limit", "1"], capsys)
    assert "none of its tools belong to this environment" in err


def test_an_unknown_entry_is_refused_before_a_store_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OTBENCH_MLRUNS", str(tmp_path / "mlruns"))
    assert "no entry's key begins with 'nope'" in _refused_without_store(results.main, ["load", "nope"], capsys)
