"""The README's downstream snippets run exactly as printed: their text is read from README.md and executed.

The docs are a small fixture where each snippet looks for them (a docs file at the path it names,
prompts in the MLflow store it names), as ``optimize`` would leave them after a names_only run
that learned exec_simple_66's ``function_1`` (BFCL's ``math_gcd``); the LM the DSPy snippet
builds is a scripted one.
"""

import re
import runpy
from pathlib import Path

import dspy
import mlflow
from scripted_lm import prompt_text, scripted_lm

from otbench import tracking
from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS, DocumentedTool, ParameterSpec, Toolbox
from otbench.prompts import register_docs

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "Using learned docs in your own DSPy agent"


def readme_snippets(heading: str) -> list[str]:
    """The Python blocks of one README.md section, in order."""
    section = README.read_text().split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def run_snippet(code: str, directory: Path) -> None:
    snippet = directory / "snippet.py"
    snippet.write_text(code)
    runpy.run_path(str(snippet), run_name="__main__")


def _learned_docs() -> Toolbox:
    learned = DocumentedTool("function_1")
    learned.learn_parameters([ParameterSpec("a", "integer"), ParameterSpec("b", "integer")])
    learned.with_docs(description="Greatest common divisor of two integers a and b.")
    return Toolbox({"exec_simple_66": [learned], "exec_simple_0": [DocumentedTool("function_1")]},
                   meta={"env": "bfcl", "setting": "names_only", OPTIMIZED_TOOLSETS: ["exec_simple_66"]})


def _write_learned_docs(root: Path) -> None:
    _learned_docs().write(root / "learned_docs" / "RUN_ID" / "final_docs.json")


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
        run_snippet(readme_snippets(SECTION)[0], tmp_path)
    finally:
        dspy.configure(lm=None)
    out = capsys.readouterr().out.splitlines()
    assert out == ["optimized: ['exec_simple_66']", "12"] and built == ["openai/gpt-5-mini"]
    tool_prompt = prompt_text(lm.engine.requests[0])
    assert "Greatest common divisor of two integers a and b." in tool_prompt
    assert "observation_0" in prompt_text(lm.engine.requests[1]) and "12" in prompt_text(lm.engine.requests[1])


def test_the_readme_prompt_registry_snippet_runs_as_printed(tmp_path, monkeypatch, capsys):
    """The docs are registered as optimize registers them, in the store the snippet names (./mlruns)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # MLflow sets it for the store an earlier test used
    tracking.configure(None, directory=Path("mlruns"))
    docs = _learned_docs()
    register_docs(docs, ["exec_simple_66"], env="bfcl", setting="names_only", tags={"run_id": "earlier"})
    docs.get("exec_simple_66", "function_1").with_docs(description="Greatest common divisor of a and b.")
    register_docs(docs, ["exec_simple_66"], env="bfcl", setting="names_only", tags={"run_id": "latest"})
    mlflow.set_tracking_uri("sqlite:///nowhere-else.db")  # the snippet points MLflow at the store itself
    run_snippet(readme_snippets(SECTION)[1], tmp_path)
    assert capsys.readouterr().out == "function_1 - Greatest common divisor of a and b.\n"
