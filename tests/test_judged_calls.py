"""What a run's calls show the invented-claims judge survives keeping only the calls that show it something new
(``judged_calls``): the calls an interrupted run's ledger entry keeps for a resume on another machine."""

from otbench.core.calls import CallResult, ToolCall
from otbench.evals.invented import MAX_EXAMPLES, judged_calls, observe
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec


def _calls():
    calls = [("pool", CallResult(ToolCall("area_of", {"country": code}), False,
                                 error=f"LookupError: 'country': no country has the code '{code}'"))
             for code in ("XX", "YY", "ZZ", "QQ")]
    calls += [("pool", CallResult(ToolCall("area_of", {"country": code}), True, output=area))
              for code, area in [(f"C{index}", 1000 + index) for index in range(3 * MAX_EXAMPLES)]]
    calls += [("pool", CallResult(ToolCall("area_of", {"country": "EE"}), True, output="45226 km2")),
              ("pool", CallResult(ToolCall("area_of", {"nation": "EE"}), False,
                                  error="TypeError: area_of() got an unexpected keyword argument 'nation'")),
              ("pool", CallResult(ToolCall("area_of", {"land": "EE"}), False,
                                  error="TypeError: area_of() got an unexpected keyword argument 'land'")),
              ("pool", CallResult(ToolCall("area_of", {"country": "EE"}), False, error="timeout", injected="timeout")),
              ("pool", CallResult(ToolCall("name_of", {"country": "EE"}), True, output="Estonia"))]
    return calls


def test_the_calls_kept_show_the_judge_what_all_of_them_show():
    calls = _calls()
    kept = list(judged_calls(calls))
    assert len(kept) < len(calls) - 2 * MAX_EXAMPLES
    tools = [DocumentedTool(name, parameters=[ParameterSpec("country", "string")]) for name in ("area_of", "name_of")]
    everything = observe(tools, [result for _, result in calls])
    judged = observe(tools, [result for _, result in kept])
    for name in ("area_of", "name_of"):
        whole, part = everything[name], judged[name]
        assert (part.examples, part.input_kinds, part.output_kinds, part.stated, part.rejected, part.parameters) == (
            whole.examples, whole.input_kinds, whole.output_kinds, whole.stated, whole.rejected, whole.parameters)
        assert (part.worked > 0) == (whole.worked > 0)
    assert {"nation", "land"} <= judged["area_of"].rejected


def test_a_call_whose_output_python_cannot_print_is_kept_as_a_call():
    """As a run logs the calls it saw: a factorial's 5,000-digit result is previewed, the call read back whole."""
    import json

    from otbench.core.trajectory import json_text

    result = CallResult(ToolCall("factorial_of", {"count": 1800}), True, output=10**5000)
    read = CallResult.from_dict(json.loads(json_text({"toolset": "pool", **result.to_dict()})))
    assert read.call == result.call and read.ok and read.output.startswith("<integer with about")
