import json

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
