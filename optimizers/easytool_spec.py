"""EasyTool as the commands see it: no budget knobs, the shared probe, and how it is built (no DSPy here:
:mod:`otbench.optimizers.spec`; the teleprompter is :class:`otbench.optimizers.easytool.EasyTool`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from otbench.optimizers.spec import Built, OptimizerSpec, ProbingKnobs

if TYPE_CHECKING:
    from otbench.optimizers.base import DocOptimizer


@dataclass(frozen=True)
class EasyToolKnobs(ProbingKnobs):
    """EasyTool rewrites each tool's doc once: it has no budget, only the choices every optimizer shares."""

    flag_prefix: ClassVar[str] = ""


def _build(knobs: Any, lms: Mapping[str, Any], built: Built) -> DocOptimizer:
    from otbench.optimizers.easytool import EasyTool

    return EasyTool(editor_lm=lms["editor"], probe=knobs.probe, experiment=knobs.experiment, **built.common)


SPEC = OptimizerSpec("easytool", "+ET", EasyToolKnobs, _build,
                     teleprompter="otbench.optimizers.easytool.EasyTool")
