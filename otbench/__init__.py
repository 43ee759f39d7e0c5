"""otbench: make LLM agents learn opaque tools by improving the tools' documentation.

Importing the package first makes the offline machine safe for the libraries it uses: litellm
must not try to fetch its model cost map at import, and MLflow must not write telemetry.
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DSPY_CACHEDIR", os.path.join(os.path.expanduser("~"), ".cache", "otbench", "dspy"))
