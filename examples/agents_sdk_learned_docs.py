"""The OpenAI Agents SDK on ``otbench serve``, with tool docs otbench learned: no API key, no hosted model.

In one terminal, serve the embedded model (it prints its URL, then its key):

    python -m otbench.serve --threads 1

In another, export the docs ToolObserver learned for one BFCL-Opaque test (the results ledger keeps them) as the
``tools`` list of a Chat Completions request, and run the agent:

    python -m otbench.export ledger:fb4b1e3a --toolset exec_simple_10 --out tools.json
    python examples/agents_sdk_learned_docs.py --api-base URL --api-key KEY --tools tools.json

The learned docs keep the name the tool was shown under, ``function_1``, and say what it does and which arguments it
takes; the function behind it is BFCL's ``calculate_final_velocity``, which otbench ships. The agent calls it, gets
its result back and answers from it. Any other exported tools list works the same way, given the functions behind
its names (``IMPLEMENTATIONS``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import agents
from openai import AsyncOpenAI

from otbench.envs.bfcl.functions.physics_and_health import calculate_final_velocity

IMPLEMENTATIONS: dict[str, Callable[..., Any]] = {"function_1": calculate_final_velocity}
QUESTION = ("A vehicle starts from a standstill and accelerates at 9.8 meters per second squared for 12 seconds. "
            "What is its final velocity?")
INSTRUCTIONS = ("You answer the user's request with the tools you are given. Call the tools the request needs, with "
                "arguments taken from the request. When their results answer the request, reply with the answer.")


def function_tools(exported: list[dict[str, Any]], implementations: dict[str, Callable[..., Any]]
                   ) -> Iterator[agents.FunctionTool]:
    """The SDK's tools for an exported ``tools`` list: the learned docs as they are, each name run by its function.
    The model's arguments are data: a call that does not fit the function is answered with the error, as a tool
    that raised."""
    for entry in exported:
        function = entry["function"]
        implementation = implementations[function["name"]]

        async def invoke(_context: Any, arguments: str, implementation: Callable[..., Any] = implementation) -> str:
            try:
                return json.dumps(implementation(**json.loads(arguments or "{}")))
            except Exception as error:  # noqa: BLE001 - any failure of the call is the tool's answer
                return f"Error: {type(error).__name__}: {error}"

        yield agents.FunctionTool(name=function["name"], description=function["description"],
                                  params_json_schema=function["parameters"], on_invoke_tool=invoke,
                                  strict_json_schema=False)


async def answer(question: str, tools: list[agents.FunctionTool], base_url: str, api_key: str) -> agents.RunResult:
    """The SDK's agent on ``question`` against the server at ``base_url`` (an OpenAI-compatible ``/v1`` URL)."""
    model = agents.OpenAIChatCompletionsModel(model="local", openai_client=AsyncOpenAI(base_url=base_url,
                                                                                       api_key=api_key))
    agent = agents.Agent(name="assistant", instructions=INSTRUCTIONS, tools=tools, model=model,
                         model_settings=agents.ModelSettings(temperature=0.0, max_tokens=512))
    return await agents.Runner.run(agent, question, max_turns=4, run_config=agents.RunConfig(tracing_disabled=True))


def main(argv: list[str] | None = None) -> agents.RunResult:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", required=True, help="otbench serve's URL, as it printed it")
    parser.add_argument("--api-key", required=True, help="otbench serve's key, as it printed it")
    parser.add_argument("--tools", type=Path, required=True, help="a tools list from otbench export --toolset")
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args(argv)
    tools = list(function_tools(json.loads(args.tools.read_text()), IMPLEMENTATIONS))
    base = args.api_base.rstrip("/")
    result = asyncio.run(answer(args.question, tools, base if base.endswith("/v1") else f"{base}/v1", args.api_key))
    for item in result.new_items:
        if isinstance(item, agents.ToolCallItem):
            print(f"call:   {item.raw_item.name}({item.raw_item.arguments})")
        elif isinstance(item, agents.ToolCallOutputItem):
            print(f"result: {item.output}")
    print(f"answer: {result.final_output}")
    return result


if __name__ == "__main__":
    main()
