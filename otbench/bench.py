"""``python -m otbench.bench NAME``: measurements reported in issue notes (never timed tests).

- ``oracle``: execute and score all gold calls of BFCL (exec_simple + exec_multiple) with the
  oracle agent; prints seconds.
- ``llm``: completion tokens per second of the embedded model through otbench's metered DSPy LM
  versus raw HTTP requests to the same server (same prompts, cache off).
"""

from __future__ import annotations

import json
import time
import urllib.request

from otbench.cli import OneLineParser, positive_int, run_main
from otbench.errors import UserError

_PROMPTS = [f"Write a short paragraph about the number {n}." for n in range(100, 200)]


def bench_oracle() -> dict[str, float]:
    from otbench.envs.bfcl.env import BfclEnvironment

    with BfclEnvironment(setting="names_only") as env:
        tasks = env.tasks()
        agent, toolbox = env.oracle_agent(tasks), env.toolbox()
        env.sandbox.call("math_gcd", "warmup", {"a": 1, "b": 1})  # worker start is not scoring
        started = time.perf_counter()
        trajectories = [env.rollout(agent, toolbox, task) for task in tasks]
        seconds = time.perf_counter() - started
        return {**env.summarise(trajectories), "seconds": round(seconds, 3)}


def _raw_tokens_per_second(url: str, prompts: list[str], max_tokens: int) -> float:
    tokens, seconds = 0, 0.0
    for prompt in prompts:
        body = {"model": "raw", "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
                "temperature": 0, "repeat_penalty": 1.15}
        request = urllib.request.Request(f"{url}/v1/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        started = time.perf_counter()
        with urllib.request.urlopen(request) as response:
            tokens += json.load(response)["usage"]["completion_tokens"]
        seconds += time.perf_counter() - started
    return tokens / seconds


def bench_llm(requests: int, max_tokens: int) -> dict[str, float]:
    from otbench.llm.metering import TokenLedger
    from otbench.llm.session import LMOptions, open_lms

    ledger = TokenLedger()
    with open_lms(LMOptions(cache=False), ledger) as lms:
        lm = lms["agent"]
        url = lm.kwargs["api_base"].removesuffix("/v1")
        # Warm both paths (server slot, litellm's first-call set-up) before measuring either.
        _raw_tokens_per_second(url, _PROMPTS[:1], 8)
        lm(messages=[{"role": "user", "content": _PROMPTS[0]}], max_tokens=8)
        warm = ledger.phase("agent")
        raw = _raw_tokens_per_second(url, _PROMPTS[1 : 1 + requests], max_tokens)
        for prompt in _PROMPTS[1 + requests : 1 + 2 * requests]:
            lm(messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens)
        usage = ledger.phase("agent")
        framework = (usage.completion_tokens - warm.completion_tokens) / (usage.seconds - warm.seconds)
    return {"raw_tokens_per_second": round(raw, 2), "framework_tokens_per_second": round(framework, 2),
            "framework_share": round(framework / raw, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m otbench.bench", description=__doc__.splitlines()[0])
    parser.add_argument("name", help="oracle or llm")
    parser.add_argument("--requests", type=positive_int, default=4, help="llm: requests per side")
    parser.add_argument("--max-tokens", type=positive_int, default=96, help="llm: completion length")
    args = parser.parse_args(argv)
    if args.name == "oracle":
        result = bench_oracle()
    elif args.name == "llm":
        result = bench_llm(args.requests, args.max_tokens)
    else:
        raise UserError(f"unknown benchmark {args.name!r}; choose from oracle, llm")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    run_main(main)
