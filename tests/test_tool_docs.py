import json
import re

import pytest

from otbench.errors import DataError
from otbench.modules.tool_docs import DOCS_FORMAT, DocumentedTool, ParameterSpec, Toolbox


def _toolbox() -> Toolbox:
    return Toolbox({
        "t1": [DocumentedTool("function_1", parameters=[ParameterSpec("n", "integer"),
                                                        ParameterSpec("json", "string", required=False)]),
               DocumentedTool("function_2")],
        "t2": [DocumentedTool("function_1", description="Adds two numbers.")],
    })


def test_blank_docs_stay_blank_and_edits_reach_signatures():
    tool = _toolbox().get("t1", "function_1")
    assert tool.description == "" and tool.parameter_descriptions == {"n": "", "json": ""}
    tool.with_docs(description="Computes n!.", parameter_descriptions={"n": "a count", "ghost": "ignored"},
                   returns="an integer")
    assert tool.signature.instructions == "Computes n!."
    assert tool.parameter_descriptions == {"n": "a count", "json": ""}
    assert tool.returns == "an integer"


def test_toolsets_are_separate():
    box = _toolbox()
    box.get("t1", "function_1").with_docs(description="changed")
    assert box.get("t2", "function_1").description == "Adds two numbers."
    assert [t.name for t in box.toolset("t1")] == ["function_1", "function_2"]
    assert box.toolset_ids() == ["t1", "t2"]


def test_dspy_save_and_load_round_trip(tmp_path):
    box = _toolbox()
    box.get("t1", "function_1").with_docs(description="Computes n!.", parameter_descriptions={"json": "payload"})
    path = tmp_path / "state.json"
    box.save(str(path))
    fresh = _toolbox()
    fresh.load(str(path))
    assert fresh.get("t1", "function_1").to_dict() == box.get("t1", "function_1").to_dict()
    assert fresh.get("t1", "function_2").description == ""


def test_code_free_json_round_trip_and_adoption_keeps_the_schema():
    box = _toolbox()
    box.get("t1", "function_1").with_docs(description="Computes n!.", parameter_descriptions={"n": "a count"})
    data = json.loads(json.dumps(box.to_json()))
    assert Toolbox.from_json(data).to_json() == box.to_json()
    target = Toolbox({"t1": [DocumentedTool("function_1")]})  # names_only: no parameters shown
    assert target.adopt_docs(Toolbox.from_json(data)) == 1
    assert target.get("t1", "function_1").description == "Computes n!."
    assert target.get("t1", "function_1").parameters is None


def test_openai_export_leaves_out_undocumented_parameters():
    box = _toolbox()
    spec = box.get("t1", "function_1").openai_schema()["function"]
    assert spec["parameters"] == {"type": "object", "properties": {"n": {"type": "integer"}, "json": {"type": "string"}},
                                  "required": ["n"]}
    assert "parameters" not in box.get("t1", "function_2").openai_schema()["function"]


def test_array_items_and_defaults_are_shown_saved_and_exported():
    tool = DocumentedTool("function_1", parameters=[
        ParameterSpec("points", "array", items={"type": "array", "items": {"type": "float"}}),
        ParameterSpec("reverse", "boolean", required=False, default=False),
        ParameterSpec("unit", "string", required=False, default=None),
    ])
    properties = tool.openai_schema()["function"]["parameters"]["properties"]
    assert properties["points"] == {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
    assert properties["reverse"] == {"type": "boolean", "default": False}
    assert properties["unit"] == {"type": "string", "default": None}  # None is a default like any other
    again = DocumentedTool.from_dict(json.loads(json.dumps(tool.to_dict())))
    assert again.parameters == tool.parameters and again.to_dict() == tool.to_dict()


def test_bfcl_shows_items_and_defaults_as_its_data_gives_them():
    from otbench.envs.bfcl.opacity import documented_tools

    function = {"name": "polygon_area", "description": "Area.", "parameters": {"type": "dict", "properties": {
        "vertices": {"type": "array", "description": "The vertices.",
                     "items": {"type": "array", "items": {"type": "float"}, "description": "A vertex [x, y]."}},
        "signed": {"type": "boolean", "description": "Keep the sign.", "default": False}},
        "required": ["vertices"]}}
    gold, = documented_tools((function,), "gold")
    shown, = documented_tools((function,), "names_params")
    assert gold.parameters[0].items == {"type": "array", "items": {"type": "float"}, "description": "A vertex [x, y]."}
    assert shown.parameters[0].items == {"type": "array", "items": {"type": "float"}}  # descriptions blanked
    assert shown.parameters[1].default is False and not shown.parameters[1].required
    assert documented_tools((function,), "names_only")[0].parameters is None


@pytest.mark.parametrize(("tools", "message"), [
    ([{"name": "f"}, {"name": "f"}], "tool 'f' is documented twice"),
    ([{"name": "f", "parameters": [{"name": ""}]}], "parameter name '' is not one a call can use"),
    ([{"name": "f", "parameters": [{"name": "a b"}]}], "parameter name 'a b' is not one a call can use"),
    ([{"name": "f", "parameters": [{"name": "a"}, {"name": "a"}]}], "parameter 'a' is listed twice"),
    ([{"name": "f", "description": ["Adds."]}], "'description' must be text, not list"),
    ([{"name": "f", "returns": {"a": 1}}], "'returns' must be text, not dict"),
    ([{"name": "f", "parameters": [{"name": "a", "description": ["x"]}]}], "'description' and 'type' must be text"),
])
def test_a_docs_file_of_the_wrong_shape_is_refused_saying_where(tools, message):
    with pytest.raises(DataError, match=re.escape(message)):
        Toolbox.from_json({"format": DOCS_FORMAT, "meta": {}, "toolsets": {"t1": tools}})
