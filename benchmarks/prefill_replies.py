"""The embedded model's replies with each reply's fixed opening written for it (``--prefill``) and generated.

Two ``evaluate`` runs of the same tasks and docs, cache off, one each way: E of each with the tasks right only one way
(exact McNemar), and the prompt tokens llama.cpp processed, the tokens it generated and the model-seconds they cost
at the given speeds. Writing the opening should change what the model generates little and cost fewer model-seconds;
this is where that is checked, on tasks of the user's choice.

    python benchmarks/prefill_replies.py --setting names_desc --limit 50 --seed 1
    python benchmarks/prefill_replies.py --runs RUN_WRITTEN RUN_GENERATED      # two evaluate runs of the store
    python benchmarks/prefill_replies.py ... --keep prefill-names-desc-50   # kept for the models page's figures
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from typing import Any

_SIDES = ("written", "generated")


def evaluated(env: str, setting: str, limit: int, seed: int, *, prefill: bool) -> str:
    """Run ``evaluate`` one way, cache off, as a user would; its MLflow run id."""
    command = [sys.executable, "-m", "otbench.evaluate", "--env", env, "--setting", setting, "--limit", str(limit),
               "--seed", str(seed), "--no-cache", "--json", *(["--prefill"] if prefill else [])]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    return str(json.loads(done.stdout.strip().splitlines()[-1])["run_id"])


def run_figures(run_id: str) -> dict[str, Any]:
    """Per-task E and the server's token counts of an evaluate run of the local store."""
    import mlflow

    from otbench.mlflow_store import open_existing

    if not open_existing():
        raise SystemExit("error: no MLflow store here to read the runs from")
    client = mlflow.MlflowClient()
    try:
        with open(client.download_artifacts(run_id, "outcomes.json")) as handle:
            outcomes = json.load(handle)
        with open(client.download_artifacts(run_id, "tokens.json")) as handle:
            phase = json.load(handle)["tokens_by_phase"]["all"]
    except mlflow.exceptions.MlflowException:
        raise SystemExit(f"error: run {run_id!r}: no evaluate run of this store with its outcomes and tokens") from None
    tasks = {row["task"]: row["metrics"]["E"] for row in outcomes["splits"][outcomes["result"]]}
    return {"run_id": run_id, "tasks": tasks, "processed": int(phase["server_prompt_processed"]),
            "generated": int(phase["server_generated"])}


def compared(written: dict[str, Any], generated: dict[str, Any], speeds: tuple[float, float]) -> dict[str, Any]:
    """The two sides, paired task by task."""
    from otbench.evals.stats import mcnemar

    if set(written["tasks"]) != set(generated["tasks"]):
        raise SystemExit("error: the two runs scored different tasks; give runs of the same sample")
    order = sorted(written["tasks"])
    row = [written["tasks"][task] for task in order]
    reference = [generated["tasks"][task] for task in order]
    sides = {}
    for name, side in zip(_SIDES, (written, generated), strict=True):
        seconds = side["processed"] / speeds[0] + side["generated"] / speeds[1]
        sides[name] = {"run_id": side["run_id"], "E": sum(side["tasks"].values()) / len(order),
                       "prompt_processed": side["processed"], "generated": side["generated"],
                       "model_seconds": round(seconds, 1)}
    return {"n": len(order), **sides,
            "right_only_written": [task for task, one, other in zip(order, row, reference, strict=True) if one > other],
            "right_only_generated": [task for task, one, other in zip(order, row, reference, strict=True) if other > one],
            "mcnemar_p": mcnemar(row, reference), "speeds": list(speeds)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="bfcl")
    parser.add_argument("--setting", default="names_desc")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", nargs=2, metavar=("WRITTEN", "GENERATED"),
                        help="report on two evaluate runs of the store (with and without --prefill) instead")
    parser.add_argument("--speeds", default="34,10", metavar="PROMPT,GENERATED",
                        help="tokens a second the model-seconds are priced at (default 34,10: a slow 2-core machine)")
    parser.add_argument("--keep", default=None, metavar="NAME",
                        help="also keep the report in the results ledger as bench/NAME, for the pages' figures")
    args = parser.parse_args(argv)
    try:
        prompt, generated = (float(part) for part in args.speeds.split(","))
    except ValueError:
        parser.error(f"--speeds {args.speeds!r}: give two numbers, PROMPT,GENERATED, such as 34,10")
    runs = args.runs or [evaluated(args.env, args.setting, args.limit, args.seed, prefill=prefill)
                         for prefill in (True, False)]
    report = compared(run_figures(runs[0]), run_figures(runs[1]), (prompt, generated))
    if args.keep:
        from otbench.study.figures import keep_benchmark

        given = sys.argv[1:] if argv is None else argv
        print(f"kept: {keep_benchmark(args.keep, shlex.join(['python', 'benchmarks/prefill_replies.py', *given]), report)}",
              file=sys.stderr)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
