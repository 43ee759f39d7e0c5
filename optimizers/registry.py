"""Every documentation optimizer the commands offer: one line each, naming the module that declares its spec.

A spec (:class:`otbench.optimizers.spec.OptimizerSpec`) is all the commands know of an optimizer: its
``--optimizer`` choice, flags, sweep space, comparison rows, the part of a run's definition its knobs make,
its docs' knob tables and how its teleprompter is built. A new optimizer is one module that declares ``SPEC``
(and its teleprompter, or imports it when built) and one line here.
"""

from __future__ import annotations

from otbench.optimizers.spec import OptimizerSpec, load

OPTIMIZERS: dict[str, OptimizerSpec] = {
    "toolobserver": load("otbench.optimizers.toolobserver.spec"),
    "play2prompt": load("otbench.optimizers.play2prompt_spec"),
    "easytool": load("otbench.optimizers.easytool_spec"),
    "gepa": load("otbench.optimizers.gepa_spec"),
}
"""Optimizer name -> its spec, in the order the commands list them."""

DEFAULT = "toolobserver"
"""The optimizer the commands run unless told otherwise."""
REFERENCE = "toolobserver"
"""The optimizer whose default row every comparison row is also paired with (and its tokens set against)."""


def reference_label() -> str:
    """The comparison row of the reference optimizer's default knobs (``+TO``)."""
    return OPTIMIZERS[REFERENCE].label


def spec_of(name: str) -> OptimizerSpec:
    """The spec of optimizer ``name``, refused on one line when there is none."""
    from otbench.errors import ConfigError

    if name not in OPTIMIZERS:
        raise ConfigError(f"unknown optimizer {name!r}; choose from {', '.join(OPTIMIZERS)}")
    return OPTIMIZERS[name]
