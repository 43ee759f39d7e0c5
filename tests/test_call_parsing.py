import json

import pytest

from otbench.core.calls import ToolCall
from otbench.modules.call_parsing import MAX_REPLY_CHARS, parse_reply


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


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"calls": [{"name": "f", "arguments": [1, 2]}]}', "arguments must be an object of named arguments, not a list"),
        ('{"calls": [{"name": "f", "arguments": null}]}', "not null"),
        ('{"calls": [{"name": "f", "arguments": 7}]}', "not a number"),
        ('{"calls": [{"name": "f", "arguments": "n"}]}', "not a string"),
        ('{"calls": [{"name": 5, "arguments": {}}]}', "the tool name must be a string, not a number"),
        ('{"calls": [{"name": "f", "arguments": {"a": "\\ud800"}}]}', "lone surrogate"),
        ('{"calls": [{"name": "f\\udc00", "arguments": {}}]}', "lone surrogate"),
        ('{"calls": [{"name": "f", "arguments": {"a": NaN}}]}', "not a finite number"),
        ("f(a={(1, 2): 3})", "object keys must be strings, not a tuple"),
        ("f(a={b'k': 3})", "object keys must be strings, not bytes"),
        ("f(a={1, 2})", "a set is not a JSON value"),
        (f"f(n=0x{'f' * 4000})", "more than 4300 digits"),
        ('{"name": "f", "arguments": {"a": ' + "[" * 40 + "]" * 40 + "}}", "nested more than 32 levels"),
        ('{"name": "' + "f" * 200 + '", "arguments": {}}', "longer than 128 characters"),
    ],
)
def test_calls_that_do_not_fit_are_failed_calls_with_their_reason(text, problem):
    (call,) = parse_reply(text).calls
    assert problem in call.problem and call.arguments == {}
    assert json.dumps(call.to_dict(), ensure_ascii=False).encode()  # clean enough to log and to prompt with


def test_tuples_are_read_as_lists():
    assert parse_reply("f(xs=(1, (2, 3)))").calls == [ToolCall("f", {"xs": [1, [2, 3]]})]


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


def test_python_calls_one_a_line_are_read_as_several_and_a_line_that_is_no_call_spoils_none():
    assert parse_reply('f(a=1, b="x\\u00e9")\ng(n=[1, 2])').calls == [ToolCall("f", {"a": 1, "b": "xé"}),
                                                                     ToolCall("g", {"n": [1, 2]})]
    assert parse_reply('f(a="x\x85y")\ng(n=2)').calls == [ToolCall("f", {"a": "x\x85y"}), ToolCall("g", {"n": 2})]
    assert parse_reply('f(a=1)\nprint(open("secret"))').calls is None  # a positional argument is not a call written out
    assert parse_reply("f(a=1,\n  b=2)").calls == [ToolCall("f", {"a": 1, "b": 2})]  # one call over two lines
