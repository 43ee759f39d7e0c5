"""The OpaqueToolsBench paper's Table 2 (GPT-5 as agent and editor), to set a reproduction beside.

Each setting's figures are in otbench's units (shares of tasks for BFCL's E and BrowseComp's accuracy,
per cent for Chess's % optimal tool). What compares across models of very different size is how much of
the gap between the opaque docs (base) and the true docs (gold) an optimizer closes:
:func:`gap_share`. The gold row of BFCL is the transparent setting's, shared by all three settings;
names_desc's base comes from the authors' per-category runs (0 in both categories).
"""

from __future__ import annotations

from collections.abc import Mapping

TABLE2: dict[tuple[str, str], dict[str, float]] = {
    ("bfcl", "names_only"): {"base": 0.0, "gold": 0.92, "+TO": 0.62, "+P2P": 0.50, "+ET": 0.0},
    ("bfcl", "names_desc"): {"base": 0.0, "gold": 0.92, "+TO": 0.86, "+P2P": 0.50},
    ("bfcl", "names_params"): {"base": 0.78, "gold": 0.92, "+TO": 0.82, "+P2P": 0.78, "+ET": 0.70},
    ("chess", "phase"): {"base": 23.5, "gold": 64.4, "+TO": 40.1, "+P2P": 35.8},
    ("browsecomp", "domains"): {"base": 0.188, "gold": 0.308, "+TO": 0.203},
}
"""(environment, setting) -> row -> the primary metric the paper reports."""
MODEL = "GPT-5"
NOTE = ("otbench's BFCL scorer, applied to the authors' own released outputs, gives E equal or up to 0.05 higher "
        "per category (it does not copy three choices of their scorer): read small BFCL differences with that in mind.")


def paper_row(label: str) -> str:
    """The paper's row a row of ours reproduces: ``+TO (paper)`` and ``+TO`` are ToolObserver, ``+ET (probe)`` is
    EasyTool given our probe (the paper's EasyTool had none)."""
    return label.split(" ", 1)[0]


def figures(env: str, setting: str) -> Mapping[str, float]:
    """The paper's figures for a setting (empty where the paper has none)."""
    return TABLE2.get((env, setting), {})


def gap_share(env: str, setting: str, label: str) -> float | None:
    """The share of the base-gold gap the paper's row closes, ``(row - base) / (gold - base)``; None where the
    paper has no such row."""
    table = figures(env, setting)
    row = table.get(paper_row(label))
    if row is None or "base" not in table or "gold" not in table or table["gold"] == table["base"]:
        return None
    return (row - table["base"]) / (table["gold"] - table["base"])
