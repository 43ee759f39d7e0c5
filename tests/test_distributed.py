"""Scale-out on real servers: two sweep workers share one optuna study in PostgreSQL and log to one
``mlflow server`` (itself on PostgreSQL), as the README's multi-machine section says to run them.

Everything is real but the model: PostgreSQL (Debian's package) in a throwaway cluster, MLflow's
tracking server, the workers as ``python -m otbench.optimize --sweep`` processes, and their LM
calls sent over HTTP (``--api-base``) to a scripted OpenAI-compatible server in this process.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from chat_server import chat_server
from test_optimize_cli import any_role_reply

from otbench.ui import server_environment
from otbench.ui_check import free_port

ROOT = Path(__file__).resolve().parents[1]


def _postgres_bin() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return versions[-1].parent if versions else None


pytestmark = [
    pytest.mark.distributed,
    pytest.mark.skipif(_postgres_bin() is None, reason="PostgreSQL is not installed (scripts/setup.sh installs it)"),
]


def _as_postgres(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    """PostgreSQL refuses to run as root: as root, its commands run as the package's ``postgres`` user."""
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run(prefix + command, check=True, capture_output=True, text=True, timeout=120, **kwargs)


@contextmanager
def postgres() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on 127.0.0.1 with databases ``optuna`` and ``mlflow``; yields its URL."""
    binaries, port = _postgres_bin(), free_port()
    home = Path(tempfile.mkdtemp(prefix="otbench-pg-"))
    if os.geteuid() == 0:
        shutil.chown(home, "postgres", "postgres")
    data = home / "data"
    user = "postgres" if os.geteuid() == 0 else getpass.getuser()
    _as_postgres([str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", user])
    _as_postgres([str(binaries / "pg_ctl"), "-D", str(data), "-l", str(home / "log"), "-w", "start", "-o",
                  f"-p {port} -k {home} -c listen_addresses=127.0.0.1"])
    try:
        for database in ("optuna", "mlflow"):
            _as_postgres([str(binaries / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", user, database])
        yield f"postgresql://{user}@127.0.0.1:{port}"
    finally:
        _as_postgres([str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"])
        shutil.rmtree(home, ignore_errors=True)


@contextmanager
def mlflow_server(backend: str, artifacts: Path) -> Iterator[str]:
    """``mlflow server`` on PostgreSQL for the block; yields its URL once it answers."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--backend-store-uri", backend,
                                    "--artifacts-destination", str(artifacts), "--host", "127.0.0.1",
                                    "--port", str(port), "--workers", "1"],
                                   env=server_environment(), stdout=log, stderr=log, start_new_session=True)
        try:
            deadline = time.monotonic() + 240
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/health", timeout=2):
                        break
                except OSError:
                    log.seek(0)
                    assert process.poll() is None and time.monotonic() < deadline, log.read().decode()[-2000:]
                    time.sleep(1)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()


@contextmanager
def scripted_model_server() -> Iterator[str]:
    """An OpenAI-compatible chat endpoint whose replies come from ``any_role_reply``; yields its base URL."""
    with chat_server(lambda body: any_role_reply(body["messages"])) as (url, _):
        yield f"{url}/v1"


def test_two_sweep_workers_share_one_study_and_one_mlflow_server(tmp_path):
    with postgres() as database, mlflow_server(f"{database}/mlflow", tmp_path / "artifacts") as tracking_uri, \
            scripted_model_server() as model:
        argv = [sys.executable, "-m", "otbench.optimize", "--sweep", "2", "--limit", "1", "--iterations", "1",
                "--storage", f"{database}/optuna", "--study-name", "shared", "--tracking-uri", tracking_uri,
                "--lm", "scripted", "--api-base", model, "--no-cache", "--json", "--quiet"]
        environment = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout, wherever the worker starts
        workers = [subprocess.Popen([*argv, "--out", str(tmp_path / f"worker-{n}")], cwd=tmp_path, env=environment,
                                    text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for n in range(2)]
        outputs = [worker.communicate(timeout=600) for worker in workers]
        for worker, (out, err) in zip(workers, outputs, strict=True):
            assert worker.returncode == 0, err[-3000:]
        sweeps = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]

        import mlflow
        import optuna

        study = optuna.load_study(study_name="shared", storage=f"{database}/optuna")
        trials = [t for t in study.get_trials() if t.state == optuna.trial.TrialState.COMPLETE]
        assert len(trials) == 4  # two from each worker, in one study
        client = mlflow.MlflowClient(tracking_uri)
        experiment = client.get_experiment_by_name("otbench")
        runs = client.search_runs([experiment.experiment_id])
        sweep_ids = {sweep["sweep_run_id"] for sweep in sweeps}
        assert {run.info.run_id for run in runs if run.data.tags.get("command") == "sweep"} == sweep_ids
        nested = [run for run in runs if run.data.tags.get("mlflow.parentRunId") in sweep_ids]
        assert {run.info.run_id for run in nested} == {t.user_attrs["run_id"] for t in trials}
        assert all(run.info.status == "FINISHED" for run in runs)
        best = sweeps[-1]["best"]  # the later worker's view of the shared study
        assert best["run_id"] in {run.info.run_id for run in nested}
        assert client.list_artifacts(best["run_id"], "docs")  # the best trial's learned docs are on the server
        print(f"\n{len(trials)} trials in one study, sweep runs {sorted(sweep_ids)}, best trial {best['trial']} "
              f"(run {best['run_id']})")
