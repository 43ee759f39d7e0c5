"""Figures for comparing documentation optimizers, written as PNG files (matplotlib, no display).

- :func:`plot_metric_by_iteration`: a metric after each optimizer iteration, one line per
  optimizer (the paper's Figure 3), from the per-step histories MLflow keeps.
- :func:`plot_metric_vs_tokens`: one point per row of a comparison, the metric against the
  tokens it cost, which shows at a glance what an improvement was bought with.
- :func:`plot_metric_vs_fault_rate`: a metric against the rate of injected tool faults, one line per
  row (base, +TO, +P2P...), from comparisons run at several rates.
- :func:`plot_metric_by_row`: each row's figure with its 95% interval, the rows whose difference to base
  holds marked: what a comparison can and cannot tell apart.

Wherever intervals are known they are drawn as error bars.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import cast

import matplotlib

matplotlib.use("Agg")  # headless: commands run on servers and in CI

import matplotlib.pyplot as plt  # after the backend is chosen
from matplotlib.ticker import MaxNLocator

_MARKERS = "osD^vP*X"  # one per row, so rows drawn over each other can still be told apart


def plot_metric_by_iteration(histories: dict[str, list[tuple[int, float]]], metric: str, title: str,
                             path: Path, references: dict[str, float] | None = None) -> Path:
    """Line per optimizer of ``metric`` by iteration step; ``histories`` maps a label to (step, value) pairs.

    ``references`` (e.g. base and gold docs) are drawn as dashed levels to read progress against.
    """
    figure, axes = plt.subplots(figsize=(6, 4))
    for label, points in histories.items():
        steps = [step for step, _ in points]
        values = [value for _, value in points]
        axes.plot(steps, values, marker="o", label=label)
    for index, (label, value) in enumerate((references or {}).items()):
        axes.axhline(value, linestyle="--", linewidth=1, color=f"C{len(histories) + index}", label=label)
    axes.set_xlabel("iteration")
    axes.set_ylabel(metric)
    axes.set_title(title)
    axes.grid(alpha=0.3)
    cast(MaxNLocator, axes.xaxis.get_major_locator()).set_params(integer=True)  # the default locator
    _unit_scale(axes, [v for points in histories.values() for _, v in points] + list((references or {}).values()))
    if histories or references:
        axes.legend()
    return _save(figure, path)


Bounds = dict[str, tuple[float, float]]
"""A row label -> the (low, high) ends of its figure's 95% interval."""


def _error(value: float, bounds: tuple[float, float] | None) -> list[list[float]] | None:
    """Matplotlib's asymmetric error bar for one point; None without finite bounds."""
    if bounds is None or not all(math.isfinite(end) for end in bounds):
        return None
    return [[max(0.0, value - bounds[0])], [max(0.0, bounds[1] - value)]]


def plot_metric_vs_tokens(points: dict[str, tuple[float, float]], metric: str, title: str, path: Path,
                          bounds: Bounds | None = None) -> Path:
    """One point per row, named in the legend: ``points`` maps a row label to (total tokens, metric), with the
    metric's 95% interval as an error bar where ``bounds`` has it.

    Rows often share a metric value at nearby costs, so labels written beside the points overlapped;
    token costs span orders of magnitude (an evaluation against a beam search), so the axis is
    logarithmic when they do.
    """
    figure, axes = plt.subplots(figsize=(6, 4))
    for index, (label, (tokens, value)) in enumerate(points.items()):
        axes.errorbar([tokens], [value], yerr=_error(value, (bounds or {}).get(label)), label=label,
                      marker=_MARKERS[index % len(_MARKERS)], markersize=7, linestyle="none", capsize=3)
    costs = [tokens for tokens, _ in points.values() if tokens > 0]
    if costs and max(costs) > 10 * min(costs):
        axes.set_xscale("log")
    axes.set_xlabel("total tokens (optimization + evaluation)")
    axes.set_ylabel(metric)
    axes.set_title(title)
    axes.grid(alpha=0.3)
    _unit_scale(axes, [value for _, value in points.values()])
    if points:
        axes.legend(fontsize="small", loc="best")
    return _save(figure, path)


def plot_metric_vs_fault_rate(lines: dict[str, list[tuple[float, float]]], metric: str, title: str,
                              path: Path, bounds: dict[str, dict[float, tuple[float, float]]] | None = None) -> Path:
    """Line per row of ``metric`` against the fault rate; ``lines`` maps a row label to (rate, value) pairs,
    ``bounds`` a row label to each rate's 95% interval where known (error bars).

    Rows often score the same (several optimizers at the base docs' level), so each line has its own
    marker and dash pattern and one drawn over another still shows; a long policy name wraps.
    """
    figure, axes = plt.subplots(figsize=(6, 4))
    for index, (label, points) in enumerate(lines.items()):
        ordered = sorted(points)
        known = (bounds or {}).get(label, {})
        low = [max(0.0, value - known[rate][0]) if rate in known else 0.0 for rate, value in ordered]
        high = [max(0.0, known[rate][1] - value) if rate in known else 0.0 for rate, value in ordered]
        axes.errorbar([rate for rate, _ in ordered], [value for _, value in ordered],
                      yerr=[low, high] if known else None, label=label, capsize=3,
                      marker=_MARKERS[index % len(_MARKERS)], markersize=9 - index % 4,
                      linestyle=("-", "--", "-.", ":")[index % 4])
    axes.set_xlabel("fault rate (chance a tool call meets an injected fault)")
    axes.set_ylabel(metric)
    axes.set_title(textwrap.fill(title, 60), fontsize="medium")
    axes.grid(alpha=0.3)
    _unit_scale(axes, [value for points in lines.values() for _, value in points])
    if lines:
        axes.legend()
    return _save(figure, path)


def plot_metric_by_row(values: dict[str, float], metric: str, title: str, path: Path, bounds: Bounds | None = None,
                       held: set[str] | None = None) -> Path:
    """Each row's ``metric`` with its 95% interval, one row per line (the table's order, top down); rows in
    ``held`` (their difference to base holds after Holm) are filled, the others hollow."""
    figure, axes = plt.subplots(figsize=(6, 0.9 + 0.45 * max(1, len(values))))
    labels = list(values)
    for index, label in enumerate(labels):
        value = values[label]
        filled = label in (held or set())
        axes.errorbar([value], [index], xerr=_error(value, (bounds or {}).get(label)), marker="o", markersize=7,
                      capsize=4, color="C0" if filled else "C7",
                      markerfacecolor="C0" if filled else "white", linestyle="none")
    axes.set_yticks(range(len(labels)), labels)
    axes.invert_yaxis()
    axes.set_xlabel(f"{metric} (95% interval; filled: differs from base after Holm)")
    axes.set_title(textwrap.fill(title, 60), fontsize="medium")
    axes.grid(alpha=0.3, axis="x")
    shown = [end for label in labels for end in ((bounds or {}).get(label) or ()) if math.isfinite(end)]
    if [*values.values(), *shown] and all(0.0 <= v <= 1.0 for v in [*values.values(), *shown] if math.isfinite(v)):
        axes.set_xlim(-0.03, 1.03)
    return _save(figure, path)


def _unit_scale(axes: plt.Axes, values: list[float]) -> None:
    """Rates and accuracies keep their whole 0..1 scale, so a flat 0 is not drawn as a zoomed-in line."""
    if values and all(0.0 <= value <= 1.0 for value in values):
        axes.set_ylim(-0.03, 1.03)


def _save(figure: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
