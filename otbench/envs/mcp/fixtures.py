"""The files the shipped servers work on, built the same way every time, so their tasks' answers hold anywhere.

- :func:`build_shop`: ``shop.db``, the sqlite server's database, from the shipped ``data/shop.sql``;
- :func:`build_repository`: ``inventory-app``, the git server's repository: eight commits by three authors at
  fixed dates, six on ``main`` and one on each of two side branches, a staged and an unstaged change. Its commit ids come out the same on every
  machine (the same trees, parents, authors, dates and messages make the same objects), which the task file's
  questions rely on; git's own configuration on the machine is ignored.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

from otbench.errors import SetupError

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = "inventory-app"
"""The repository's folder, beside which the git server runs: tasks name it as the repository to use."""

AUTHORS = {"ada": ("Ada Lovelace", "ada@example.org"), "grace": ("Grace Hopper", "grace@example.org"),
           "linus": ("Linus Pauling", "linus@example.org")}

STOCK = '''"""Stock levels of the inventory."""

REORDER_AT = {threshold}


def needs_reorder(units: int) -> bool:
    return units <= REORDER_AT
'''
PRICES = '''"""Prices with VAT."""

VAT_RATE = 0.23


def gross(net: float) -> float:
    return {gross}
'''
# (branch, author, message, files written): the history, in order; a side branch starts from main where it appears
HISTORY: tuple[tuple[str, str, str, dict[str, str]], ...] = (
    ("main", "ada", "Start the inventory app", {
        "README.md": "# inventory-app\n\nTracks stock and prices of the shop.\n",
        "src/stock.py": STOCK.format(threshold=10)}),
    ("main", "grace", "Add prices with VAT", {"src/prices.py": PRICES.format(gross="net * (1 + VAT_RATE)")}),
    ("main", "linus", "Test stock levels", {
        "tests/test_stock.py": "from src.stock import needs_reorder\n\n\ndef test_low_stock_is_reordered():\n"
                               "    assert needs_reorder(2)\n"}),
    ("main", "ada", "Lower the reorder threshold to 5", {"src/stock.py": STOCK.format(threshold=5)}),
    ("main", "grace", "Add a changelog", {"CHANGELOG.md": "# Changelog\n\n## 1.0\n\n- Stock levels and prices.\n"}),
    ("feature/discounts", "linus", "Add seasonal discounts", {
        "src/discounts.py": '"""Seasonal discounts."""\n\nSPRING_DISCOUNT = 0.15\n'}),
    ("main", "ada", "Document the price rules", {
        "README.md": "# inventory-app\n\nTracks stock and prices of the shop.\n\nPrices include VAT at 23%.\n"}),
    ("release-1.0", "grace", "Round prices to cents", {
        "src/prices.py": PRICES.format(gross="round(net * (1 + VAT_RATE), 2)")}),
)
STAGED = {"CHANGELOG.md": "# Changelog\n\n## 1.1 - unreleased\n\n## 1.0\n\n- Stock levels and prices.\n"}
UNSTAGED = {"README.md": "# inventory-app\n\nTracks stock and prices of the shop.\n\nPrices include VAT at 23%.\n"
                         "Contact: ops@example.org\n"}


def build_shop(folder: Path) -> None:
    """``folder/shop.db``: the shop database (``data/shop.sql``)."""
    folder.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(folder / "shop.db")) as database:
        database.executescript((DATA / "shop.sql").read_text())
        database.commit()


def _git(repository: Path, *arguments: str, when: str = "2025-03-01T09:00:00+00:00", who: str = "ada") -> None:
    name, email = AUTHORS[who]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(repository), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
           "GIT_COMMITTER_DATE": when}
    try:
        subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *arguments],
                       cwd=repository, env=env, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise SetupError("git is not installed: the git MCP server's fixture needs it (apt-get install git)") from None
    except subprocess.CalledProcessError as error:
        raise SetupError(f"git {' '.join(arguments)} failed while building the fixture: {error.stderr.strip()}") from None


def _write(repository: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = repository / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def build_repository(folder: Path) -> None:
    """``folder/inventory-app``: the repository (see the module's docstring)."""
    repository = folder / REPOSITORY
    repository.mkdir(parents=True)
    _git(repository, "init", "--quiet", "--initial-branch=main")
    for hour, (branch, who, message, files) in enumerate(HISTORY, start=9):
        if branch != "main":  # a side branch starts from main as it is, and gets one commit
            _git(repository, "checkout", "--quiet", "-b", branch)
        _write(repository, files)
        _git(repository, "add", *files)
        _git(repository, "commit", "--quiet", "-m", message, when=f"2025-03-{hour - 8:02d}T{hour}:00:00+00:00", who=who)
        if branch != "main":
            _git(repository, "checkout", "--quiet", "main")
    _write(repository, STAGED)
    _git(repository, "add", *STAGED)
    _write(repository, UNSTAGED)
