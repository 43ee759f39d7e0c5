"""The gate: a learned doc replaces the doc its tool started with only where the evidence says it is no worse.

Docs learned from a few attempts can leave an agent worse than the docs a tool shipped with (a server's advertised
docs, a docstring), and nothing in the learning itself says so. The gate scores the starting and the learned docs on
the same tasks (train tasks the optimizer did not learn on where the environment has some, else those it learned on;
the validation sample where one is given) and decides tool by tool:

- **by its calls**, where the tool was called at least :data:`MIN_CALLS` times with each doc and its calls worked more
  often with one by more than one call can make (:func:`beyond_one_call`): the learned doc stays if the calls it
  guided worked more often (an answer that is an error in words counts as failed:
  :func:`otbench.core.calls.worded_error`). One call is no evidence, whether it is one call against two or one failure
  more among six: a tool decided on it loses its learned doc while a rival it is chosen against keeps its own, and the
  agent turns to the rival, or keeps a starting doc whose misleading sentence the learned one had dropped;
- **by the toolset** otherwise: the learned docs stay if they score at least as well by the environment's primary
  metric, then its tie-break metric. Calls that work equally often do not decide: a call given a number on the wrong
  scale works and answers wrong, and only the tasks' scores tell.

A tool whose learned doc does not pass gets its starting doc back. Each decision is kept with its evidence
(:class:`GateDecision`): in the compile's results, the run's MLflow artefacts and the docs' own meta (``gate``), which
``serve-docs`` reads before it serves them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from otbench.core.calls import read_worded_error
from otbench.core.trajectory import Trajectory
from otbench.modules.tool_docs import DocumentedTool, Toolbox, tool_key

GATE_TASKS = 10
"""Tasks the starting and learned docs are both scored on where no validation sample is given."""
MIN_CALLS = 3
"""The fewest calls of a tool, with each doc, that decide its doc by how often they worked."""
META_KEY = "gate"
"""The docs' meta entry that holds every decision, by tool key."""


@dataclass(frozen=True)
class GateDecision:
    """Whether one tool keeps its learned doc, and why."""

    kept: str
    """``learned`` or ``start``."""
    by: str
    """``calls`` (the tool's own calls decided) or ``toolset`` (the toolset's score did)."""
    evidence: str
    """What decided it, in words (``its calls worked 4 of 4 times with the learned doc, 2 of 4 with the starting one``)."""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GateDecision:
        return cls(str(data["kept"]), str(data["by"]), str(data["evidence"]))


def call_rates(trajectories: Sequence[Trajectory]) -> dict[tuple[str, str], tuple[int, int]]:
    """(toolset, tool) -> (calls that worked, calls made), each answer read for an error in words."""
    rates: dict[tuple[str, str], list[int]] = {}
    for trajectory in trajectories:
        for step in trajectory.steps:
            counts = rates.setdefault((trajectory.toolset, step.call.name), [0, 0])
            counts[0] += read_worded_error(step).ok
            counts[1] += 1
    return {key: (worked, made) for key, (worked, made) in rates.items()}


def changed_tools(start: Toolbox, learned: Toolbox, toolsets: Sequence[str]) -> list[tuple[str, DocumentedTool]]:
    """The tools of ``toolsets`` whose learned docs differ from their starting ones (a tool new to the learned docs
    has nothing to be compared with and is not gated)."""
    return [(toolset, tool) for toolset in toolsets for tool in learned.toolset(toolset)
            if (before := start.get(toolset, tool.name)) is not None and before.to_dict() != tool.to_dict()]


def decide(start: Toolbox, learned: Toolbox, toolsets: Sequence[str], before: Sequence[Trajectory],
           after: Sequence[Trajectory], score: Callable[[Sequence[Trajectory]], tuple[float, ...]]
           ) -> dict[str, GateDecision]:
    """A decision for each tool whose doc was learned, by tool key: by its calls where both docs led to at least
    :data:`MIN_CALLS` calls of it and those worked more often with one beyond what one call can make
    (:func:`beyond_one_call`), else by the toolset's ``score`` (a tuple compared in order: the primary metric, then
    the tie-break)."""
    rates_before, rates_after = call_rates(before), call_rates(after)
    decisions: dict[str, GateDecision] = {}
    by_toolset: dict[str, tuple[bool, str]] = {}
    for toolset, tool in changed_tools(start, learned, toolsets):
        old, new = rates_before.get((toolset, tool.name)), rates_after.get((toolset, tool.name))
        if old and new and min(old[1], new[1]) >= MIN_CALLS and beyond_one_call(old, new):
            passed = new[0] * old[1] > old[0] * new[1]
            evidence = (f"its calls worked {new[0]} of {new[1]} times with the learned doc, {old[0]} of {old[1]} with "
                        f"the starting one, on {len(after)} tasks")
            decisions[tool_key(toolset, tool.name)] = GateDecision("learned" if passed else "start", "calls", evidence)
            continue
        if toolset not in by_toolset:
            mine_before = [t for t in before if t.toolset == toolset]
            mine_after = [t for t in after if t.toolset == toolset]
            old_score, new_score = score(mine_before), score(mine_after)
            evidence = (f"the toolset scored {_shown(new_score)} with the learned docs, {_shown(old_score)} with the "
                        f"starting ones, on {len(mine_after)} tasks")
            by_toolset[toolset] = (new_score >= old_score, evidence)
        passed, evidence = by_toolset[toolset]
        decisions[tool_key(toolset, tool.name)] = GateDecision("learned" if passed else "start", "toolset", evidence)
    return decisions


def beyond_one_call(old: tuple[int, int], new: tuple[int, int]) -> bool:
    """Whether two (calls that worked, calls made) rates differ by more than one call of the fewer calls moves a
    rate: 5 of 6 against 6 of 7 is one failure, 1 of 3 against 3 of 3 two."""
    fewer = min(old[1], new[1])
    return abs(new[0] * old[1] - old[0] * new[1]) * fewer > old[1] * new[1]


def gated(start: Toolbox, learned: Toolbox, decisions: dict[str, GateDecision]) -> Toolbox:
    """The learned docs with each tool the gate did not pass given its starting doc back, and the decisions in the
    docs' meta."""
    docs = learned.deepcopy()
    for key, decision in decisions.items():
        if decision.kept == "start":
            docs.tools[key] = start.tools[key].deepcopy()
    docs.meta = {**docs.meta, META_KEY: {key: decision.to_dict() for key, decision in decisions.items()}}
    return docs


def _shown(score: tuple[float, ...]) -> str:
    return " / ".join(f"{value:.3f}" for value in score)
