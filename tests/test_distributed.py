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


def test_reproduce_workers_share_a_grid_and_a_dead_workers_cell_goes_to_another(tmp_path):
    """One worker is killed (SIGKILL) while it runs a cell; two more started together finish the grid: every cell
    has exactly one finished run, the dead worker's cell among them, and one report."""
    import signal

    import mlflow
    from test_compare import every_role_reply

    pace = {"seconds": 2.0}

    def reply(body):
        time.sleep(pace["seconds"])
        return every_role_reply(body["messages"])

    with postgres() as database, mlflow_server(f"{database}/mlflow", tmp_path / "artifacts") as tracking_uri, \
            chat_server(reply) as (model, _):
        argv = [sys.executable, "-m", "otbench.reproduce", "--size", "small", "--only", "bfcl/names_only",
                "--limits", "bfcl=2", "--seeds", "5", "--storage", f"{database}/optuna", "--tracking-uri",
                tracking_uri, "--lm", "scripted", "--api-base", f"{model}/v1", "--no-cache", "--json", "--quiet",
                "--wait-seconds", "2", "--report", str(tmp_path / "report")]
        environment = {**os.environ, "PYTHONPATH": str(ROOT)}

        def worker(name):
            folder = tmp_path / name
            folder.mkdir()
            return subprocess.Popen(argv, cwd=folder, env=environment, text=True, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)

        client = mlflow.MlflowClient(tracking_uri)
        doomed = worker("doomed")
        deadline = time.monotonic() + 300
        running = []
        while not running:
            assert doomed.poll() is None and time.monotonic() < deadline, doomed.stderr.read()[-3000:]
            time.sleep(0.5)
            experiment = client.get_experiment_by_name("otbench")
            if experiment is not None:
                running = client.search_runs([experiment.experiment_id], "attributes.status = 'RUNNING'")
        doomed.send_signal(signal.SIGKILL)  # no cleanup at all: its run stays RUNNING, its claim goes with it
        doomed.wait(30)
        held = running[0]
        pace["seconds"] = 0.0

        workers = [worker("first"), worker("second")]
        outputs = [process.communicate(timeout=900) for process in workers]
        for process, (out, err) in zip(workers, outputs, strict=True):
            assert process.returncode == 0, err[-3000:]
        results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]

        cells = results[0]["cells"]
        assert len(cells) == 6 and all(cell["state"] == "finished" for cell in cells)
        runs = client.search_runs([experiment.experiment_id], "attributes.status = 'FINISHED'")
        finished_keys = [run.data.tags.get("otbench.key") for run in runs
                         if run.data.tags.get("command") in ("evaluate", "optimize")]
        assert sorted(finished_keys) == sorted(set(finished_keys)) and len(finished_keys) == 6  # each cell once
        assert held.data.tags["otbench.key"] in finished_keys  # the dead worker's cell was finished by another
        assert client.get_run(held.info.run_id).info.status in ("KILLED", "FINISHED")  # replaced, or resumed
        reports = [run for run in runs if run.data.tags.get("command") == "reproduce"]
        assert len(reports) == 1 and {r["run_id"] for r in results} <= {reports[0].info.run_id, None}
        by_worker = [err.count("claimed by") for _, err in outputs]
        print(f"\ncells run by the two workers: {by_worker}; the killed worker's cell: {held.data.tags['otbench.key']}")
