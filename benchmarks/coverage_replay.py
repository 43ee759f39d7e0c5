"""The coverage pass's call-only steps run again on a finished optimize run's evidence, its docs closed again by code.

Finding a working call and a request each tool answers costs calls, not tokens; describing the tools costs the editor
hours on a pool of 1,000. This replays the first on a run's last checkpoint (its evidence and docs, in the MLflow
store), with the code as it is now: each tool without a working call is tried again, every tool is sought a train
request it answers, and each doc is closed by code around the editor's sentences as the run wrote them (no model is
called). It writes the docs and prints how many tools have a working call and a request answered, and how many of
those requests need the tool, so the call-only steps can be measured without paying the editor again; score the
docs with ``benchmarks/pool_retrieval.py --docs LABEL=PATH``.

    python benchmarks/coverage_replay.py 0185c5ffed9f4dc28715f649358440cb --out replayed.json --keep coverage_replay-1000
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def replay(run_id: str, out: Path) -> dict[str, float]:
    import mlflow

    from otbench import mlflow_store
    from otbench.envs.registry import make_environment
    from otbench.modules.tool_docs import Toolbox, tool_key
    from otbench.optimizers.coverage import Coverage, apply_evidence
    from otbench.optimizers.evidence import EvidenceBook
    from otbench.run.checkpoints import load_checkpoint
    from otbench.run.logged import definition_of

    mlflow_store.configure()
    definition = definition_of(mlflow.get_run(run_id))
    checkpoint = load_checkpoint(run_id)
    if definition is None or "evidence" not in checkpoint:
        raise SystemExit(f"error: run {run_id} is not an optimize run with a checkpoint of its evidence")
    book = EvidenceBook.from_dict(checkpoint["evidence"])
    with make_environment(definition.options) as env:
        toolbox = env.toolbox()
        toolbox.adopt_docs(Toolbox.from_json(checkpoint["docs"]))
        train = env.tasks("train")
        coverage = Coverage(env, editor=None, judge=True, exhausted=lambda: True)  # type: ignore[arg-type]
        figures: dict[str, float] = {}
        started = time.perf_counter()
        for toolset in coverage.toolsets(train):
            requests = [(task, coverage.request_of(task)) for task in train if env.toolset_of(task) == toolset]
            tools = toolbox.toolset(toolset)
            figures["working_before"] = sum(bool(book.of(toolset, tool.name).examples) for tool in tools)
            for tool in tools:
                if not book.of(toolset, tool.name).examples:
                    coverage.experiment(toolset, tool, requests, book)
            coverage.seek_answers(toolbox, toolset, tools, requests, book)
            needed = {tool_key(toolset, name) for task in train for name in _needed(env, task)}
            answered = [tool for tool in tools if book.of(toolset, tool.name).answered]
            figures.update(
                tools=len(tools), working=sum(bool(book.of(toolset, tool.name).examples) for tool in tools),
                answered=len(answered),
                answered_needed=sum(_answered_by_need(env, train, toolset, tool, book) for tool in answered),
                docs_changed=sum(apply_evidence(tool, "", book.of(toolset, tool.name)) for tool in tools),
                tools_needed_by_train=len(needed))
        figures["seconds"] = round(time.perf_counter() - started, 1)
    out.write_text(json.dumps(toolbox.to_json()))
    return figures


def _needed(env: object, task: object) -> list[str]:
    """The shown names of the tools a task needs, where the environment says (the pool's tasks do)."""
    to_shown = getattr(env, "to_shown", {})
    return [to_shown[name] for name in getattr(task, "needs", ()) if name in to_shown]


def _answered_by_need(env: object, train: list[object], toolset: str, tool: object, book: object) -> bool:
    """Whether the request the tool's doc quotes is one that needs the tool."""
    line = book.of(toolset, tool.name).answered[0]  # type: ignore[attr-defined]
    request, _ = json.JSONDecoder().raw_decode(line)  # the line opens with the request as a JSON string
    return any(tool.name in _needed(env, task) for task in train  # type: ignore[attr-defined]
               if getattr(task, "text", None) == request)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="an optimize run with --coverage, in the MLflow store")
    parser.add_argument("--out", type=Path, required=True, help="where to write the docs closed again")
    parser.add_argument("--keep", default=None, metavar="NAME",
                        help="also keep the figures in the results ledger as bench/NAME, for the pages' figures")
    args = parser.parse_args()
    figures = replay(args.run, args.out)
    if args.keep:
        from otbench.study.figures import keep_benchmark

        command = shlex.join(["python", "benchmarks/coverage_replay.py", *sys.argv[1:]])
        print(f"kept: {keep_benchmark(args.keep, command, figures)}", file=sys.stderr)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
