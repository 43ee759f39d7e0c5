"""``otbench serve`` speaks OpenAI tool calling: the OpenAI Python SDK against the real front
(:mod:`otbench.llm.front`), with a scripted llama.cpp behind it (:mod:`scripted_llama`) whose replies must be ones
the grammar the front sent admits."""

import json

import openai
import pytest
from gbnf_matcher import Grammar
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted_llama import KEY, TIMINGS, scripted_llama

from otbench.llm.front import ToolFront
from otbench.llm.grammar import CallableTool, tool_call_grammar
from otbench.llm.tool_calls import read_calls

TOOLS = [{"type": "function", "function": {"name": "function_1", "description": "Greatest common divisor of a and b.",
                                            "parameters": {"type": "object", "properties": {"a": {"type": "integer"},
                                                                                             "b": {"type": "integer"}},
                                                           "required": ["a", "b"]}}},
         {"type": "function", "function": {"name": "function_2", "description": "Sum of the numbers.",
                                            "parameters": {"type": "object", "properties": {}}}}]
QUESTION = [{"role": "user", "content": "What is the GCD of 36 and 48?"}]


def fenced(name, arguments):
    return "```json\n" + json.dumps({"name": name, "arguments": arguments}, separators=(",", ":")) + "\n```"


def tagged(name, arguments):
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}, separators=(",", ":")) + "\n</tool_call>"


@pytest.fixture
def serve():
    """``serve(reply)``: an OpenAI client of a front whose scripted model answers ``reply(completion request)``."""
    opened = []

    def start(reply, **options):
        script = scripted_llama(reply if callable(reply) else lambda body: reply, **options)
        backend, seen = script.__enter__()
        front = ToolFront(backend, KEY)
        url = front.start()
        opened.append((script, front))
        return openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0), seen

    yield start
    for script, front in opened:
        front.shutdown()
        front.server_close()
        script.__exit__(None, None, None)


def ask(client, **request):
    return client.chat.completions.create(model="local", messages=request.pop("messages", QUESTION), tools=TOOLS,
                                          **request)


def test_a_call_comes_back_as_tool_calls_with_an_id_a_name_and_json_arguments(serve):
    client, seen = serve(fenced("function_1", {"a": 36, "b": 48}))
    reply = ask(client)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.id.startswith("call_") and call.function.name == "function_1"
    assert json.loads(call.function.arguments) == {"a": 36, "b": 48}
    assert reply.usage.prompt_tokens == 40 and reply.usage.completion_tokens == 12  # llama.cpp's counts
    assert reply.model_extra["timings"] == TIMINGS  # kept for clients that meter the server
    (template,) = seen.templates
    assert template == {"messages": QUESTION, "tools": TOOLS}  # the model's chat template renders the tools
    (completion,) = seen.completions
    assert completion["prompt"] == json.dumps(template, sort_keys=True) and not completion["stream"]


def test_auto_lets_the_model_answer_in_text(serve):
    client, seen = serve("The GCD of 36 and 48 is 12.")
    choice = ask(client, tool_choice="auto").choices[0]
    assert choice.message.content == "The GCD of 36 and 48 is 12." and not choice.message.tool_calls
    assert choice.finish_reason == "stop"
    assert Grammar(seen.completions[0]["grammar"]).accepts(tagged("function_2", {}))


def test_several_calls_in_one_reply_get_ids_of_their_own(serve):
    client, _ = serve(fenced("function_1", {"a": 36, "b": 48}) + "\n" + tagged("function_2", {"numbers": [1, 2]}))
    calls = ask(client).choices[0].message.tool_calls
    assert [call.function.name for call in calls] == ["function_1", "function_2"]
    assert json.loads(calls[1].function.arguments) == {"numbers": [1, 2]} and calls[0].id != calls[1].id


def test_parallel_tool_calls_false_admits_one_call_only(serve):
    client, seen = serve(fenced("function_1", {"a": 1, "b": 2}))
    ask(client, parallel_tool_calls=False)
    grammar = Grammar(seen.completions[0]["grammar"])
    assert grammar.accepts(fenced("function_1", {"a": 1, "b": 2}))
    assert not grammar.accepts(fenced("function_1", {"a": 1, "b": 2}) + "\n" + fenced("function_2", {}))


def test_required_admits_calls_only(serve):
    client, seen = serve(fenced("function_2", {"numbers": [3]}))
    assert ask(client, tool_choice="required").choices[0].message.tool_calls[0].function.name == "function_2"
    grammar = Grammar(seen.completions[0]["grammar"])
    assert not grammar.accepts("The answer is 12.") and grammar.accepts(tagged("function_1", {"a": 1, "b": 2}))


def test_a_named_function_is_the_only_one_that_can_be_called(serve):
    client, seen = serve(fenced("function_1", {"a": 36, "b": 48}))
    choice = ask(client, tool_choice={"type": "function", "function": {"name": "function_1"}}).choices[0]
    assert choice.message.tool_calls[0].function.name == "function_1"
    grammar = Grammar(seen.completions[0]["grammar"])
    assert not grammar.accepts(fenced("function_2", {})) and not grammar.accepts("Some text.")
    assert seen.templates[0]["tools"] == TOOLS  # every tool is still shown, as the OpenAI API shows them


def test_none_sends_no_grammar_and_a_call_written_as_text_stays_text(serve):
    text = fenced("function_1", {"a": 36, "b": 48})
    client, seen = serve(text)
    choice = ask(client, tool_choice="none").choices[0]
    assert choice.message.content == text and not choice.message.tool_calls and choice.finish_reason == "stop"
    assert "grammar" not in seen.completions[0]


def test_tool_results_are_fed_back_to_the_template_and_the_model_answers(serve):
    client, _ = serve(fenced("function_1", {"a": 36, "b": 48}))
    first = ask(client).choices[0].message
    client2, seen2 = serve("The greatest common divisor is 12.")
    messages = [*QUESTION, first.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "12"}]
    answer = ask(client2, messages=messages).choices[0]
    assert answer.message.content == "The greatest common divisor is 12." and answer.finish_reason == "stop"
    rendered = seen2.templates[0]["messages"]
    assert rendered[1]["tool_calls"][0]["function"] == {"name": "function_1", "arguments": '{"a": 36, "b": 48}'}
    assert rendered[2] == {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "12"}


def test_a_reply_cut_short_is_content_never_a_call(serve):
    cut = '```json\n{"name":"function_1","arguments":{"a":36,'
    client, _ = serve(cut, limit_hit=True)
    choice = ask(client, max_tokens=12).choices[0]
    assert choice.message.content == cut and not choice.message.tool_calls and choice.finish_reason == "length"


@pytest.mark.parametrize("text", [
    fenced("function_9", {}),                                           # a function that was not offered
    fenced("function_1", {"a": 1}) + "\nand then some words",            # not calls alone
    '```json\n{"name":"function_1","arguments":[1,2]}\n```',             # arguments that are not an object
    '```json\n{"name":"function_1","arguments":{},"extra":1}\n```',
    "```json\nnot json\n```",
    "Plain text.",
])
def test_only_complete_calls_of_offered_functions_are_read_as_calls(text):
    assert read_calls(text, {"function_1", "function_2"}) is None


def test_streamed_calls_arrive_as_tool_call_deltas(serve):
    client, seen = serve(fenced("function_1", {"a": 36, "b": 48}) + "\n" + fenced("function_2", {}))
    chunks = list(ask(client, stream=True, stream_options={"include_usage": True}))
    assert seen.completions[0]["stream"] is True
    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    opened = [call for delta in deltas for call in delta.tool_calls or [] if call.id]
    assert [(call.index, call.function.name) for call in opened] == [(0, "function_1"), (1, "function_2")]
    arguments = {}
    for delta in deltas:
        for call in delta.tool_calls or []:
            arguments[call.index] = arguments.get(call.index, "") + (call.function.arguments or "")
    assert json.loads(arguments[0]) == {"a": 36, "b": 48} and json.loads(arguments[1]) == {}
    assert [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices][-1] == "tool_calls"
    assert not any(delta.content for delta in deltas)
    assert chunks[-1].usage.completion_tokens == 12 and not chunks[-1].choices


def test_a_streamed_text_arrives_as_content_deltas(serve):
    client, _ = serve("The GCD is 12.")
    chunks = list(ask(client, stream=True))
    pieces = [chunk.choices[0].delta.content for chunk in chunks if chunk.choices[0].delta.content]
    assert "".join(pieces) == "The GCD is 12." and len(pieces) > 1  # as generated, not at the end
    assert chunks[-1].choices[0].finish_reason == "stop"


@pytest.mark.parametrize(("request_fields", "says"), [
    ({"tool_choice": {"type": "function", "function": {"name": "function_9"}}}, "no offered function"),
    ({"tool_choice": "sometimes"}, "tool_choice"),
    ({"tools": [*TOOLS, TOOLS[0]]}, "unique"),
    ({"tools": [{"type": "web_search"}]}, "only function tools"),
    ({"tools": [{"type": "function", "function": {"name": "has space"}}]}, "function.name"),
    ({"response_format": {"type": "json_object"}}, "response_format"),
])
def test_bad_tool_requests_are_refused_as_the_openai_api_refuses_them(serve, request_fields, says):
    client, seen = serve("unused")
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="local", messages=QUESTION, **{"tools": TOOLS, **request_fields})
    assert says in refused.value.body["message"] and not seen.completions


def test_a_tool_request_without_the_key_is_refused(serve):
    client, seen = serve("unused")
    stranger = openai.OpenAI(base_url=str(client.base_url), api_key="a-guess", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        ask(stranger)
    assert not seen.templates


def test_requests_without_tools_are_passed_on_as_they_came(serve):
    client, seen = serve("unused")
    reply = client.chat.completions.create(model="local", messages=QUESTION, max_tokens=5)
    assert reply.choices[0].message.content == "passed on"
    streamed = client.chat.completions.create(model="local", messages=QUESTION, stream=True)
    assert "".join(chunk.choices[0].delta.content or "" for chunk in streamed) == "passed on"
    assert [model.id for model in client.models.list()] == ["scripted"]
    assert [(method, path) for method, path, _ in seen.passed] == [
        ("POST", "/v1/chat/completions"), ("POST", "/v1/chat/completions"), ("GET", "/v1/models")]
    assert seen.passed[0][2] == {"model": "local", "messages": QUESTION, "max_tokens": 5}


json_values = st.recursive(st.none() | st.booleans() | st.integers(-10**9, 10**9) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                      max_size=2), max_leaves=6)
identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,39}", fullmatch=True)
drawn_calls = st.lists(st.tuples(st.sampled_from(["function_1", "function_2"]),
                                 st.dictionaries(identifiers, json_values, max_size=3), st.booleans()),
                       min_size=1, max_size=3)
GRAMMAR = Grammar(tool_call_grammar([CallableTool("function_1", {}), CallableTool("function_2", {})],
                                    text=True, several=True))


@settings(max_examples=100, deadline=None)
@given(drawn_calls)
def test_every_reply_the_grammar_admits_as_calls_reads_back_as_those_calls(drawn):
    text = "\n".join((tagged if in_tags else fenced)(name, arguments) for name, arguments, in_tags in drawn)
    assert GRAMMAR.accepts(text), text
    read = read_calls(text, {"function_1", "function_2"})
    assert [(call.name, json.loads(call.arguments)) for call in read] == [(name, args) for name, args, _ in drawn]


@pytest.mark.parametrize("text", [" leading space", "{\"json\": 1}", "<b>bold</b>", "`code`"])
def test_a_text_reply_never_opens_like_a_call(text):
    assert not GRAMMAR.accepts(text)


def test_a_client_that_left_is_no_error_to_print(capsys):
    """A streaming client that hangs up makes the front's write fail: nothing is printed (any other error is)."""
    front = ToolFront("http://127.0.0.1:9", KEY)
    try:
        for error, printed in ((BrokenPipeError(32, "Broken pipe"), False), (ValueError("a bug"), True)):
            try:
                raise error
            except Exception:  # noqa: BLE001 - as socketserver calls handle_error, inside the except block
                front.handle_error(None, ("127.0.0.1", 1))
            assert bool(capsys.readouterr().err) == printed
    finally:
        front.server_close()
