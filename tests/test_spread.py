"""Exploration that spreads the agent's calls over the tools sharing the called tool's interface."""

from otbench.core.calls import ToolCall
from otbench.modules.agent import AgentReply
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec
from otbench.optimizers.toolobserver.spread import SpreadCalls


def _tool(name: str, *parameters: str) -> DocumentedTool:
    return DocumentedTool(name, parameters=[ParameterSpec(p, "string") for p in parameters])


def test_calls_go_to_each_offered_tool_of_the_same_interface_in_turn_with_the_agents_arguments():
    tools = [*(_tool(f"search_{n}", "query") for n in (1, 2, 3)), _tool("final_answer", "answer")]

    def agent(question, tools):
        call = ToolCall("final_answer", {"answer": "x"}) if question == "done" else ToolCall("search_1", {"query": question})
        return AgentReply(raw="{}", calls=[call])

    spread = SpreadCalls(agent)
    sent = [spread(question=q, tools=tools).calls[0] for q in ("a", "b", "done", "c", "d")]
    assert [call.name for call in sent] == ["search_1", "search_2", "final_answer", "search_3", "search_1"]
    assert [call.arguments.get("query") for call in sent] == ["a", "b", None, "c", "d"]


def test_tools_of_other_interfaces_or_unknown_ones_are_never_spread_to():
    tools = [_tool("f", "a", "b"), _tool("g", "a", "b"), _tool("h", "text"), DocumentedTool("k"), DocumentedTool("m")]
    spread = SpreadCalls(lambda **_: AgentReply(raw="{}", calls=[ToolCall("h", {"text": "x"}), ToolCall("k", {}),
                                                                  ToolCall("f", {"a": 1, "b": 2})]))
    assert [call.name for call in spread(question="q", tools=tools).calls] == ["h", "k", "f"]
    assert [call.name for call in spread(question="q", tools=tools).calls] == ["h", "k", "g"]


def test_an_unreadable_reply_or_a_single_tool_is_left_as_it_is():
    unreadable = AgentReply(raw="??", calls=None, error="not JSON")
    assert SpreadCalls(lambda **_: unreadable)(question="q", tools=[DocumentedTool(name="a")]) is unreadable
