"""``python -m otbench.bench NAME``: measurements that timings depend on (never timed tests); run them alone.

- ``oracle``: the oracle agent on one environment's split (``--env``, ``--split``, ``--limit`` and the
  environment's own options): its scores, which must be perfect, and the environment-side seconds
  per task (BFCL: executing and scoring the gold calls; chess: engine moves of a 10-move exploration
  rollout or a full test game; BrowseComp: the searches of a question).
- ``retrieval``: BrowseComp index build time (a fresh index in a temporary directory) and per-query
  latency over the oracle's queries.
- ``llm``: the embedded model as llama.cpp measures it, by phase: a BFCL workload (``--limit``
  agent rollouts, default 8, then one editor revision of each) gives prompt and generation
  tokens per second, the share of prompt tokens served from the prefix cache and completion
  tokens per call; plain prompts give completion tokens per second through otbench's metered
  DSPy LM versus raw HTTP requests to the same server (cache off throughout).
- ``learning``: what an optimize run's learning costs the model (``python -m otbench.bench learning`` followed by
  any of ``optimize``'s options; the README's main command without them), made with the LM cache off: model calls,
  prompt tokens processed (not served from llama.cpp's prefix cache) and generated, by phase and per task, and the
  model-seconds they cost at the speed ``llm`` measures here after the run (or ``--speeds PROMPT,GENERATED`` tokens a
  second, such as a slow machine's ``34,10``), beside the starting and learned docs' scores;
  ``--summary FILE`` reports on an ``optimize --json`` output instead of running (:mod:`otbench.run.model_cost`).
- ``slots``: the embedded server with ``--slots 1,2,4`` parallel slots on the same cores, each kept busy by an
  agent thread of its own, on one agent workload (``--limit`` tasks, default 24; cache off): aggregate prompt and
  generated tokens a second, tokens an hour, seconds per call, the server's peak memory, and how many replies and
  task scores at temperature 0 differ from the first count's run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shlex
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from tqdm import tqdm

from otbench.arguments import OneLineParser, positive_int, seed
from otbench.core.tables import format_table, server_table
from otbench.envs.base import sample_tasks
from otbench.envs.registry import (
    add_environment_arguments,
    make_environment,
    options_from_values,
    refuse_other_environments,
    resolve,
)
from otbench.errors import ConfigError
from otbench.exits import run_main
from otbench.outputs import check_outputs
from otbench.run.settings import add_lm_arguments, lm_from_values

_PROMPTS = [f"Write a short paragraph about the number {n}." for n in range(100, 200)]
BENCHMARKS = ("oracle", "retrieval", "llm", "slots", "learning")


def bench_oracle(args: argparse.Namespace) -> dict[str, float]:
    with make_environment(options_from_values(vars(args))) as env:
        tasks = sample_tasks(env.tasks(args.split), args.limit, args.seed)
        agent, toolbox = env.oracle_agent(tasks), env.toolbox()
        seconds: list[float] = []
        trajectories = []
        for task in tasks:
            started = time.perf_counter()
            trajectories.append(env.rollout(agent, toolbox, task))
            seconds.append(time.perf_counter() - started)
        # no warm-up rollout: chess reuses engine results (on disk across runs, unless --engine-cache none),
        # so a replayed task would time the cache; the median is robust to the first task's start-up
        return {**env.summarise(trajectories), "seconds": round(sum(seconds), 3),
                "seconds_first_task": round(seconds[0], 4),
                "seconds_per_task_median": round(statistics.median(seconds), 4),
                "seconds_per_task_max": round(max(seconds), 4)}


def bench_retrieval(args: argparse.Namespace) -> dict[str, float]:
    from otbench.envs.browsecomp.dataset import load_dataset
    from otbench.envs.browsecomp.retrieval import open_retriever

    dataset = load_dataset()
    queries = [hop.query for task in sample_tasks(dataset.test, args.limit, args.seed) for hop in task.hops]
    with tempfile.TemporaryDirectory(prefix="otbench-bench-index-") as directory:
        started = time.perf_counter()
        retriever = open_retriever(args.retriever, dataset.documents, Path(directory), dataset.fingerprint)
        build = time.perf_counter() - started
        retriever.search(queries[0], 50)  # warm-up: first-call set-up is not latency
        latencies = []
        for query in queries:
            started = time.perf_counter()
            retriever.search(query, 50)
            latencies.append(1000 * (time.perf_counter() - started))
    return {"documents": float(len(dataset.documents)), "build_seconds": round(build, 3), "queries": float(len(queries)),
            "query_ms_median": round(statistics.median(latencies), 3),
            "query_ms_p95": round(statistics.quantiles(latencies, n=20, method="inclusive")[18], 3)}


def _raw_tokens_per_second(url: str, api_key: str, prompts: list[str], max_tokens: int) -> float:
    tokens, seconds = 0, 0.0
    for prompt in prompts:
        body = {"model": "raw", "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
                "temperature": 0, "repeat_penalty": 1.15}
        request = urllib.request.Request(f"{url}/v1/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json",
                                                  "Authorization": f"Bearer {api_key}"})
        started = time.perf_counter()
        with urllib.request.urlopen(request) as response:
            tokens += json.load(response)["usage"]["completion_tokens"]
        seconds += time.perf_counter() - started
    return tokens / seconds


def bench_llm(args: argparse.Namespace) -> dict[str, Any]:
    from otbench.llm.metering import TokenLedger
    from otbench.llm.session import open_lms
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.modules.editor import DocEditor

    ledger = TokenLedger()
    options = dataclasses.replace(lm_from_values(vars(args)), cache=False)
    with make_environment(options_from_values(vars(args))) as env, open_lms(options, ledger, ("agent", "editor")) as lms:
        plain = lms["agent"].for_phase("plain")
        url, key = plain.kwargs["api_base"].removesuffix("/v1"), plain.kwargs["api_key"]
        # Warm both paths (server slot, litellm's first-call set-up) before measuring either.
        _raw_tokens_per_second(url, key, _PROMPTS[:1], 8)
        plain(messages=[{"role": "user", "content": _PROMPTS[0]}], max_tokens=8)
        warm = ledger.phase("plain")
        raw = _raw_tokens_per_second(url, key, _PROMPTS[1 : 1 + args.requests], args.max_tokens)
        for prompt in _PROMPTS[1 + args.requests : 1 + 2 * args.requests]:
            plain(messages=[{"role": "user", "content": prompt}], max_tokens=args.max_tokens)
        usage = ledger.phase("plain")
        framework = (usage.completion_tokens - warm.completion_tokens) / (usage.seconds - warm.seconds)

        agent, editor, toolbox = FunctionCallingAgent(instructions=env.agent_instructions), DocEditor(), env.toolbox()
        agent.lm, editor.lm = lms["agent"], lms["editor"]
        tasks = sample_tasks(env.tasks(), args.limit or 8, args.seed)
        for task in tqdm(tasks, desc="bench llm: agent, then editor", unit="task", disable=args.quiet):
            trajectory = env.rollout(agent, toolbox, task)
            editor.revise(toolbox.toolset(trajectory.toolset), trajectory, show_outcome=False)
    figures = ledger.server_figures()
    if not args.quiet:
        print(server_table({phase: row for phase, row in figures.items() if phase != "all"}), file=sys.stderr)
    return {"raw_tokens_per_second": round(raw, 2), "framework_tokens_per_second": round(framework, 2),
            "framework_share": round(framework / raw, 3), "tasks": len(tasks), "grammar": options.grammar,
            "by_phase": figures}


def _server_memory_mb(slots: int) -> float | None:
    """The peak resident memory (MB) of this process's embedded server with ``slots`` slots, from ``/proc``."""
    from otbench.llm.running import running_servers

    for server in running_servers():
        if server.slots == slots and not server.shared:
            status = Path(f"/proc/{server.pid}/status")
            if status.is_file():
                found = re.search(r"VmHWM:\s+(\d+) kB", status.read_text())
                return round(int(found.group(1)) / 1024, 1) if found else None
    return None


def bench_slots(args: argparse.Namespace) -> dict[str, Any]:
    """The embedded server with 1, 2 and 4 parallel slots on the same cores, on the same agent workload (the
    environment's tasks, the model called every time: no cache), each slot kept busy by a thread of its own:
    aggregate prompt and generated tokens a second, per-call latency, the server's peak memory, and how many
    replies at temperature 0 differ from the one-slot run's (batched arithmetic may round otherwise) with what
    that does to the environment's metrics."""
    from otbench.evals.harness import run_rollouts
    from otbench.llm.metering import TokenLedger
    from otbench.llm.session import open_lms
    from otbench.modules.agent import FunctionCallingAgent

    parts = [part.strip() for part in str(args.slots).split(",")]
    if not all(part.isdigit() and int(part) >= 1 for part in parts):
        raise ConfigError(f"--slots {args.slots!r}: expected slot counts of 1 or more, such as 1,2,4")
    counts = [int(part) for part in parts]
    base = dataclasses.replace(lm_from_values(vars(args)), cache=False)
    rows, replies = [], {}
    with make_environment(options_from_values(vars(args))) as env:
        tasks = sample_tasks(env.tasks(), args.limit or 24, args.seed)
        toolbox = env.toolbox()
        for slots in counts:
            ledger = TokenLedger()
            with open_lms(dataclasses.replace(base, slots=slots), ledger) as lms:
                agent = FunctionCallingAgent(instructions=env.agent_instructions)
                agent.lm = lms["agent"]
                run_rollouts(env, agent, toolbox, tasks[:slots], num_threads=slots, progress=False)  # warm every slot
                warm = ledger.snapshot()["all"]
                started = time.perf_counter()
                trajectories = run_rollouts(env, agent, toolbox, tasks, num_threads=slots,
                                            description=f"bench slots: {slots}", progress=not args.quiet)
                wall = time.perf_counter() - started
                memory = _server_memory_mb(slots)
            usage = ledger.snapshot()["all"]
            paid = {key: usage[key] - warm.get(key, 0) for key in ("prompt_tokens", "completion_tokens", "calls",
                                                                    "seconds", "server_prompt_processed",
                                                                    "server_generated")}
            replies[slots] = {t.task_id: (t.reply, t.metrics) for t in trajectories}
            summary = env.summarise(trajectories)
            rows.append({"slots": slots, "tasks": len(tasks), "wall_seconds": round(wall, 1),
                         "prompt_tokens_per_second": round(paid["server_prompt_processed"] / wall, 2),
                         "generated_tokens_per_second": round(paid["server_generated"] / wall, 2),
                         "tokens_an_hour": round(3600 * (paid["prompt_tokens"] + paid["completion_tokens"]) / wall),
                         "seconds_per_call": round(paid["seconds"] / paid["calls"], 2) if paid["calls"] else None,
                         "server_peak_mb": memory, env.primary_metric: round(summary[env.primary_metric], 4)})
    first = replies[counts[0]]
    for row in rows:
        these = replies[row["slots"]]
        row["replies_changed"] = sum(these[task][0] != first[task][0] for task in first)
        row["metrics_changed"] = sum(these[task][1] != first[task][1] for task in first)
    if not args.quiet:
        print(format_table(rows), file=sys.stderr)
    return {"rows": rows, "threads": base.threads, "env": env.name, "setting": env.setting}


def bench_learning(argv: list[str]) -> dict[str, Any]:
    """``learning``: an optimize run (``argv``: its options) made with the LM cache off, or the ``--summary`` of one,
    reported as what it cost the model (:func:`otbench.run.model_cost.cost_report`)."""
    from otbench import optimize
    from otbench.run.model_cost import cost_report, measured_speeds, parse_speeds, read_summary, report_rows

    parser = optimize.build_parser(argv)
    parser.prog = "python -m otbench.bench learning"
    parser.description = "what an optimize run's learning costs the model (its options are optimize's)"
    group = parser.add_argument_group("learning benchmark")
    group.add_argument("--speeds", default=None, metavar="PROMPT,GENERATED",
                       help="price tokens at these prompt and generated tokens a second (default: measure them with "
                            "bench llm after the run)")
    group.add_argument("--summary", default=None, metavar="FILE",
                       help="report on this optimize --json output (or ledger:KEY, an optimize run's ledger entry) "
                            "instead of running")
    group.add_argument("--keep", default=None, metavar="NAME",
                       help="also keep the report in the results ledger as bench/NAME, for the pages' figures")
    args = parser.parse_args(argv)
    check_outputs(parser, args)
    if args.sweep or args.resume:
        raise ConfigError("bench learning measures one run from its start: drop --sweep and --resume")
    speeds = parse_speeds(args.speeds) if args.speeds else None
    if args.summary is not None:
        summary = read_summary(args.summary)
    else:
        options = optimize.options_from(vars(args))
        options = dataclasses.replace(options, lm=dataclasses.replace(options.lm, cache=False))
        summary = optimize.run(options).to_dict()
    if speeds is None:
        workload = argparse.Namespace(**{**vars(args), "limit": None, "seed": 0, "requests": 4, "max_tokens": 96})
        speeds = measured_speeds(bench_llm(workload)["by_phase"])
    report = cost_report(summary, speeds)
    if args.keep:
        from otbench.study.figures import keep_benchmark

        command = shlex.join(["python", "-m", "otbench.bench", "learning", *argv])
        print(f"kept: {keep_benchmark(args.keep, command, report)}", file=sys.stderr)
    if not args.quiet:
        print(format_table(report_rows(report)), file=sys.stderr)
    return report


def main(argv: list[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["learning"]:  # an optimize run's options, not the other benchmarks'
        print(json.dumps(bench_learning(given[1:])))
        return 0
    explicit_env = any(part == "--env" or part.startswith("--env=") for part in given)
    if given[:1] == ["retrieval"] and not explicit_env:  # BrowseComp's index: its options are the ones that apply
        given += ["--env", "browsecomp"]
    parser = OneLineParser(prog="python -m otbench.bench", description=__doc__.splitlines()[0])
    parser.add_argument("name", help="oracle, retrieval, llm, slots or learning (learning takes optimize's options: "
                                     "python -m otbench.bench learning --help)")
    parser.add_argument("--split", default="test", help="oracle: the split whose tasks are run (default test)")
    parser.add_argument("--limit", type=positive_int, default=None,
                        help="oracle, retrieval: a seeded sample of N tasks (default all); llm: tasks of the "
                             "workload (default 8)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the task sample (default 0)")
    parser.add_argument("--requests", type=positive_int, default=4, help="llm: requests per side (default 4)")
    parser.add_argument("--max-tokens", type=positive_int, default=96, help="llm: completion length in tokens (default 96)")
    parser.add_argument("--slots", default="1,2,4", help="slots: the slot counts to compare (default 1,2,4)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or table")
    add_environment_arguments(parser, argv=given)
    add_lm_arguments(parser)
    args = parser.parse_args(given)
    check_outputs(parser, args)
    if args.name not in BENCHMARKS:
        raise ConfigError(f"unknown benchmark {args.name!r}; choose from {', '.join(BENCHMARKS)}")
    refuse_other_environments(vars(args))
    resolve(options_from_values(vars(args)))  # bad environment options are refused before anything loads
    if args.name == "retrieval" and args.env != "browsecomp":
        raise ConfigError("retrieval measures BrowseComp's search index: give --env browsecomp (or no --env)")
    if args.name == "retrieval":  # BrowseComp's option
        from otbench.envs.browsecomp.retrieval import RETRIEVERS

        if args.retriever not in RETRIEVERS:
            raise ConfigError(f"unknown retriever {args.retriever!r}; choose from {', '.join(RETRIEVERS)}")
    if args.split not in ("train", "test"):
        raise ConfigError(f"unknown split {args.split!r}; choose from train, test")
    if args.name == "oracle":
        result = bench_oracle(args)
    elif args.name == "retrieval":
        result = bench_retrieval(args)
    elif args.name == "slots":
        result = bench_slots(args)
    else:
        result = bench_llm(args)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    run_main(main)
