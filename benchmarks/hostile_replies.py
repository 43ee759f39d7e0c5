"""Hostile model replies at scale: how many were tried, and how many crashed, hung or were misscored.

No LLM is involved: each reply is the scripted answer of the real function-calling agent, and goes
through its parsing, the environment's rollout (BFCL's sandbox, Chess's engines, BrowseComp's
searches), the metrics, the editor's rendering and the MLflow artefact, exactly as in the fuzz suite
(``tests/hostile.py`` holds the strategies, the corpus and the checks both use). Replies are the
committed corpus aimed at every target plus Hypothesis-generated ones (derandomized, so a rerun
tries the same replies); the real data of each environment is used (BFCL's 150 tests under
names_only, Chess test positions, BrowseComp test questions).

    python benchmarks/hostile_replies.py                      # 3,400 BFCL, 400 Chess, 400 BrowseComp
    python benchmarks/hostile_replies.py --bfcl 200 --chess 20 --browsecomp 20 --json

A reply that takes longer than ``--hang-seconds`` (wall clock) is counted as a hang and the next
one goes on (with BFCL's sandbox pool started afresh, so one hang is counted once). BFCL calls get ``--call-timeout`` CPU seconds (1 by default here, to keep the run
short; the verdicts do not depend on it).
"""

from __future__ import annotations

import argparse
import json
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS.parent), str(TESTS)]

from hostile import Outcome, Target, corpus, instantiate, replay, replies
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st


class _Hang(Exception):
    """Raised by the watchdog in the main thread when one reply takes too long."""


def _on_alarm(_signum: int, _frame: object) -> None:
    raise _Hang


def _guarded(target: Target, reply: str, hang_seconds: int) -> Outcome:
    signal.alarm(hang_seconds)
    try:
        return replay(target, reply)
    except _Hang:
        sandbox = getattr(target.env, "sandbox", None)
        if sandbox is not None:  # a lost worker would make every later reply wait: start the pool afresh
            sandbox.close()
        return Outcome(reply, None, [f"hang: no result within {hang_seconds} s"])
    finally:
        signal.alarm(0)


def bfcl_targets(call_timeout: float) -> tuple[Any, list[Target]]:
    from otbench.envs.bfcl.env import BfclEnvironment
    from otbench.envs.bfcl.opacity import shown_names

    env = BfclEnvironment(setting="names_only", call_timeout=call_timeout)
    targets = []
    for task in env.tasks():
        gold = env.gold_calls(task)[0]
        to_shown = {real: shown for shown, real in shown_names(task.functions, env.setting).items()}
        parameter, value = next(iter(gold.arguments.items()), ("x", 1))
        targets.append(Target("bfcl", env, task, to_shown[gold.name], parameter, value, gold.name))
    return env, targets


def chess_targets(positions: int) -> tuple[Any, list[Target]]:
    from otbench.envs.chess.env import ChessEnvironment
    from otbench.envs.chess.positions import load_positions

    chosen = [p for p in load_positions() if p.split == "test"][:positions]
    env = ChessEnvironment(setting="phase", positions=chosen, max_moves=1)
    return env, [Target("chess", env, task, "engine_1", "fen", task.position.fen, "stockfish")
                 for task in env.tasks("test")]


def browsecomp_targets(questions: int) -> tuple[Any, list[Target]]:
    from otbench.envs.browsecomp.env import BrowseCompEnvironment

    env = BrowseCompEnvironment(max_calls=2)
    return env, [Target("browsecomp", env, task, env.tool_of_domain[task.hops[0].domain], "query",
                        task.hops[0].query, "wikipedia") for task in env.tasks("test")[:questions]]


def run(targets: list[Target], generated: int, hang_seconds: int) -> list[Outcome]:
    """The corpus aimed at each target in turn, then ``generated`` Hypothesis replies at random targets."""
    records = corpus()
    outcomes = [_guarded(targets[index % len(targets)], instantiate(record["reply"], targets[index % len(targets)]),
                         hang_seconds) for index, record in enumerate(records)]

    @settings(max_examples=generated, deadline=None, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def fuzz(data: st.DataObject) -> None:
        target = data.draw(st.sampled_from(targets))
        outcomes.append(_guarded(target, data.draw(replies(target)), hang_seconds))

    if generated:
        fuzz()
    return outcomes


def log_to_mlflow(directory: Path, outcomes: dict[str, list[Outcome]]) -> str:
    """Every trajectory as ``evaluate`` logs it, one run per environment, in a store of its own."""
    import mlflow

    from otbench.mlflow_store import configure

    configure(directory=directory, experiment="hostile-replies")
    for name, results in outcomes.items():
        with mlflow.start_run(run_name=f"hostile-{name}"):
            mlflow.log_text("\n".join(json.dumps(o.trajectory.to_dict(), default=str)
                                      for o in results if o.trajectory is not None), "trajectories.jsonl")
    return str(directory)


def tally(results: list[Outcome], seconds: float) -> dict[str, float]:
    kinds = Counter(problem.split(":", 1)[0] for outcome in results for problem in outcome.problems[:1])
    return {"tried": len(results), "crashes": kinds["crash"], "hangs": kinds["hang"],
            "wrong_scores": kinds["wrong score"], "seconds": round(seconds, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--bfcl", type=int, default=3_400, help="generated BFCL replies (the corpus comes on top)")
    parser.add_argument("--chess", type=int, default=400, help="generated Chess replies")
    parser.add_argument("--browsecomp", type=int, default=400, help="generated BrowseComp replies")
    parser.add_argument("--chess-positions", type=int, default=8, help="Chess test positions the replies aim at")
    parser.add_argument("--browsecomp-questions", type=int, default=20, help="BrowseComp test questions aimed at")
    parser.add_argument("--call-timeout", type=float, default=1.0, help="BFCL: CPU seconds per tool call")
    parser.add_argument("--hang-seconds", type=int, default=120, help="a reply that takes longer is a hang")
    parser.add_argument("--mlruns", type=Path, default=None, help="MLflow store for the artefacts (default: a temp dir)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)

    signal.signal(signal.SIGALRM, _on_alarm)
    builders = {"bfcl": (lambda: bfcl_targets(args.call_timeout), args.bfcl),
                "chess": (lambda: chess_targets(args.chess_positions), args.chess),
                "browsecomp": (lambda: browsecomp_targets(args.browsecomp_questions), args.browsecomp)}
    rows: dict[str, dict[str, float]] = {}
    outcomes: dict[str, list[Outcome]] = {}
    examples: dict[str, list[str]] = {}
    for name, (build, generated) in builders.items():
        env, targets = build()
        started = time.perf_counter()
        try:
            outcomes[name] = run(targets, generated, args.hang_seconds)
        finally:
            env.__exit__(None, None, None)
        rows[name] = tally(outcomes[name], time.perf_counter() - started)
        examples[name] = [f"{o.problems[0]} <- {o.reply[:120]!r}" for o in outcomes[name] if o.problems][:5]
        print(f"{name}: {rows[name]}", file=sys.stderr)
    store = log_to_mlflow(args.mlruns or Path(tempfile.mkdtemp(prefix="otbench-hostile-")), outcomes)
    total = {key: sum(row[key] for row in rows.values()) for key in ("tried", "crashes", "hangs", "wrong_scores")}
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps({"environments": rows, "total": total, "peak_rss_mb": round(peak_mb), "mlruns": store,
                          "examples": examples}))
        return 0
    print("| environment | tried | crashes | hangs | wrong scores | seconds |")
    print("|---|---|---|---|---|---|")
    for name, row in {**rows, "total": {**total, "seconds": sum(r["seconds"] for r in rows.values())}}.items():
        print(f"| {name} | {row['tried']:,} | {row['crashes']} | {row['hangs']} | {row['wrong_scores']} | "
              f"{row['seconds']:.0f} |")
    print(f"\npeak memory of this process: {peak_mb:.0f} MB; artefacts logged to {store}")
    for name, lines in examples.items():
        for line in lines:
            print(f"{name}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
