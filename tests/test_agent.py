import json

import pytest
from scripted_lm import prompt_text, scripted_lm

from otbench.core.calls import ToolCall
from otbench.modules.agent import FunctionCallingAgent, call_schema
from otbench.modules.tool_docs import DocumentedTool


def test_agent_renders_current_docs_at_every_call_and_constrains_output():
    seen = []

    def respond(messages):
        seen.append(prompt_text(messages))
        return '{"calls": [{"name": "function_1", "arguments": {"n": 3}}]}'

    tool = DocumentedTool("function_1")
    agent = FunctionCallingAgent()
    agent.lm = scripted_lm(respond)
    assert agent(question="3!?", tools=[tool]).calls == [ToolCall("function_1", {"n": 3})]
    tool.with_docs(description="Returns the factorial of n.")
    agent(question="3!?", tools=[tool])
    assert "factorial" not in seen[0] and "Returns the factorial of n." in seen[1]
    assert agent.lm.ledger.phase("agent").calls == 2


def test_a_reply_that_is_not_a_call_is_a_failure_with_its_reason():
    agent = FunctionCallingAgent()
    agent.lm = scripted_lm(lambda messages: "I would rather not.")
    reply = agent(question="hi", tools=[DocumentedTool("function_1")])
    assert reply.calls is None and reply.error == "no tool call found in the reply"


def test_call_schema_allows_only_offered_tools():
    schema = call_schema(["function_1", "function_2"])
    assert schema["properties"]["calls"]["items"]["properties"]["name"]["enum"] == ["function_1", "function_2"]
    assert schema["properties"]["calls"]["minItems"] == 1
    json.dumps(schema)


class _RecordingLM:
    """Stands in for an LM to show what a request carries; the real grammar path runs in test_embedded."""

    def __init__(self, reply: str, *, takes_grammar: bool) -> None:
        self.reply, self.takes_grammar, self.requests = reply, takes_grammar, []

    def __call__(self, *, messages, **request):
        self.requests.append((messages, request))
        return [self.reply]


def test_python_calls_are_asked_for_in_the_prompt_and_constrained_where_the_model_takes_a_grammar():
    tools = [DocumentedTool("function_1"), DocumentedTool("function_2")]
    for takes_grammar in (True, False):
        agent = FunctionCallingAgent(call_form="python")
        agent.lm = _RecordingLM('function_2(a=1, b="x")\nfunction_1(n=[1, 2])', takes_grammar=takes_grammar)
        reply = agent(question="?", tools=tools)
        assert reply.calls == [ToolCall("function_2", {"a": 1, "b": "x"}), ToolCall("function_1", {"n": [1, 2]})]
        messages, request = agent.lm.requests[0]
        assert "as Python: <tool name>(<parameter>=<value>, ...)" in messages[0]["content"]
        assert "response_format" not in request  # a JSON schema would contradict the form asked for
        grammar = request.get("extra_body", {}).get("grammar")
        assert (grammar is not None) is takes_grammar
        assert grammar is None or '"function_1" | "function_2"' in grammar


def test_an_unknown_call_form_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="call_form must be one of"):
        FunctionCallingAgent(call_form="yaml")
