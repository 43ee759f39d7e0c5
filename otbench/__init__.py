"""otbench: make LLM agents learn opaque tools by improving the tools' documentation.

Importing the package first makes the offline machine safe for the libraries it uses: litellm
must not try to fetch its model cost map at import, and MLflow must not write telemetry.
``from otbench import FunctionEnvironment`` (your own functions, examples and metric) is imported
on first use, so the commands' ``--help`` and ``--version`` do not wait for DSPy.
"""

import os
from typing import Any

__all__ = ["FunctionEnvironment"]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DSPY_CACHEDIR", os.path.join(os.path.expanduser("~"), ".cache", "otbench", "dspy"))


def __getattr__(name: str) -> Any:
    if name == "FunctionEnvironment":
        from otbench.envs.functions import FunctionEnvironment

        return FunctionEnvironment
    raise AttributeError(f"module 'otbench' has no attribute {name!r}")
