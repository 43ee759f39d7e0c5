"""ToolObserver as the commands see it: its rows and flags, from its knobs, variants and improvements
(:mod:`otbench.optimizers.toolobserver.knobs`).

The paper's protocol is the ``paper`` variant (``PAPER``); what makes it work with a small editor is a set
of named improvements (``Improvements``), each an ablation of its own, all on in the ``improved`` variant
(``IMPROVED``) but the opt-in ones. A run's definition keeps the variant and the improvements switched on that act in its
learning mode, so a ``--variant paper`` run (none on) has the same definition however the declarations grow.
This module imports no DSPy (:mod:`otbench.optimizers.spec`); the teleprompter is
:class:`otbench.optimizers.toolobserver.ToolObserver`.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from otbench.optimizers import knobs as knob_rules
from otbench.optimizers.knobs import MODES
from otbench.optimizers.spec import Built, OptimizerSpec, budget_label, switches_label, with_learn_tokens, with_switches
from otbench.optimizers.toolobserver.knobs import IMPROVED, PAPER, VARIANTS, Improvements, ToolObserverKnobs

if TYPE_CHECKING:
    from otbench.optimizers.base import DocOptimizer


class ToolObserverSpec(OptimizerSpec):
    """The hooks of :class:`~otbench.optimizers.spec.OptimizerSpec` for a variant, switchable improvements and
    oracle feedback beside the budget knobs."""

    def add_arguments(self, group: argparse._ArgumentGroup, taken: set[str], *, budget_only: bool = False) -> None:
        super().add_arguments(group, taken, budget_only=budget_only)
        if budget_only:
            return
        group.description = ("ToolObserver's budget, variant and improvements, each switched on or off whatever the "
                             "variant (what each does in full: docs/optimizers/toolobserver.md)")
        group.add_argument("--variant", default="improved", choices=tuple(VARIANTS),
                           help="improved (every improvement on but the opt-in ones) or paper (the paper's protocol, "
                                "as published) (default improved)")
        group.add_argument("--oracle-feedback", action="store_true",
                           help="online: show the editor whether each attempt succeeded (default off, as in the paper)")
        for name in Improvements.names():
            if name not in taken:
                group.add_argument(f"--{name.replace('_', '-')}", dest=name, action=argparse.BooleanOptionalAction,
                                   default=None, help=f"{Improvements.summary(name)} (default: as the variant says)")
                taken.add(name)

    def idle_in(self, mode: str) -> dict[str, tuple[str, ...]]:
        """Its budget knobs', improvements' and oracle feedback's flags that do nothing in ``mode``."""
        idle = super().idle_in(mode) | {name: tuple(m for m in MODES if name in Improvements.acting_in(m))
                                        for name in Improvements.names() if name not in Improvements.acting_in(mode)}
        return idle | ({"oracle_feedback": ("online",)} if mode != "online" else {})

    def knobs_from(self, values: Mapping[str, Any]) -> ToolObserverKnobs:
        budget: ToolObserverKnobs = knob_rules.from_values(self.knobs, values)
        chosen = dataclasses.replace(
            budget, variant=str(values.get("variant") or "improved"), oracle_feedback=bool(values.get("oracle_feedback")),
            switches={name: bool(values[name]) for name in Improvements.names() if values.get(name) is not None})
        chosen.improvements  # noqa: B018 - refuses an unknown variant here, before anything loads
        return with_learn_tokens(with_switches(chosen, values), values.get("learn_tokens"))

    def check(self, knobs: Any) -> None:
        super().check(knobs)
        knobs.improvements  # noqa: B018 - refuses an unknown variant or improvement

    def define(self, knobs: Any, mode: str) -> dict[str, Any]:
        used = knobs.improvements
        return {**super().define(knobs, mode), "variant": knobs.variant, "oracle_feedback": bool(knobs.oracle_feedback),
                "improvements": sorted(name for name in Improvements.acting_in(mode) if getattr(used, name))}

    def knobs_of(self, part: Mapping[str, Any], mode: str) -> ToolObserverKnobs:
        variant = VARIANTS[str(part["variant"])]
        on = set(part.get("improvements", ()))
        switches = {name: name in on for name in Improvements.acting_in(mode) if (name in on) != getattr(variant, name)}
        budget: ToolObserverKnobs = knob_rules.from_values(self.knobs, part)
        chosen = dataclasses.replace(budget, variant=str(part["variant"]), switches=switches,
                                     oracle_feedback=bool(part.get("oracle_feedback")))
        return with_learn_tokens(with_switches(chosen, part), part.get("learn_tokens"))

    def params(self, part: Mapping[str, Any], mode: str, *, swept: bool) -> dict[str, Any]:
        params = super().params(part, mode, swept=swept)
        params["variant"] = part["variant"]
        params |= self._departures(part, mode)
        if part.get("oracle_feedback"):
            params["oracle_feedback"] = True
        return params

    @staticmethod
    def _departures(part: Mapping[str, Any], mode: str) -> dict[str, bool]:
        """The improvements acting in ``mode`` that a definition part has switched away from its variant, as
        ``--[no-]NAME`` switches."""
        variant, on = VARIANTS[str(part["variant"])], set(part.get("improvements", ()))
        return {name: name in on for name in Improvements.acting_in(mode) if (name in on) != getattr(variant, name)}

    def row_label(self, part: Mapping[str, Any], mode: str) -> str:
        """``+TO``; ``+TO (paper)`` for the paper's variant; ``+TO --no-facts`` for an improvement switched away from
        its variant (an ablation)."""
        variant = str(part["variant"])
        label = self.label + (f" ({variant})" if variant != "improved" else "")
        for name, on in self._departures(part, mode).items():
            label += f" --{'' if on else 'no-'}{name.replace('_', '-')}"
        return label + switches_label(part, own=True) + budget_label(part)

    def from_earlier_format(self, optimizer: Mapping[str, Any]) -> dict[str, Any]:
        return {**dict(optimizer.get("knobs", {})), "variant": optimizer["variant"],
                "improvements": sorted(optimizer.get("improvements", ())),
                "oracle_feedback": bool(optimizer.get("oracle_feedback"))}

    def earlier_values(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Runs logged before ``--variant`` existed ran the paper's protocol; the improvements declared
        ``always_logged`` were logged wherever they acted once they existed, so one a run lacks was off."""
        filled = {"variant": "paper", **values}
        for improvement in Improvements.always_logged():
            filled.setdefault(improvement, False)
        return filled

    def rows(self, knobs: Any, mode: str, *, probe: bool, probe_only: bool, ablations: bool) -> list[Any]:
        """The paper's protocol and the improved variant; with ``ablations``, the improved variant with each of its
        improvements that act in ``mode`` switched off, one at a time."""
        own = [dataclasses.replace(knobs, variant="paper"), knobs]
        if not ablations:
            return own
        return own + [dataclasses.replace(knobs, switches={**knobs.switches, name: False})
                      for name in Improvements.acting_in(mode) if getattr(IMPROVED, name)]

    @property
    def has_ablations(self) -> bool:
        return True

    def knob_tables(self) -> str:
        return f"{super().knob_tables()}\n\n{improvements_table()}"


def improvements_table() -> str:
    """The improvements as a Markdown table, in declaration order (switch, paper and improved variants, modes)."""
    rows = ["| switch | paper | improved | acts | what it does |", "|---|---|---|---|---|"]
    on = {True: "on", False: "off"}
    for name in Improvements.names():
        modes = " and ".join(mode for mode in MODES if name in Improvements.acting_in(mode))
        rows.append(f"| `--[no-]{name.replace('_', '-')}` | {on[getattr(PAPER, name)]} | {on[getattr(IMPROVED, name)]} "
                    f"| {modes} | {Improvements.help(name).replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


def _build(knobs: Any, lms: Mapping[str, Any], built: Built) -> DocOptimizer:
    from otbench.optimizers.toolobserver.teleprompter import ToolObserver

    return ToolObserver(editor_lm=lms["editor"], mode=built.mode, max_iterations=knobs.iterations,
                        batch_size=knobs.batch_size, improvements=knobs.improvements,
                        oracle_feedback=knobs.oracle_feedback, **built.common)


SPEC = ToolObserverSpec("toolobserver", "+TO", ToolObserverKnobs, _build,
                        teleprompter="otbench.optimizers.toolobserver.teleprompter.ToolObserver")
