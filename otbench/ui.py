"""``python -m otbench.ui``: the MLflow UI over otbench's store, on 127.0.0.1.

On an offline machine ``mlflow ui`` deadlocks unless litellm is told to use its local
cost map, and the job-execution feature must be off; both are set here. Ctrl-C stops the server
and its workers. It prints the address of each environment's saved view (result metrics as
columns, charts of the results: see :mod:`otbench.run.tracking`), also listed in the UI's Views menu.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from otbench.arguments import OneLineParser, port_number
from otbench.cli import refuse_unusable_address
from otbench.exits import run_main
from otbench.mlflow_store import EXPERIMENT, configure, store_uris
from otbench.outputs import STORE_DIRECTORY, check_outputs
from otbench.run.views import view_url, viewed_environments


def server_command(directory: Path | None, port: int) -> list[str]:
    backend, artifacts = store_uris(directory)
    return [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", backend, "--default-artifact-root", artifacts,
            "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]


def server_environment() -> dict[str, str]:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
            "MLFLOW_DISABLE_TELEMETRY": "true"}


def saved_views(directory: Path | None, base_url: str) -> list[str]:
    """The addresses of the saved views otbench's commands left in the store (none in a store without runs)."""
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=store_uris(directory)[0])
    experiment = client.get_experiment_by_name(EXPERIMENT)
    if experiment is None:
        return []
    return [view_url(base_url, experiment.experiment_id, env) for env in viewed_environments(experiment.tags)]


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m otbench.ui", description=__doc__.splitlines()[0])
    parser.add_argument("--mlruns", type=STORE_DIRECTORY, default=None, help="MLflow store directory (default ./mlruns)")
    parser.add_argument("--port", type=port_number, default=5000, help="port on 127.0.0.1 (default 5000)")
    args = parser.parse_args(argv)
    check_outputs(parser, args, cache=False)
    refuse_unusable_address("127.0.0.1", args.port, f"--port {args.port}")
    configure(None, directory=args.mlruns)  # a new store is created under its lock, not raced by a command starting
    process = subprocess.Popen(server_command(args.mlruns, args.port), env=server_environment(), start_new_session=True)
    print(f"MLflow UI on http://127.0.0.1:{args.port} (ready in about 20 s); Ctrl-C stops it", file=sys.stderr)
    for url in saved_views(args.mlruns, f"http://127.0.0.1:{args.port}"):
        print(f"runs compared, with their results as columns and charts: {url}", file=sys.stderr)
    try:
        return process.wait()
    except KeyboardInterrupt:
        stop_server(process)
        print("MLflow UI stopped", file=sys.stderr)
        return 0


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """Stop the server and its workers (its own process group): politely, then by force."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


if __name__ == "__main__":
    run_main(main)
