"""Exported tools are what OpenAI's APIs accept: checked with jsonschema against the request shapes.

The shapes below are the ``tools`` entries of a Chat Completions and of a Responses request as
OpenAI documents them (a function name of 1-64 letters, digits, ``_`` or ``-``; parameters a
JSON-schema object; Responses puts the function's fields at the top level and requires
``strict``). The API also refuses an array schema without ``items``: checked on every
parameter, nested ones included.
"""

import json

import jsonschema
import pytest

from otbench import export
from otbench.envs.bfcl.data import load_tests
from otbench.envs.bfcl.opacity import SETTINGS, documented_tools
from otbench.exits import run_main
from otbench.modules.api_tools import chat_completions_tool, json_schema, responses_tool
from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS, DocumentedTool, ParameterSpec, Toolbox

_FUNCTION_NAME = {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"}
_PARAMETERS = {"type": "object", "properties": {"type": {"const": "object"}}, "required": ["type"]}
CHAT_COMPLETIONS_TOOL = {
    "type": "object",
    "properties": {
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "properties": {"name": _FUNCTION_NAME, "description": {"type": "string"}, "parameters": _PARAMETERS,
                           "strict": {"type": ["boolean", "null"]}},
            "required": ["name"],
            "additionalProperties": False,
        },
    },
    "required": ["type", "function"],
    "additionalProperties": False,
}
RESPONSES_TOOL = {
    "type": "object",
    "properties": {"type": {"const": "function"}, "name": _FUNCTION_NAME, "description": {"type": ["string", "null"]},
                   "parameters": {"anyOf": [_PARAMETERS, {"type": "null"}]}, "strict": {"type": ["boolean", "null"]}},
    "required": ["type", "name", "parameters", "strict"],
    "additionalProperties": False,
}


def _arrays_without_items(schema: object) -> list[object]:
    if isinstance(schema, list):
        return [bad for entry in schema for bad in _arrays_without_items(entry)]
    if not isinstance(schema, dict):
        return []
    here = [schema] if schema.get("type") == "array" and "items" not in schema else []
    return here + [bad for value in schema.values() for bad in _arrays_without_items(value)]


def assert_accepted(tools: list[dict], *, responses: bool = False) -> None:
    for tool in tools:
        jsonschema.validate(tool, RESPONSES_TOOL if responses else CHAT_COMPLETIONS_TOOL)
        parameters = tool["parameters"] if responses else tool["function"].get("parameters")
        jsonschema.Draft202012Validator.check_schema(parameters)
        assert _arrays_without_items(parameters) == [], tool


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_bfcl_tool_in_every_setting_exports_as_a_tool_the_apis_accept(setting):
    tools = [DocumentedTool.from_dict(tool.to_dict())  # through the docs file's form, as export reads it
             for test in load_tests() for tool in documented_tools(test.functions, setting)]
    assert_accepted([chat_completions_tool(tool) for tool in tools])
    assert_accepted([responses_tool(tool) for tool in tools], responses=True)


def _gold_tool(name: str) -> DocumentedTool:
    test = next(t for t in load_tests() if any(f["name"] == name for f in t.functions))
    (tool,) = [t for t in documented_tools(test.functions, "gold") if t.name == name]
    return DocumentedTool.from_dict(tool.to_dict())


def test_bfcl_arrays_keep_their_element_types_in_json_schema_terms():
    vertices = chat_completions_tool(_gold_tool("polygon_area"))["function"]["parameters"]["properties"]["vertices"]
    assert vertices["type"] == "array" and vertices["items"]["items"] == {"type": "integer"}
    point = chat_completions_tool(_gold_tool("get_distance"))["function"]["parameters"]["properties"]["pointA"]
    assert point == {"type": "array", "items": {"type": "number"}, "description": "The first point."}  # a BFCL tuple


def test_a_schema_fragment_converts_nested_tuples_and_objects():
    fragment = {"type": "dict", "properties": {"point": {"type": "tuple", "items": {"type": "float"}}},
                "required": ["point"], "unknown_keyword": 1}
    assert json_schema(fragment) == {"type": "object", "required": ["point"],
                                     "properties": {"point": {"type": "array", "items": {"type": "number"}}}}
    assert json_schema({"type": "list"}) == {"type": "array", "items": {}}


def _learned_box() -> Toolbox:
    learned = DocumentedTool("function_1")  # names_only: no schema shown
    learned.learn_parameters([ParameterSpec("a", "integer"), ParameterSpec("b", "integer", required=False)])
    learned.with_docs(description="Greatest common divisor.", parameter_descriptions={"a": "first number"})
    untouched = DocumentedTool("function_1")
    return Toolbox({"exec_simple_66": [learned], "exec_simple_0": [untouched]},
                   meta={OPTIMIZED_TOOLSETS: ["exec_simple_66"]})


def _export(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(export.main, argv)
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


def test_export_of_one_toolset_is_a_tools_list_with_the_learned_parameters(tmp_path, capsys):
    path = _learned_box().write(tmp_path / "final_docs.json")
    code, out, _ = _export([str(path), "--toolset", "exec_simple_66"], capsys)
    tools = json.loads(out)
    assert code == 0 and isinstance(tools, list)
    assert_accepted(tools)
    assert tools[0]["function"]["parameters"] == {
        "type": "object", "properties": {"a": {"type": "integer", "description": "first number"},
                                         "b": {"type": "integer"}}, "required": ["a"]}
    code, out, _ = _export([str(path), "--toolset", "exec_simple_66", "--responses"], capsys)
    tools = json.loads(out)
    assert_accepted(tools, responses=True)
    assert tools[0]["name"] == "function_1" and tools[0]["description"] == "Greatest common divisor."


def test_export_of_a_whole_file_lists_only_the_optimized_toolsets(tmp_path, capsys):
    path = _learned_box().write(tmp_path / "final_docs.json")
    code, out, _ = _export([str(path)], capsys)
    assert code == 0 and list(json.loads(out)) == ["exec_simple_66"]


def test_undocumented_parameters_export_as_any_arguments_not_as_none(tmp_path, capsys):
    path = _learned_box().write(tmp_path / "final_docs.json")
    _, out, _ = _export([str(path), "--toolset", "exec_simple_0"], capsys)
    (tool,) = json.loads(out)
    assert tool["function"]["parameters"] == {"type": "object", "properties": {}, "additionalProperties": True}


def test_a_blank_learned_description_stays_blank_in_downstream_dspy_tools(tmp_path):
    def gcd(a: int, b: int) -> int:
        """The function's own docstring, which the learned docs must not be replaced by."""
        return a if b == 0 else gcd(b, a % b)

    box = Toolbox.read(_learned_box().write(tmp_path / "final_docs.json"))
    (blank,) = box.as_dspy_tools("exec_simple_0", {"function_1": gcd})
    assert blank.desc == ""
    (learned,) = box.as_dspy_tools("exec_simple_66", {"function_1": gcd})
    assert learned.desc == "Greatest common divisor." and learned(a=12, b=18) == 6
    assert learned.args["a"] == {"type": "integer", "description": "first number"}


def test_export_reads_the_docs_registered_as_a_prompt(capsys):
    from otbench import mlflow_store
    from otbench.run.prompts import register_docs

    mlflow_store.configure()
    register_docs(_learned_box(), ["exec_simple_66"], env="bfcl", setting="names_only", tags={"run_id": "r"})
    code, out, _ = _export(["prompts:/otbench.bfcl.names_only.exec_simple_66@latest", "--responses"], capsys)
    (tool,) = json.loads(out)
    assert code == 0 and tool["description"] == "Greatest common divisor."
    code, _, err = _export(["prompts:/otbench.nothing.here@latest"], capsys)
    assert code == 2 and "no such prompt" in err


def test_a_toolset_over_the_registry_limit_is_registered_in_parts_and_read_whole(monkeypatch):
    """A pool's thousand tools do not fit in one MLflow prompt, nor does the gate's decision for each of them: the
    name still reads as the whole toolset with its whole meta."""
    import mlflow

    from otbench import mlflow_store
    from otbench.run import prompts
    from otbench.run.docs_io import load_docs

    tools = []
    for number in range(40):
        tool = DocumentedTool(f"tool_{number:04d}")
        tool.with_docs(description=f"Tool number {number}, described at some length. " * 3)
        tools.append(tool)
    gate = {f"pool::{tool.name}": {"kept": "learned", "by": "calls", "evidence": "its calls worked 4 of 4 times " * 3}
            for tool in tools}
    box = Toolbox({"pool": tools}, meta={OPTIMIZED_TOOLSETS: ["pool"], "env_memory": {"tool_0001": ["a request"]},
                                         "gate": gate})
    monkeypatch.setattr(prompts, "MAX_PROMPT_CHARS", 3_000)
    mlflow_store.configure()
    (uri,) = prompts.register_docs(box, ["pool"], env="pool", setting="names_only", tags={"run_id": "r"}).values()
    read = prompts.read_prompt(uri)
    assert prompts.PARTS not in read["meta"]
    assert read["meta"]["env_memory"] == {"tool_0001": ["a request"]} and read["meta"]["gate"] == gate
    assert [tool["name"] for tool in read["toolsets"]["pool"]] == [tool.name for tool in tools]
    assert load_docs("prompts:/otbench.pool.names_only.pool@latest").toolset("pool")[39].description.startswith(
        "Tool number 39")
    parts = json.loads(mlflow.genai.load_prompt(uri).template)["meta"][prompts.PARTS]
    assert len(parts) > 1 and all(len(mlflow.genai.load_prompt(part).template) <= 3_000 for part in parts)


def test_export_gold_gives_the_true_docs_evaluate_uses_with_docs_gold(capsys):
    from otbench.envs.registry import EnvironmentOptions, make_environment

    code, out, err = _export(["gold", "--env", "toolkit", "--toolkit", "inventory", "--format", "json"], capsys)
    assert code == 0, err
    with make_environment(EnvironmentOptions("toolkit", own={"toolkit": "inventory"})) as env:
        assert json.loads(out) == env.toolbox("gold").to_json()
    code, out, _ = _export(["gold", "--toolset", "exec_simple_66"], capsys)  # BFCL's gold docs of one test
    (tool,) = json.loads(out)
    assert code == 0 and tool["function"]["name"] == "math_gcd"
    assert_accepted([tool])
    code, _, err = _export(["gold", "--toolset", "exec_simple_999"], capsys)
    assert code == 2 and err.strip() == "error: no toolset 'exec_simple_999' in gold"
