"""The README's downstream snippet runs exactly as printed: its text is read from README.md and executed.

The docs file is a small fixture at the path the snippet names, as ``optimize`` would write it
for a names_only run that learned exec_simple_66's ``function_1`` (BFCL's ``math_gcd``), and the
LM the snippet builds is a scripted one.
"""

import re
import runpy
from pathlib import Path

import dspy
from scripted_lm import prompt_text, scripted_lm

from modules.tool_docs import OPTIMIZED_TOOLSETS, DocumentedTool, ParameterSpec, Toolbox

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_snippet(heading: str) -> str:
    """The first Python block under ``heading`` in README.md."""
    section = README.read_text().split(f"## {heading}\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, f"no python block under {heading!r}"
    return match.group(1)


def _write_learned_docs(root: Path) -> None:
    learned = DocumentedTool("function_1")
    learned.learn_parameters([ParameterSpec("a", "integer"), ParameterSpec("b", "integer")])
    learned.with_docs(description="Greatest common divisor of two integers a and b.")
    Toolbox({"exec_simple_66": [learned], "exec_simple_0": [DocumentedTool("function_1")]},
            meta={"env": "bfcl", "setting": "names_only", OPTIMIZED_TOOLSETS: ["exec_simple_66"]},
            ).write(root / "learned_docs" / "RUN_ID" / "final_docs.json")


def _react_replies(messages: list[dict[str, str]]) -> str:
    """ReAct's two kinds of calls: choose the next tool (function_1, then finish), then extract the answer."""
    prompt = prompt_text(messages)
    if "next_tool_name" not in messages[0]["content"]:
        return "[[ ## reasoning ## ]]\nThe tool answered 12.\n\n[[ ## answer ## ]]\n12\n\n[[ ## completed ## ]]"
    if "observation_0" not in prompt:
        return ('[[ ## next_thought ## ]]\nfunction_1 computes the gcd.\n\n[[ ## next_tool_name ## ]]\nfunction_1\n\n'
                '[[ ## next_tool_args ## ]]\n{"a": 36, "b": 48}\n\n[[ ## completed ## ]]')
    return ("[[ ## next_thought ## ]]\nDone.\n\n[[ ## next_tool_name ## ]]\nfinish\n\n"
            "[[ ## next_tool_args ## ]]\n{}\n\n[[ ## completed ## ]]")


def test_the_readme_dspy_snippet_runs_as_printed(tmp_path, monkeypatch, capsys):
    _write_learned_docs(tmp_path)
    monkeypatch.chdir(tmp_path)
    lm = scripted_lm(_react_replies)
    built = []
    monkeypatch.setattr(dspy, "LM", lambda model, **kwargs: built.append(model) or lm)
    try:
        snippet = tmp_path / "snippet.py"
        snippet.write_text(readme_snippet("Using learned docs in your own DSPy agent"))
        runpy.run_path(str(snippet), run_name="__main__")
    finally:
        dspy.configure(lm=None)
    out = capsys.readouterr().out.splitlines()
    assert out == ["optimized: ['exec_simple_66']", "12"] and built == ["openai/gpt-5-mini"]
    tool_prompt = prompt_text(lm.engine.requests[0])
    assert "Greatest common divisor of two integers a and b." in tool_prompt
    assert "observation_0" in prompt_text(lm.engine.requests[1]) and "12" in prompt_text(lm.engine.requests[1])
