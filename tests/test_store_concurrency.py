"""Commands started together on a new MLflow store: every one of them logs its run.

Real processes (forked from this one, so MLflow is imported once) open the same new sqlite store
at the same moment, as eight commands launched by one script would; without the store's lock
all but one failed while creating its tables.
"""

import multiprocessing

import mlflow

from otbench import mlflow_store
from otbench.run import tracking

PROCESSES = 8


def _log_one_run(directory, barrier, results, index):
    try:
        barrier.wait(timeout=120)
        mlflow_store.configure(None, directory=directory)
        with tracking.tracked_run(f"worker-{index}", tags={"command": "test"}, params={"index": index}):
            mlflow.log_metric("done", 1.0)
        results.put((index, "ok"))
    except BaseException as exc:  # noqa: BLE001 - any failure is what the test reports
        results.put((index, f"{type(exc).__name__}: {exc}"))


def test_eight_processes_starting_at_once_on_a_new_store_all_log_their_run(tmp_path):
    context = multiprocessing.get_context("fork")
    for trial in range(2):
        directory = tmp_path / f"store-{trial}"
        barrier, results = context.Barrier(PROCESSES), context.Queue()
        workers = [context.Process(target=_log_one_run, args=(directory, barrier, results, i)) for i in range(PROCESSES)]
        for worker in workers:
            worker.start()
        outcomes = dict(results.get(timeout=300) for _ in workers)
        for worker in workers:
            worker.join(timeout=60)
        assert outcomes == dict.fromkeys(range(PROCESSES), "ok"), f"trial {trial}: {outcomes}"
        mlflow_store.configure(None, directory=directory)
        runs = mlflow.search_runs(experiment_names=[mlflow_store.EXPERIMENT], output_format="list")
        assert sorted(run.data.params["index"] for run in runs) == [str(i) for i in range(PROCESSES)]


def test_the_lock_is_released_when_its_holder_dies(tmp_path):
    """flock is the kernel's: a command killed while creating the store leaves nothing that blocks the next."""
    context = multiprocessing.get_context("fork")
    database = tmp_path / "mlflow.db"

    def hold_and_die():
        with mlflow_store.store_lock(database):
            import os

            os._exit(1)

    holder = context.Process(target=hold_and_die)
    holder.start()
    holder.join(timeout=60)
    with mlflow_store.store_lock(database):  # would wait for ever if the lock outlived its holder
        pass
