"""Compact reply grammars: every reply a model should write is admitted, prose keys and padding are not."""

import json

import pytest
from chat_server import pieces
from gbnf_matcher import Grammar
from hypothesis import given, settings
from hypothesis import strategies as st

from otbench.core.calls import ToolCall
from otbench.llm.grammar import UnsupportedSchema, agreed_prefix, schema_as_grammar, schema_opening, schema_to_gbnf
from otbench.modules.agent import call_schema
from otbench.modules.call_parsing import parse_reply
from otbench.modules.editor import describe_schema, updates_schema
from otbench.optimizers import easytool, play2prompt

TOOLS = ["function_1", "function_2", "get_weather"]
AGENT = Grammar(schema_to_gbnf(call_schema(TOOLS)))


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def reply(*calls):
    return compact({"calls": [{"name": name, "arguments": arguments} for name, arguments in calls]})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12)
    | st.floats(allow_nan=False, allow_infinity=False, width=32) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,39}", fullmatch=True)
calls = st.lists(st.tuples(st.sampled_from(TOOLS), st.dictionaries(identifiers, json_values, max_size=4)),
                 min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(calls)
def test_every_compact_call_reply_is_admitted_and_parses_to_the_same_calls(drawn):
    text = reply(*drawn)
    assert AGENT.accepts(text), text
    assert parse_reply(text).calls == [ToolCall(name, arguments) for name, arguments in drawn]


@pytest.mark.parametrize("text", [
    reply(("function_1", {})),                                  # no arguments: how Python lists the required ones
    reply(("function_1", {"n": 5}), ("function_1", {"n": 6})),           # one tool several times
    reply(("function_2", {"a": [1, -2.5, 3e-07], "b": {"nested key": None}, "c": True})),
    reply(("get_weather", {"city": 'Zürich "old town"\n', "units": "metric"})),
    '{"calls":[{"name":"function_1","arguments":{"s":"\\u00e9\\t\\\\"}}]}',   # escapes a model may write
])
def test_the_reply_shapes_a_model_should_write_are_admitted(text):
    assert parse_reply(text).calls is not None
    assert AGENT.accepts(text), text


@pytest.mark.parametrize("text", [
    reply(("function_1", {"f(x)": 5})),                                  # prose as an argument name
    reply(("function_1", {"The number whose factorial is wanted": 5})),
    reply(("function_1", {"1st": 5})),
    reply(("function_1", {"a" * 41: 5})),                                # longer than an identifier may be
    reply(("math_factorial", {"n": 5})),                                 # a tool that was not offered
    '{"calls":[]}',                                                      # no call at all
    json.dumps({"calls": [{"name": "function_1", "arguments": {"n": 5}}]}),  # spaces: not compact
    json.dumps({"calls": [{"name": "function_1", "arguments": {}}]}, indent=2),
    reply(("function_1", {"n": 5})) + " Done.",                          # text after the JSON
    '{"calls":[{"arguments":{},"name":"function_1"}]}',                  # keys out of the schema's order
])
def test_prose_keys_unknown_tools_and_padding_are_rejected(text):
    assert not AGENT.accepts(text), text


def test_editor_replies_respect_the_least_number_of_updates_and_the_length_bound():
    optional = Grammar(schema_to_gbnf(updates_schema(["function_1"])))
    required = Grammar(schema_to_gbnf(updates_schema(["function_1"], required=1)))
    one = compact({"updates": [{"name": "function_1", "description": "Returns n! for an integer n."}]})
    assert optional.accepts(one) and required.accepts(one)
    assert optional.accepts('{"updates":[]}') and not required.accepts('{"updates":[]}')
    too_long = compact({"updates": [{"name": "function_1", "description": "x" * 701}]})
    assert not optional.accepts(too_long)
    assert not optional.accepts(compact({"updates": [{"name": "function_1", "description": ""}]}))


def test_every_reply_schema_of_the_optimizers_renders_and_admits_its_example():
    examples = {
        json.dumps(play2prompt._ARGUMENTS_SCHEMA): {"arguments": {"n": 3, "base_price": 9.5}},
        json.dumps(play2prompt._QUERY_SCHEMA): {"query": "What is 5 factorial?"},
        json.dumps(play2prompt._SCORE_SCHEMA): {"score": 10},
        json.dumps(play2prompt._DESCRIPTION_SCHEMA): {"description": "Computes n!."},
        json.dumps(easytool._CONDENSE_SCHEMA): {"purpose": "Computes n!."},
        json.dumps(easytool._GUIDELINE_SCHEMA): {"scenario": "factorials", "example_arguments": {"n": 3}},
    }
    for schema, example in examples.items():
        grammar = Grammar(schema_to_gbnf(json.loads(schema)))
        assert grammar.accepts(compact(example)), schema
    score = Grammar(schema_to_gbnf(play2prompt._SCORE_SCHEMA))
    assert [n for n in range(-1, 13) if score.accepts(compact({"score": n}))] == list(range(1, 11))
    arguments = Grammar(schema_to_gbnf(play2prompt._ARGUMENTS_SCHEMA))
    assert not arguments.accepts(compact({"arguments": {"param 1": 3}}))


def test_optional_properties_may_be_left_out_in_order():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}}
    grammar = Grammar(schema_to_gbnf(schema))
    assert all(grammar.accepts(text) for text in ("{}", '{"a":1}', '{"a":1,"b":true}'))
    assert not grammar.accepts('{"b":true,"a":1}')


def test_a_schema_feature_that_is_not_rendered_is_refused_not_dropped():
    with pytest.raises(UnsupportedSchema, match="anyOf"):
        schema_to_gbnf({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    with pytest.raises(UnsupportedSchema, match="pattern"):
        schema_to_gbnf({"type": "string", "pattern": "^(a|b)$"})


def test_a_reply_schema_travels_as_a_grammar_and_other_requests_are_unchanged():
    schema = call_schema(["function_1"])
    response_format = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    request = {"max_tokens": 9, "response_format": response_format, "extra_body": {"seed": 1}}
    sent = schema_as_grammar(request)
    assert "response_format" not in sent and sent["max_tokens"] == 9
    assert sent["extra_body"] == {"seed": 1, "grammar": schema_to_gbnf(schema)}
    plain = {"max_tokens": 9}
    assert schema_as_grammar(plain) is plain


def _after_every_cut(schema, text):
    """Whether ``text`` is admitted as the opening of replies under ``schema`` cut anywhere, then the rest."""
    opening = schema_opening(schema)
    if not text.startswith(opening.text):
        return False
    return all(Grammar(opening.grammar_after(opening.text[:cut])).accepts(text[cut:])
               for cut in range(len(opening.text) + 1))


@settings(max_examples=60, deadline=None)
@given(calls, st.sampled_from([TOOLS, ["function_1"], ["get_weather", "get_time"]]))
def test_a_reply_is_its_opening_then_what_the_rest_grammar_admits(drawn, offered):
    drawn = [(offered[index % len(offered)], arguments) for index, (_, arguments) in enumerate(drawn)]
    assert _after_every_cut(call_schema(offered), reply(*drawn))


@pytest.mark.parametrize("schema, example", [
    (describe_schema(["n", "base"]), {"description": "Returns n in base.", "parameters": {"n": "a number", "base": "2"}}),
    (describe_schema([]), {"description": "Lists the tables."}),
    (updates_schema(["function_1"], required=1), {"updates": [{"name": "function_1", "description": "Adds."}]}),
    (play2prompt._SCORE_SCHEMA, {"score": 7}),
    (easytool._GUIDELINE_SCHEMA, {"scenario": "factorials", "example_arguments": {"n": 3}}),
    ({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}}, {"a": 1}),
])
def test_every_reply_schema_s_example_is_its_opening_then_the_rest(schema, example):
    assert Grammar(schema_to_gbnf(schema)).accepts(compact(example))
    assert _after_every_cut(schema, compact(example))


@pytest.mark.parametrize("text", [
    reply(("function_1", {"f(x)": 5})), '{"calls":[]}', reply(("function_1", {"n": 5})) + " Done.",
    reply(("math_factorial", {"n": 5})),
])
def test_what_the_whole_grammar_refuses_the_rest_refuses_too(text):
    opening = schema_opening(call_schema(TOOLS))
    cut = len(opening.text) if text.startswith(opening.text) else 0
    assert not Grammar(opening.grammar_after(opening.text[:cut])).accepts(text[cut:])


def test_the_written_opening_ends_where_every_continuation_s_tokens_split():
    one = schema_opening(call_schema(["function_1"]))
    assert one.text == '{"calls":[{"name":"function_1","arguments":{'
    # '{' then '"a' is one run of punctuation ('{"'): writing the '{' would split a token the model writes whole
    assert agreed_prefix(one, pieces) == '{"calls":[{"name":"function_1","arguments'
    several = schema_opening(call_schema(["get_weather", "get_time"]))
    assert several.text == '{"calls":[{"name":"get_' and agreed_prefix(several, pieces) == several.text
    assert agreed_prefix(one, lambda text: None) == ""  # a tokenizer that cannot say: nothing is written
    assert agreed_prefix(schema_opening(play2prompt._SCORE_SCHEMA), pieces) == '{"score":'
    with pytest.raises(ValueError, match="does not open"):
        one.grammar_after("{}")
