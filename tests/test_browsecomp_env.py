import argparse
import json
import re
from dataclasses import replace

import pytest
from browsecomp_world import tiny_env
from scripted_lm import prompt_text, scripted_lm, shown_tools

from otbench.core.calls import ToolCall
from otbench.envs.browsecomp.tools import ANSWER_TOOL
from otbench.envs.registry import add_environment_arguments, options_from_values, resolve
from otbench.errors import ConfigError
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import AgentReply, FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.optimizers.toolobserver.knobs import IMPROVED, PAPER
from otbench.optimizers.toolobserver.teleprompter import ToolObserver


class ScriptedAgent:
    """Replies with the given calls in turn and records what it was shown."""

    def __init__(self, *replies: ToolCall | None) -> None:
        self.replies = list(replies)
        self.seen: list[tuple[str, list[str]]] = []

    def __call__(self, *, question, tools, **_):
        self.seen.append((question, [tool.name for tool in tools]))
        call = self.replies.pop(0) if self.replies else ToolCall("search_1", {"query": f"again {len(self.seen)}"})
        if call is None:
            return AgentReply(raw="gibberish", calls=None, error="no JSON")
        return AgentReply(raw=json.dumps(call.to_dict()), calls=[call])


def test_the_agent_sees_earlier_calls_and_results_and_bad_calls_are_errors_not_crashes():
    env = tiny_env()
    task = env.tasks("test")[0]
    hop = task.hops[0]
    right_tool = env.tool_of_domain[hop.domain]
    agent = ScriptedAgent(None, ToolCall("no_such_tool", {"query": "x"}), ToolCall(right_tool, {"q": "x"}),
                          ToolCall(right_tool, {"query": hop.query}), ToolCall(ANSWER_TOOL, {"answer": "nothing"}))
    trajectory = env.rollout(agent, env.toolbox(), task)
    assert [step.ok for step in trajectory.steps] == [False, False, True]
    assert "no tool named 'no_such_tool'" in trajectory.steps[0].error
    assert "'query'" in trajectory.steps[1].error
    last_prompt = agent.seen[-1][0]
    assert last_prompt.startswith(task.text) and f"Call 3: {right_tool}(query={hop.query!r})" in last_prompt
    assert hop.subject in last_prompt and "Searches left: 7" in last_prompt
    assert trajectory.metrics["calls"] == 1.0 and trajectory.metrics["accuracy"] == 0.0
    assert trajectory.metrics["evidence_recall"] == 1 / len(task.hops)
    assert trajectory.parse_error == "no JSON" and not trajectory.success
    assert trajectory.feedback.startswith(f"answered 'nothing'; the correct answer is {task.answer!r}")


def test_when_the_budget_is_spent_only_the_answer_tool_is_offered():
    env = tiny_env(max_calls=3)
    agent = ScriptedAgent()  # searches forever
    trajectory = env.rollout(agent, env.toolbox(), env.tasks("test")[0])
    assert len(trajectory.steps) == 3 and trajectory.metrics["calls"] == 3.0
    assert [names for _, names in agent.seen][-1] == [ANSWER_TOOL]
    assert len(agent.seen[0][1]) == 11 and agent.seen[0][1][-1] == ANSWER_TOOL
    assert "No searches left" in agent.seen[-1][0]
    assert trajectory.metrics["accuracy"] == 0.0 and trajectory.feedback.startswith("gave no answer")


def test_the_second_tool_set_adds_a_whole_corpus_search_and_the_oracle_still_scores_perfectly():
    env = tiny_env(setting="domains+all")
    assert len(env.toolbox().toolset("domains+all")) == 11
    tasks = env.tasks("train")
    summary = env.summarise([env.rollout(env.oracle_agent(tasks), env.toolbox("gold"), t) for t in tasks])
    assert summary["accuracy"] == 1.0 and summary["sequence_match"] == 1.0


def test_a_search_tool_runs_alone_for_optimizers_that_explore_tools_one_by_one():
    env = tiny_env()
    task = env.tasks("test")[0]
    hop = task.hops[0]
    right_tool = env.tool_of_domain[hop.domain]
    found = env.execute(env.toolset_of(task), ToolCall(right_tool, {"query": hop.query}))
    assert found.ok and hop.subject in json.dumps(found.output)
    assert not env.execute(env.toolset, ToolCall(right_tool, {})).ok


def test_an_exact_repeat_of_a_search_spends_a_search_runs_nothing_and_says_where_its_results_are():
    env = tiny_env(max_calls=4)
    task = env.tasks("test")[0]
    hop = task.hops[0]
    right_tool = env.tool_of_domain[hop.domain]
    search = ToolCall(right_tool, {"query": hop.query})
    agent = ScriptedAgent(search, search, ToolCall(right_tool, {"query": hop.query + " born"}), search)
    trajectory = env.rollout(agent, env.toolbox(), task)
    assert [step.call.arguments["query"] for step in trajectory.steps] == [hop.query, hop.query + " born"]
    assert "Your last call repeated call 1 exactly, so it was not run" in agent.seen[2][0]
    assert "Searches left: 2" in agent.seen[2][0] and "repeated" not in agent.seen[3][0]
    assert [names for _, names in agent.seen][-1] == [ANSWER_TOOL]  # two searches and two refused repeats
    assert "2 exact repeat(s) of an earlier search were not run" in trajectory.feedback


def test_a_repeat_is_run_when_refusal_is_off_and_a_failed_search_may_be_retried():
    task = tiny_env().tasks("test")[0]
    search = ToolCall(tiny_env().tool_of_domain[task.hops[0].domain], {"query": task.hops[0].query})
    ran = tiny_env(max_calls=3, repeats_refused=False).rollout(ScriptedAgent(search, search), tiny_env().toolbox(), task)
    assert [step.call for step in ran.steps[:2]] == [search, search]
    assert tiny_env(repeats_refused=False).setting == "domains repeats=run" and tiny_env().setting == "domains"
    assert resolve(options_from_values(vars(_parse(["--no-refuse-repeats"])))).own["refuse_repeats"] is False
    wrong = ToolCall(search.name, {"q": task.hops[0].query})
    retried = tiny_env(max_calls=3).rollout(ScriptedAgent(wrong, wrong), tiny_env().toolbox(), task)
    assert [step.ok for step in retried.steps[:2]] == [False, False]


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_environment_arguments(parser)
    return parser.parse_args(["--env", "browsecomp", *argv])


@pytest.mark.parametrize("argv, message", [
    (["--setting", "everything"], "unknown setting 'everything'"),
    (["--toolset", "everything"], "unknown setting 'everything'"),
    (["--retriever", "tfidf"], "unknown retriever"),
    (["--max-calls", "0"], "--max-calls"),
    (["--setting", "names_only"], "unknown setting 'names_only'"),
])
def test_bad_options_are_one_line_user_errors(argv, message):
    with pytest.raises(ConfigError, match=message):
        resolve(options_from_values(vars(_parse(argv))))
    assert resolve(options_from_values(vars(_parse(["--toolset", "domains+all"])))).setting == "domains+all"
    resolve(options_from_values(vars(_parse(["--setting", "domains+all", "--retriever", "dense"]))))


def _tools_in(content: str) -> dict[str, str]:
    if "Tools:" not in content:
        return {}
    return {function["name"]: function.get("description", "")
            for function in shown_tools([{"role": "user", "content": content}])}


def agent_reply(messages):
    """Search once with the tool documented as covering Wikipedia (else search_1), then give up."""
    content = prompt_text(messages)
    if "Call 1:" in content:
        return json.dumps({"calls": [{"name": ANSWER_TOOL, "arguments": {"answer": "unknown"}}]})
    documented = [name for name, text in _tools_in(content).items() if "Wikipedia" in text]
    question = content.split("Request: ")[1].split("\n")[0]
    return json.dumps({"calls": [{"name": (documented or ["search_1"])[0], "arguments": {"query": question}}]})


def test_toolobserver_learns_shared_docs_offline_from_multi_turn_attempts():
    env = tiny_env()
    ledger = TokenLedger()
    agent, editor = FunctionCallingAgent(instructions=env.agent_instructions), DocEditor()
    agent.lm = scripted_lm(agent_reply, ledger=ledger, phase="agent")
    prompts = []

    def editor_reply(messages):
        prompts.append(prompt_text(messages))
        return json.dumps({"updates": [{"name": "search_3", "description": "Searches Wikipedia biographies."}]})

    editor.lm = scripted_lm(editor_reply, ledger=ledger, phase="editor")
    program = ToolAgentProgram(env.toolbox(), agent)
    train = env.tasks("train")
    optimizer = ToolObserver(env=env, editor=editor, mode="offline", improvements=PAPER, max_iterations=2, batch_size=4,
                             progress=False, gate=False)  # the calls counted are learning's alone
    program = optimizer.compile(program, trainset=train)
    assert ledger.phase("agent").calls == 2 * 2 * len(train)  # two turns per task, two iterations
    assert ledger.phase("editor").calls == 2 * (2 + 1)  # two batches and a merge per iteration
    assert "Outcome: failure" in prompts[0] and "Feedback: answered 'unknown'" in prompts[0]
    assert "Call 1: search_1({\"query\": \"What is" in prompts[0] and "returned [{'url'" in prompts[0]
    assert program.toolbox.get("domains", "search_3").description == "Searches Wikipedia biographies."
    assert {t.steps[0].call.name for t in optimizer.final_trajectories} == {"search_3"}


@pytest.mark.parametrize("spread, replay", [(True, False), (False, False), (False, True)])
def test_improved_offline_toolobserver_tells_the_editor_where_each_tools_results_come_from(spread, replay):
    env = tiny_env()
    prompts = []

    def editor_reply(messages):
        prompts.append(prompt_text(messages))
        return json.dumps({"description": "Searches one domain.", "parameters": {"query": "search words"}})

    ledger = TokenLedger()
    agent, editor = FunctionCallingAgent(instructions=env.agent_instructions), DocEditor()
    agent.lm = scripted_lm(agent_reply, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(editor_reply, ledger=ledger, phase="editor")
    program = ToolAgentProgram(env.toolbox(), agent)
    knobs = replace(IMPROVED, spread_calls=spread, replay_calls=replay)
    program = ToolObserver(env=env, editor=editor, mode="offline", max_iterations=1, improvements=knobs,
                           progress=False).compile(program, trainset=env.tasks("train"))
    described = [re.search(r"Tool: (search_\d+)", prompt).group(1) for prompt in prompts]
    train = len(env.tasks("train"))  # the agent searches once per question, always with search_1
    tools = len(env.toolbox().toolset("domains"))
    # spread: the i-th search goes to search_i; replay: every search is repeated on every other tool
    assert described == ([f"search_{n}" for n in range(1, tools + 1)] if replay else
                         [f"search_{n}" for n in range(1, train + 1)] if spread else ["search_1"])
    assert all("its results came from: " in p for p in prompts)
    assert all("average outcome of its calls" in p for p in prompts[:1 if replay else None])  # repeats: no question
    learned = program.toolbox.get("domains", "search_1").description
    assert learned.startswith("Searches one domain. Results seen came from ")  # the sources, cited by code
