"""The documentation site (``docs/``, built by MkDocs): every Python block runs as printed, or says why it is not run.

A block is marked on the line before its fence:

- ``<!-- runs: FIXTURE -->``: run here, its text read from the page, with FIXTURE setting the scene (a scripted LM
  standing in for the model, the files and MLflow store the block reads); an untyped block right after it is its
  printed output, compared doctest-style (``...`` matches anything);
- ``<!-- tested by: tests/test_x.py -->``: run by that test, which checks what the block prints;
- or its fence's title says ``Not run by the tests: WHY`` (an API key, the embedded model): readers see it.

The optimizer pages' knob tables are written at build time from the optimizers' declarations
(``scripts/mkdocs_hooks.py``): each page asks for its table, and the table holds every flag.
"""

from __future__ import annotations

import doctest
import importlib.util
import re
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dspy
import mlflow
import pytest
from own_tools_lm import everyone
from scripted_lm import prompt_text, scripted_lm

from otbench import mlflow_store
from otbench.llm import session
from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS, DocumentedTool, ParameterSpec, Toolbox
from otbench.optimizers import knobs as knob_rules
from otbench.optimizers.registry import OPTIMIZERS
from otbench.optimizers.toolobserver.knobs import Improvements
from otbench.run.prompts import register_docs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOT_RUN = "not run: "
"""A block no test runs says why in a comment above it (``<!-- not run: it loads the model -->``), out of the reader's
sight: the page shows the block under a title of its own."""


@dataclass(frozen=True)
class Block:
    """A fenced Python block of a page, with its marker and the output block that follows it."""

    page: Path
    line: int
    marker: str | None
    title: str
    code: str
    output: str | None

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(DOCS)}:{self.line}"


def python_blocks(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
    found, index = [], 0
    while index < len(lines):
        fence = re.fullmatch(r"```python(.*)", lines[index])
        if not fence:
            index += 1
            continue
        marker = re.fullmatch(r"<!-- (.*) -->", lines[index - 1]) if index else None
        title = re.search(r'title="([^"]*)"', fence.group(1))
        end = lines.index("```", index + 1)
        output = None
        if end + 1 < len(lines) and lines[end + 1] in ("```", "```text"):
            closing = lines.index("```", end + 2)
            output = "\n".join(lines[end + 2:closing]) + "\n"
        found.append(Block(page, index + 1, marker.group(1) if marker else None, title.group(1) if title else "",
                           "\n".join(lines[index + 1:end]) + "\n", output))
        index = end + 1
    return found


BLOCKS = [block for page in sorted(DOCS.rglob("*.md")) for block in python_blocks(page)]
RUN_HERE = [block for block in BLOCKS if block.marker and block.marker.startswith("runs: ")]


# -- the scenes the blocks run in ------------------------------------------------------------------------------
def _learned_docs() -> Toolbox:
    """Docs as ``optimize`` leaves them after a names_only run that learned exec_simple_66's ``function_1``
    (BFCL's ``math_gcd``)."""
    learned = DocumentedTool("function_1")
    learned.learn_parameters([ParameterSpec("a", "integer"), ParameterSpec("b", "integer")])
    learned.with_docs(description="Greatest common divisor of two integers a and b.")
    return Toolbox({"exec_simple_66": [learned], "exec_simple_0": [DocumentedTool("function_1")]},
                   meta={"env": "bfcl", "setting": "names_only", OPTIMIZED_TOOLSETS: ["exec_simple_66"]})


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


def plain(root: Path, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Nothing to set: the block needs no model and no files."""
    return None


def own_tools(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``embedded_lm()`` yields a scripted LM for every role (the embedded model runs this in the embedded set)."""
    @contextmanager
    def scripted_embedded_lm():
        yield scripted_lm(everyone)

    monkeypatch.setattr(session, "embedded_lm", scripted_embedded_lm)
    return "{'score': 1.0, 'n': 1.0} 42\n"


def learned_docs(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A run's docs file where the block reads it; the hosted LM it names is a scripted ReAct."""
    _learned_docs().write(root / "learned_docs" / "RUN_ID" / "final_docs.json")
    lm = scripted_lm(_react_replies)
    monkeypatch.setattr(dspy, "LM", lambda model, **kwargs: lm)
    return "optimized: ['exec_simple_66']\n12\n"


def prompt_registry(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The docs registered as ``optimize`` registers them, twice, in the store the block names (./mlruns)."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    mlflow_store.configure(None, directory=Path("mlruns"))
    docs = _learned_docs()
    register_docs(docs, ["exec_simple_66"], env="bfcl", setting="names_only", tags={"run_id": "earlier"})
    docs.get("exec_simple_66", "function_1").with_docs(description="Greatest common divisor of a and b.")
    register_docs(docs, ["exec_simple_66"], env="bfcl", setting="names_only", tags={"run_id": "latest"})
    mlflow.set_tracking_uri("sqlite:///nowhere-else.db")  # the block points MLflow at the store itself
    return "function_1 - Greatest common divisor of a and b.\n"


SCENES: dict[str, Callable[[Path, pytest.MonkeyPatch], str | None]] = {
    "plain": plain, "own-tools": own_tools, "learned-docs": learned_docs, "prompt-registry": prompt_registry}


# -- the tests -------------------------------------------------------------------------------------------------
def test_every_python_block_is_run_or_says_why_not():
    assert RUN_HERE, "no runnable block found"
    for block in BLOCKS:
        marker = block.marker or ""
        if marker.startswith("runs: "):
            assert marker.removeprefix("runs: ") in SCENES, block.name
        elif marker.startswith("tested by: "):
            test = ROOT / marker.removeprefix("tested by: ")
            assert test.is_file() and str(block.page.relative_to(ROOT)) in test.read_text(), block.name
        else:
            assert marker.startswith(NOT_RUN) and len(marker) > len(NOT_RUN), block.name


@pytest.mark.parametrize("block", RUN_HERE, ids=[block.name for block in RUN_HERE])
def test_the_block_runs_as_printed(block, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    expected = SCENES[block.marker.removeprefix("runs: ")](tmp_path, monkeypatch)
    (tmp_path / "block.py").write_text(block.code)
    try:
        exec(compile(block.code, str(block.page), "exec"), {"__name__": "__main__"})  # noqa: S102 - the page as printed
    finally:
        dspy.configure(lm=None)
    out = capsys.readouterr().out
    if block.output is not None:
        assert doctest.OutputChecker().check_output(block.output, out, doctest.ELLIPSIS), out
    if expected is not None:
        assert out == expected


def _hooks():
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_optimizer_page_shows_a_table_of_every_knob_it_declares():
    hooks = _hooks()
    for name, spec in OPTIMIZERS.items():
        page = (DOCS / "optimizers" / f"{name}.md").read_text()
        rendered = hooks.on_page_markdown(page)
        assert f"<!-- knobs: {name} -->" in page and "<!-- knobs:" not in rendered, name  # a figures region stays
        for field_name, _, _ in knob_rules.declared(spec.knobs) if spec.knobs else ():
            assert f"`--{knob_rules.dest(spec.knobs, field_name).replace('_', '-')}`" in rendered, field_name
    improvements = hooks.on_page_markdown((DOCS / "optimizers" / "toolobserver.md").read_text())
    assert all(f"`--[no-]{name.replace('_', '-')}`" in improvements for name in Improvements.names())
