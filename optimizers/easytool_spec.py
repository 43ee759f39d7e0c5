"""EasyTool as the commands see it: no budget knobs, the shared probe, and how it is built (no DSPy here:
:mod:`otbench.optimizers.spec`; the teleprompter is :class:`otbench.optimizers.easytool.EasyTool`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from otbench.optimizers.spec import Built, OptimizerSpec

if TYPE_CHECKING:
    from otbench.optimizers.base import DocOptimizer


@dataclass(frozen=True)
class EasyToolKnobs:
    """EasyTool rewrites each tool's doc once: it has no budget, only the shared probe."""

    flag_prefix: ClassVar[str] = ""
    probe: bool = False
    """The shared probe (:data:`otbench.optimizers.spec.PROBE_HELP`)."""
    experiment: bool = False
    """The shared experiment (:data:`otbench.optimizers.spec.EXPERIMENT_HELP`)."""
    coverage: bool = False
    """The shared coverage pass (:data:`otbench.optimizers.spec.COVERAGE_HELP`)."""
    worded_errors: bool = True
    """The shared reading of errors in words (:data:`otbench.optimizers.spec.WORDED_ERRORS_HELP`)."""
    request_scales: bool = False
    """The shared reading of calls against their requests' scales (:data:`otbench.optimizers.spec.REQUEST_SCALES_HELP`)."""
    gate: bool = True
    """The shared gate (:data:`otbench.optimizers.spec.GATE_HELP`)."""
    learn_tokens: int | None = None
    """The shared learning budget in tokens (:mod:`otbench.optimizers.budget`); None, no budget."""


def _build(knobs: Any, lms: Mapping[str, Any], built: Built) -> DocOptimizer:
    from otbench.optimizers.easytool import EasyTool

    return EasyTool(editor_lm=lms["editor"], probe=knobs.probe, experiment=knobs.experiment, **built.common)


SPEC = OptimizerSpec("easytool", "+ET", EasyToolKnobs, _build,
                     teleprompter="otbench.optimizers.easytool.EasyTool", offers_probe=True)
