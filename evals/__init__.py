"""What every environment's metrics share (per-task outcomes, intervals and paired tests), checks of learned docs,
and the evaluation harness; an environment's own metrics are in its package (``otbench.envs.NAME.metrics``)."""

import otbench  # noqa: F401  (sets offline-safe environment before dspy/litellm load)
