import pytest

from modules.call_parsing import MAX_REPLY_CHARS, parse_reply
from otbench.calls import ToolCall


@pytest.mark.parametrize(
    "text, calls",
    [
        ('{"calls": [{"name": "function_1", "arguments": {"n": 5}}]}', [ToolCall("function_1", {"n": 5})]),
        ('[{"name": "f", "arguments": {}}, {"name": "g", "args": {"x": 1}}]', [ToolCall("f"), ToolCall("g", {"x": 1})]),
        ('Here:\n```json\n{"name": "f", "arguments": "{\\"a\\": 1}"}\n```', [ToolCall("f", {"a": 1})]),
        ('{"tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}', [ToolCall("f")]),
        ("function_1(n=5, p=-0.5, xs=[1, 2])", [ToolCall("function_1", {"n": 5, "p": -0.5, "xs": [1, 2]})]),
        ('[f(a=1), g(b="x")]', [ToolCall("f", {"a": 1}), ToolCall("g", {"b": "x"})]),
        ('thinking {"a": 1} then {"name": "f", "arguments": {"k": true}}', [ToolCall("f", {"k": True})]),
    ],
)
def test_calls_are_read_from_json_fences_and_python_syntax(text, calls):
    assert parse_reply(text).calls == calls


def test_wrong_argument_types_are_kept_for_the_metrics_to_score():
    assert parse_reply('{"calls": [{"name": "f", "arguments": [1, 2]}]}').calls == [ToolCall("f", [1, 2])]


@pytest.mark.parametrize(
    "text",
    ["", "   ", "I cannot help with that.", '__import__("os").system("rm -rf /")', "f(*args)", "f(1, 2)",
     "obj.method(a=1)", "f(a=open('x'))", '{"calls": [{"arguments": {}}]}', "[" * 50_000, '{"a": ' * 10_000],
)
def test_non_calls_and_hostile_text_are_parse_failures_not_crashes(text):
    parsed = parse_reply(text)
    assert parsed.calls is None and parsed.error


def test_huge_replies_are_refused_with_a_reason():
    parsed = parse_reply("x" * (MAX_REPLY_CHARS + 1))
    assert parsed.calls is None and "exceeds" in parsed.error
