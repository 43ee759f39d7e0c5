"""Exploration that spreads the agent's calls over every tool of a set."""

from modules.agent import AgentReply
from modules.tool_docs import DocumentedTool
from optimizers.spread import SpreadCalls
from otbench.calls import ToolCall


def test_calls_to_the_set_go_to_each_offered_tool_in_turn_with_the_agents_arguments():
    tools = [DocumentedTool(name=f"search_{n}") for n in (1, 2, 3)]

    def agent(question, tools):
        name = "final_answer" if question == "done" else "search_1"
        return AgentReply(raw="{}", calls=[ToolCall(name, {"query": question})])

    spread = SpreadCalls(agent, {"search_1", "search_2", "search_3"})
    sent = [spread(question=q, tools=tools).calls[0] for q in ("a", "b", "done", "c", "d")]
    assert [call.name for call in sent] == ["search_1", "search_2", "final_answer", "search_3", "search_1"]
    assert [call.arguments["query"] for call in sent] == ["a", "b", "done", "c", "d"]


def test_an_unreadable_reply_or_a_single_tool_is_left_as_it_is():
    unreadable = AgentReply(raw="??", calls=None, error="not JSON")
    assert SpreadCalls(lambda **_: unreadable, {"a", "b"})(question="q", tools=[DocumentedTool(name="a")]) is unreadable
