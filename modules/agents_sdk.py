"""The OpenAI Agents SDK's agent on an environment's tasks: learned docs at work in an agent framework people use.

The agent is the SDK's own (``agents.Agent``, run by ``agents.Runner`` over Chat Completions), given a task's tools
as function tools whose names, descriptions and parameters are the docs as ``otbench export --format openai`` writes
them (:func:`otbench.modules.api_tools.chat_completions_tool`). Every call it makes is run in the environment
(``execute``) and its result fed back to it, until it answers or its turns run out. The environment scores every
call the agent made, in order, with its answer as the reply; it scores them by running them again, so this agent
serves environments whose calls give the same result when run again (``replayable_calls``: BFCL).

The SDK is an optional dependency (``pip install 'otbench[agents]'``), imported when an agent is made.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any

from otbench.core.calls import CallResult, ToolCall, checked_call
from otbench.errors import SetupError
from otbench.modules.agent import AgentReply
from otbench.modules.api_tools import chat_completions_tool
from otbench.modules.tool_docs import DocumentedTool

NAME = "openai-agents"
"""The agent's name where an evaluation names its agent (``--agent openai-agents``)."""
INSTRUCTIONS = ("You answer the user's request with the tools you are given. Call the tools the request needs, with "
                "arguments taken from the request. When their results answer the request, reply with the answer.")
"""The agent's instructions: what any tool-using agent would be told, nothing about the tools."""
MAX_TURNS = 4
"""Model replies the agent may make on one task: calls, their results, an answer, and a second try."""
MAX_TOKENS = 512
"""Tokens a reply may take (a small model can otherwise go on writing at temperature 0)."""
INSTALL = "pip install 'otbench[agents]'"


def sdk() -> Any:
    """The OpenAI Agents SDK, or a one-line :class:`SetupError` saying how to install it."""
    try:
        import agents
    except ImportError:
        raise SetupError(f"the OpenAI Agents SDK is not installed: {INSTALL}") from None
    return agents


def function_tool(tool: DocumentedTool, invoke: Callable[[ToolCall], str]) -> Any:
    """The SDK's function tool for ``tool``'s docs, answering each call with ``invoke``'s text. The arguments are
    read as the model wrote them (not strict: opaque tools have no declared parameters to hold them to)."""
    agents = sdk()
    schema = chat_completions_tool(tool)["function"]

    async def on_invoke(_context: Any, arguments: str) -> str:
        try:
            parsed: Any = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            parsed = arguments  # not an object: a call with a problem, answered with the reason
        return invoke(checked_call(schema["name"], parsed))

    return agents.FunctionTool(name=schema["name"], description=schema["description"],
                               params_json_schema=schema["parameters"], on_invoke_tool=on_invoke,
                               strict_json_schema=False)


def result_text(result: CallResult) -> str:
    """What a call's result says to the model: its output as JSON, or its error."""
    if not result.ok:
        return f"Error: {result.error}"
    try:
        return json.dumps(result.output, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result.output)


class AgentsSdkAgent:
    """An environment's agent (``agent(question=..., tools=...)`` -> :class:`AgentReply`) that runs the SDK's agent.

    ``toolsets`` names the toolset of each task's question (the calls run there), ``client`` makes an
    ``openai.AsyncOpenAI`` client for each task (:func:`otbench.llm.openai_client.metered_client`) and ``model`` is
    the model's name on its server.
    """

    def __init__(self, execute: Callable[[str, ToolCall], CallResult], toolsets: Mapping[str, str],
                 client: Callable[[], Any], model: str, *, instructions: str = INSTRUCTIONS,
                 max_turns: int = MAX_TURNS) -> None:
        sdk()
        self.execute, self.toolsets, self.client, self.model = execute, dict(toolsets), client, model
        self.instructions, self.max_turns = instructions, max_turns

    def __call__(self, *, question: str, tools: list[DocumentedTool], **_: Any) -> AgentReply:
        return asyncio.run(self._run(question, tools))

    async def _run(self, question: str, tools: list[DocumentedTool]) -> AgentReply:
        agents = sdk()
        toolset = self.toolsets[question]
        calls: list[ToolCall] = []

        def invoke(call: ToolCall) -> str:
            calls.append(call)
            return result_text(self.execute(toolset, call))

        client = self.client()
        model = agents.OpenAIChatCompletionsModel(model=self.model, openai_client=client)
        agent = agents.Agent(name="assistant", instructions=self.instructions, model=model,
                             tools=[function_tool(tool, invoke) for tool in tools],
                             model_settings=agents.ModelSettings(temperature=0.0, max_tokens=MAX_TOKENS))
        error = None
        try:
            result = await agents.Runner.run(agent, question, max_turns=self.max_turns,
                                             run_config=agents.RunConfig(tracing_disabled=True))
            answer = str(result.final_output or "")
        except agents.MaxTurnsExceeded:
            answer, error = "", f"no answer within {self.max_turns} turns"
        except agents.ModelBehaviorError as behaved:  # a reply the SDK could not use: the agent's failure
            answer, error = "", f"the SDK refused a reply: {behaved}"
        finally:
            await client.close()
        if not calls:
            return AgentReply(raw=answer, calls=None, error=error or "the agent answered without calling a tool")
        return AgentReply(raw=answer, calls=calls, error=error)
