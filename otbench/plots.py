"""Figures for comparing documentation optimizers, written as PNG files (matplotlib, no display).

- :func:`plot_metric_by_iteration`: a metric after each optimizer iteration, one line per
  optimizer (the paper's Figure 3), from the per-step histories MLflow keeps.
- :func:`plot_metric_vs_tokens`: one point per row of a comparison, the metric against the
  tokens it cost, which shows at a glance what an improvement was bought with.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: commands run on servers and in CI

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)


def plot_metric_by_iteration(histories: dict[str, list[tuple[int, float]]], metric: str, title: str,
                             path: Path) -> Path:
    """Line per optimizer of ``metric`` by iteration step; ``histories`` maps a label to (step, value) pairs."""
    figure, axes = plt.subplots(figsize=(6, 4))
    for label, points in histories.items():
        steps = [step for step, _ in points]
        values = [value for _, value in points]
        axes.plot(steps, values, marker="o", label=label)
    axes.set_xlabel("iteration")
    axes.set_ylabel(metric)
    axes.set_title(title)
    axes.grid(alpha=0.3)
    if histories:
        axes.legend()
        axes.xaxis.get_major_locator().set_params(integer=True)
    return _save(figure, path)


def plot_metric_vs_tokens(points: dict[str, tuple[float, float]], metric: str, title: str, path: Path) -> Path:
    """One labelled point per row: ``points`` maps a row label to (total tokens, metric)."""
    figure, axes = plt.subplots(figsize=(6, 4))
    for label, (tokens, value) in points.items():
        axes.scatter([tokens], [value])
        axes.annotate(label, (tokens, value), textcoords="offset points", xytext=(5, 5))
    axes.set_xlabel("total tokens (optimization + evaluation)")
    axes.set_ylabel(metric)
    axes.set_title(title)
    axes.grid(alpha=0.3)
    return _save(figure, path)


def _save(figure: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
