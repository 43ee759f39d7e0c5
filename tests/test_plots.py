"""Comparison plots are written as PNG files."""

from otbench.study.plots import plot_metric_by_iteration, plot_metric_vs_tokens

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_both_plots_are_written_as_png(tmp_path):
    by_iteration = plot_metric_by_iteration({"+TO": [(0, 0.0), (1, 0.4), (2, 0.6)], "+P2P": [(0, 0.0), (1, 0.5)]},
                                            "E", "E by iteration", tmp_path / "a" / "iterations.png",
                                            references={"base": 0.0, "gold": 0.9})
    vs_tokens = plot_metric_vs_tokens({"base": (1000, 0.0), "+TO": (9000, 0.6)}, "E", "E vs tokens",
                                      tmp_path / "tokens.png")
    for path in (by_iteration, vs_tokens):
        assert path.read_bytes().startswith(PNG_SIGNATURE) and path.stat().st_size > 5000
