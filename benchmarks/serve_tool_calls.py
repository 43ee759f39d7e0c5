"""OpenAI tool calling on the embedded model: llama.cpp's own tools path against ``otbench serve``'s, request by request.

The same Chat Completions requests go through the OpenAI Python SDK to two servers of the embedded model, one after
the other: llama.cpp's own (its chat template's tool-call parsing, ``--tools-path native``) and ``otbench serve``'s
front (the template, then a grammar of calls, ``front``). Each request is a BFCL-Opaque test's question with the docs
ToolObserver learned for it (a results ledger entry's final docs, as ``otbench export --format openai`` writes them).
For each path it prints how many replies came back as ``tool_calls``, how many wrote a call as text instead (a JSON
call to an offered function in the content, which an agent framework does not run), how many were other text, the
calls of functions that were never offered, and the tokens, seconds and llama.cpp's speed.

    python benchmarks/serve_tool_calls.py --limit 10                 # both paths, 10 tests of names_only
    python benchmarks/serve_tool_calls.py --limit 30 --paths front --tool-choice required

It loads the real embedded model (about 2 GB of memory): timings are the machine's, and mean little on a busy one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from otbench.core.tables import format_table
from otbench.envs.base import sample_tasks
from otbench.envs.bfcl.data import load_tests
from otbench.llm.server import EmbeddedServer, ServerSettings
from otbench.llm.session import LMOptions, embedded_identity
from otbench.modules.api_tools import chat_completions_tool
from otbench.modules.call_parsing import parse_reply
from otbench.modules.tool_docs import Toolbox
from otbench.run import ledger

PATHS = ("native", "front")


def requests(limit: int, seed: int, docs: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """``limit`` tests' questions with their learned tools, as the comparison samples tests."""
    learned = Toolbox.from_json(ledger.docs_entry(docs, ROOT / "results").artifacts[ledger.RUN_DOCS_ARTIFACT])
    tests = sample_tasks(load_tests(("exec_simple", "exec_multiple")), limit, seed)
    return [(test.question, [chat_completions_tool(tool) for tool in learned.toolset(test.id)]) for test in tests]


def measure(path: str, asked: list[tuple[str, list[dict[str, Any]]]], threads: int, choice: str) -> dict[str, Any]:
    import openai

    model, _ = embedded_identity(LMOptions())
    server = EmbeddedServer(ServerSettings(model, threads=threads, tool_calls=path == "front"))
    row: dict[str, Any] = {"path": path, "requests": 0, "tool_calls": 0, "calls_as_text": 0, "other_text": 0,
                           "unoffered_calls": 0, "completion_tokens": 0, "seconds": 0.0}
    prompt_ms = generated_ms = prompt_n = generated_n = 0.0
    with server as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=server.api_key, max_retries=0, timeout=None)
        for question, tools in asked:
            offered = {tool["function"]["name"] for tool in tools}
            started = time.perf_counter()
            reply = client.chat.completions.create(model="local", messages=[{"role": "user", "content": question}],
                                                   tools=tools, tool_choice=choice, temperature=0, max_tokens=256)
            row["seconds"] += time.perf_counter() - started
            row["requests"] += 1
            message = reply.choices[0].message
            row["completion_tokens"] += reply.usage.completion_tokens if reply.usage else 0
            timings = (reply.model_extra or {}).get("timings") or {}
            prompt_ms, generated_ms = prompt_ms + timings.get("prompt_ms", 0), generated_ms + timings.get("predicted_ms", 0)
            prompt_n, generated_n = prompt_n + timings.get("prompt_n", 0), generated_n + timings.get("predicted_n", 0)
            if message.tool_calls:
                row["tool_calls"] += 1
                row["unoffered_calls"] += sum(call.function.name not in offered for call in message.tool_calls)
                continue
            written = parse_reply(message.content or "").calls or []
            if written and all(call.name in offered for call in written):
                row["calls_as_text"] += 1
            else:
                row["other_text"] += 1
                row["unoffered_calls"] += sum(call.name not in offered for call in written)
    row["seconds"] = round(row["seconds"], 1)
    row["speed"] = (f"{1000 * prompt_n / prompt_ms:.1f} / {1000 * generated_n / generated_ms:.1f}"
                    if prompt_ms and generated_ms else "-")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=10, help="tests of names_only (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0, as evaluate's)")
    parser.add_argument("--docs", default="ledger:fb4b1e3a", help="learned docs (default: +TO's on all 150 tests)")
    parser.add_argument("--paths", default=",".join(PATHS), help="native, front or both (default both)")
    parser.add_argument("--tool-choice", default="auto", choices=("auto", "required"))
    parser.add_argument("--threads", type=int, default=1, help="the model's CPU threads (default 1)")
    args = parser.parse_args(argv)
    asked = requests(args.limit, args.seed, args.docs)
    rows = [measure(path, asked, args.threads, args.tool_choice) for path in args.paths.split(",")]
    print(format_table(rows, ["path", "requests", "tool_calls", "calls_as_text", "other_text", "unoffered_calls",
                              "completion_tokens", "seconds", "speed"]))
    print("speed: llama.cpp's prompt / generated tokens a second over the requests")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
