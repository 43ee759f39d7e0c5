"""otbench: make LLM agents learn opaque tools by improving the tools' documentation.

The public API is what this package exports; everything else is internal and may move:

- :class:`FunctionEnvironment`: your own functions, examples and metric as an environment;
- the documentation optimizers, DSPy teleprompters: :class:`ToolObserver`, :class:`Play2Prompt`,
  :class:`EasyTool`, :class:`GEPA`;
- :class:`Toolbox` (tool docs as DSPy state) and :func:`load_docs` (learned docs from a file, a run or
  MLflow's prompt registry);
- :func:`embedded_lm`: the embedded local model as a DSPy LM, for machines with no key.

Importing the package first makes the offline machine safe for the libraries it uses: litellm
must not try to fetch its model cost map at import, and MLflow must not write telemetry. The
exports are imported on first use, so the commands' ``--help`` and ``--version`` do not wait for DSPy.
"""

import importlib
import os
from typing import Any

from otbench.paths import cache_root

__all__ = [
    "GEPA",
    "EasyTool",
    "FunctionEnvironment",
    "MCPEnvironment",
    "Play2Prompt",
    "ToolObserver",
    "Toolbox",
    "__version__",
    "embedded_lm",
    "load_docs",
]

_EXPORTS = {"FunctionEnvironment": "otbench.envs.functions", "MCPEnvironment": "otbench.envs.mcp.env",
            "ToolObserver": "otbench.optimizers.toolobserver.teleprompter",
            "Play2Prompt": "otbench.optimizers.play2prompt", "EasyTool": "otbench.optimizers.easytool",
            "GEPA": "otbench.optimizers.gepa", "Toolbox": "otbench.modules.tool_docs", "load_docs": "otbench.run.docs_io",
            "embedded_lm": "otbench.llm.session"}

def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("otbench")
    except PackageNotFoundError:  # a source tree that was never installed
        return "unknown"


__version__ = _version()
"""The installed distribution's version."""

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
# DSPy's LM reply cache lives under otbench's cache root, so ``$OTBENCH_CACHE`` moves it with the rest
os.environ.setdefault("DSPY_CACHEDIR", str(cache_root() / "dspy"))


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'otbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
