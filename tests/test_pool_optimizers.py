"""EasyTool, Play2Prompt and GEPA run on the pool as they run elsewhere (ToolObserver: tests/test_pool.py), with
scripted LMs: each writes docs for pool tools (EasyTool and Play2Prompt keep them; GEPA tries them in rollouts
that search), and the agent finds tools through ``search_tools``."""

import json
import random
import re

import pytest
from scripted_lm import prompt_text, scripted_lm, shown_tools
from test_pool import HashingEncoder

from otbench.envs.pool import catalogue, tasks
from otbench.envs.pool.env import ANSWER_TOOL, SEARCH_TOOL, TOOLSET, PoolEnvironment
from otbench.envs.pool.index import EmbeddingStore, ToolIndex
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.program import ToolAgentProgram
from otbench.optimizers.easytool import EasyTool, EasyToolWriter
from otbench.optimizers.gepa import GEPA
from otbench.optimizers.play2prompt import DocRefiner, Play2Prompt, ToolPlayer

LEARNED = "Learned: converts or looks up what its name says."


def agent_reply(messages):
    """Search with the request, then answer without calling anything."""
    content = prompt_text(messages)
    if "Call 1:" not in content:
        request = content.split("Request: ")[1].split("\n")[0]
        return json.dumps({"calls": [{"name": SEARCH_TOOL, "arguments": {"query": request, "k": 2}}]})
    return json.dumps({"calls": [{"name": ANSWER_TOOL, "arguments": {"answer": "unknown"}}]})


def _arguments(shown):
    """Valid arguments for the tool shown as ``shown``, the same every time."""
    real = {name: real for real, name in catalogue.shown_names().items()}[shown]
    return tasks._arguments(catalogue.by_name()[real], random.Random(0))


def scorer_reply(messages):
    """Play2Prompt's scorer: calls the tool a request names when its docs are the learned ones, else answers."""
    content = prompt_text(messages)
    named = re.search(r"Request: use (tool_\d{4})", content)
    documented = {function["name"]: json.dumps(function) for function in shown_tools(messages)} \
        if "Tools:" in content else {}
    if named and LEARNED in documented.get(named.group(1), ""):
        return json.dumps({"calls": [{"name": named.group(1), "arguments": _arguments(named.group(1))}]}, default=str)
    return agent_reply(messages)


def helper_reply(messages):
    """Every helper's reply: a purpose and guideline (EasyTool), a call with valid arguments for the tool the prompt
    names, a request and a score (Play2Prompt's player), a description (its refiner), a fenced doc (GEPA)."""
    content = prompt_text(messages)
    if "Condense" in content:
        return json.dumps({"purpose": LEARNED})
    if "scenario" in content:
        return json.dumps({"scenario": "a request names it", "example_arguments": {}})
    if "Propose one call" in content:
        return json.dumps({"arguments": _arguments(re.findall(r"tool_\d{4}", content)[-1])}, default=str)
    if "Write the request" in content:
        return json.dumps({"query": f"use {re.findall(r'tool_[0-9]{4}', content)[-1]}"})
    if '"score"' in content:
        return json.dumps({"score": 8})
    if "```" in content or "## Tool" in content:
        return f"```\n{LEARNED}\n```"
    return json.dumps({"description": LEARNED})


def _optimizer(name, env, ledger):
    helper = scripted_lm(helper_reply, ledger=ledger, phase="editor")
    scorer = FunctionCallingAgent(instructions=env.agent_instructions)
    scorer.lm = scripted_lm(scorer_reply, ledger=ledger, phase="exploration")
    if name == "easytool":
        writer = EasyToolWriter()
        writer.lm = helper
        return EasyTool(env=env, writer=writer, progress=False)
    if name == "play2prompt":
        player, refiner = ToolPlayer(), DocRefiner()
        player.lm, refiner.lm = scripted_lm(helper_reply, ledger=ledger, phase="exploration"), helper
        return Play2Prompt(env=env, player=player, refiner=refiner, scorer=scorer, initial_samples=1, retries=0,
                           beam_width=1, expansions=1, iterations=1, progress=False)
    return GEPA(env=env, reflection_lm=helper, scorer=scorer, budget=8, progress=False)


@pytest.mark.parametrize("name", ["easytool", "play2prompt", "gepa"])
def test_an_optimizer_runs_on_the_pool_and_writes_pool_docs(name):
    ledger = TokenLedger()
    with PoolEnvironment(pool_size="30", index=ToolIndex(EmbeddingStore(HashingEncoder()))) as env:
        agent = FunctionCallingAgent(instructions=env.agent_instructions)
        agent.lm = scripted_lm(agent_reply, ledger=ledger, phase="agent")
        train = [task for task in env.tasks("train") if len(task.calls) == 1][:2]
        learned = _optimizer(name, env, ledger).compile(ToolAgentProgram(env.toolbox(), agent), trainset=train)
        descriptions = [tool.description for tool in learned.toolbox.toolset(TOOLSET)]
        assert len(descriptions) == 30
        assert ledger.phase("editor").calls > 0
        if name != "gepa":  # GEPA keeps a rewrite only when it scores better, and this agent never answers right
            assert any(LEARNED in text for text in descriptions)
        else:
            assert ledger.phase("exploration").calls > 0


def test_coverage_on_the_pool_opens_each_tool_s_doc_with_a_train_request_it_answers():
    """On the pool a call is judged on a request with no run (tools are found by a search first): coverage gives a tool
    a train request it answers, and the doc opens with it, the words the tool's requests are searched with."""
    from otbench.optimizers.toolobserver.teleprompter import ToolObserver

    def describe(messages):
        names = re.findall(r"^Tool: (\S+)", prompt_text(messages), re.MULTILINE)
        return json.dumps({"tools": [{"name": name, "description": LEARNED} for name in names]})

    with PoolEnvironment(pool_size="30", index=ToolIndex(EmbeddingStore(HashingEncoder()))) as env:
        agent = FunctionCallingAgent(instructions=env.agent_instructions)
        agent.lm = scripted_lm(agent_reply, phase="agent")
        train = env.tasks("train")
        learned = ToolObserver(env=env, editor_lm=scripted_lm(describe, phase="editor"), max_iterations=1,
                               coverage=True, progress=False).compile(ToolAgentProgram(env.toolbox(), agent),
                                                                      trainset=train)
        opened = {tool.name: tool.description for tool in learned.toolbox.toolset(TOOLSET)
                  if tool.description.startswith("It answered: ")}
        assert len(opened) >= 15
        by_text = {task.text: task for task in train}
        for name, description in opened.items():
            request, _ = json.JSONDecoder().raw_decode(description.removeprefix("It answered: "))
            assert env.to_real[name] in by_text[request].needs  # a request the tool is needed for, not a coincidence
