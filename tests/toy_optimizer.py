"""A fifth optimizer, as a user adds one: this one module (its knobs, its spec and its teleprompter) and one line
in the registry (:data:`otbench.optimizers.registry.OPTIMIZERS`). It names every tool by what it is called, a given
number of rounds over, and scores the docs on the train tasks after each round."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from otbench.optimizers.base import DocOptimizer, IterationRecord
from otbench.optimizers.knobs import knob
from otbench.optimizers.spec import Built, OptimizerSpec


@dataclass(frozen=True)
class PlainKnobs:
    flag_prefix: ClassVar[str] = "plain"
    rounds: int = knob(1, "rounds of plain naming", minimum=1, sweep=(1, 3))


class PlainNames(DocOptimizer):
    """Each round writes ``Tool NAME, round N.`` as every tool's description, then scores the docs."""

    def __init__(self, *, rounds: int = PlainKnobs.rounds, **common: Any) -> None:
        super().__init__(**common)
        self.rounds = rounds

    def _optimize(self, program: Any, trainset: list[Any], resume: dict[str, Any]) -> None:
        for step in range(int(resume.get("next_step", 0)), self.rounds):
            for toolset in self._toolsets(trainset):
                for tool in program.toolbox.toolset(toolset):
                    tool.with_docs(description=f"Tool {tool.name}, round {step + 1}.")
            trajectories = self._rollouts(program, trainset, f"plain: round {step + 1}")
            self.tracker.log_iteration(IterationRecord(step, self.env.summarise(trajectories),
                                                       program.toolbox.deepcopy(), trajectories,
                                                       checkpoint={"next_step": step + 1,
                                                                   "docs": program.toolbox.to_json()}))
            self.final_trajectories = trajectories


def _build(knobs: Any, lms: Mapping[str, Any], built: Built) -> DocOptimizer:
    return PlainNames(rounds=knobs.rounds, **built.common)


SPEC = OptimizerSpec("plain", "+PLAIN", PlainKnobs, _build, teleprompter="toy_optimizer.PlainNames")
