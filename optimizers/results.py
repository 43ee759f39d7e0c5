"""What one ``compile`` did, as a frozen record attached to the program it returns.

DSPy's GEPA hands back its run as ``program.detailed_results``; the documentation optimizers do
the same, so a library user reads the iterations, the final attempts, the validation score and the
tokens spent from the returned program instead of from the optimizer or an MLflow store.

Tokens are read from each LM's own history (what DSPy records for every call it makes), per role
the LM played. One LM that served several roles (an agent and its editor on ``dspy.settings.lm``)
is counted once, under the roles joined with ``+``: its calls cannot be told apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from otbench.core.trajectory import Trajectory
from otbench.evals.invented import InventedClaims


@dataclass(frozen=True)
class TokenCount:
    """Tokens and calls one LM was paid for during a compile (a reply from DSPy's cache counts no tokens)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class IterationResult:
    """One logged iteration: its step, its metrics and the docs it evaluated (as ``Toolbox.to_json``)."""

    step: int
    metrics: Mapping[str, float]
    docs: Mapping[str, Any]
    trajectories: tuple[Trajectory, ...] = ()


@dataclass(frozen=True)
class DocOptimizationResult:
    """A compile's results, as ``program.detailed_results``.

    ``final_trajectories`` are the train tasks run with the final docs (for online environments,
    the result itself); ``editor_rounds`` counts editor rounds per task where the optimizer works
    per task. With a valset, ``val_metrics`` score the returned docs on it and ``chosen_docs``
    says which docs the valset preferred: ``"final"``, ``"step N"`` for an iteration's docs, or ``"start"`` (the
    starting docs, whatever step they were also logged at).
    ``invented`` counts the learned sentences that state behaviour no call the optimizer saw supports (a resumed
    compile sees the calls made since it resumed).
    """

    iterations: tuple[IterationResult, ...]
    final_trajectories: tuple[Trajectory, ...]
    editor_rounds: Mapping[str, int]
    tokens: Mapping[str, TokenCount]
    val_metrics: Mapping[str, float] | None = None
    val_trajectories: tuple[Trajectory, ...] = ()
    val_candidates: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """With a valset: every distinct candidate's scores on it, by label (``start``, ``step N``, ``final``)."""
    chosen_docs: str = "final"
    invented: InventedClaims = field(default_factory=lambda: InventedClaims(0, 0))
    tools_learned: int = 0
    """Tools of the toolsets learned on whose docs the compile changed (description, parameter meanings or schema):
    with the tokens spent, what learning a tool cost, the figure that grows with a pool's size."""
    gate: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Tool key -> whether it kept its learned doc or got its starting one back, and on what evidence
    (:class:`~otbench.optimizers.gate.GateDecision`); empty where the gate did not run (online, or switched off)."""
    evidence_kept: int | None = None
    """Docs the optimizer rewrote after the coverage pass that got the pass's sentences back
    (:func:`~otbench.optimizers.coverage.keep_evidence`); None where that did not act (no coverage, or switched off)."""


class TokenMarks:
    """Where each LM's history stood when a compile started, to count what the compile added."""

    def __init__(self, lms: Mapping[str, Any]) -> None:
        self._roles: dict[int, list[str]] = {}
        self._lms: dict[int, Any] = {}
        for role, lm in lms.items():
            if lm is not None:
                self._roles.setdefault(id(lm), []).append(role)
                self._lms[id(lm)] = lm
        self._marks = {key: _last_uuid(lm) for key, lm in self._lms.items()}

    def counts(self) -> dict[str, TokenCount]:
        """Tokens by role (roles sharing one LM joined with ``+``) since the marks were taken."""
        counts = {}
        for key, lm in self._lms.items():
            entries = _entries_after(list(getattr(lm, "history", [])), self._marks[key])
            usages = [entry.get("usage") or {} for entry in entries]
            counts["+".join(self._roles[key])] = TokenCount(
                prompt_tokens=sum(int(usage.get("prompt_tokens") or 0) for usage in usages),
                completion_tokens=sum(int(usage.get("completion_tokens") or 0) for usage in usages),
                calls=len(entries),
            )
        return counts


def _last_uuid(lm: Any) -> str | None:
    history = getattr(lm, "history", [])
    return history[-1].get("uuid") if history else None


def _entries_after(history: list[dict[str, Any]], mark: str | None) -> list[dict[str, Any]]:
    """History entries after the one marked; all that are kept when the mark has been dropped (DSPy caps
    the history's length)."""
    if mark is None:
        return history
    for index in range(len(history) - 1, -1, -1):
        if history[index].get("uuid") == mark:
            return history[index + 1 :]
    return history
