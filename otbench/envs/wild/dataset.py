"""The committed Wild data: the toolset (BFCL's docs of every function, in the order that numbers them) and the
dialogues, checked against the fingerprint they were generated with.

Generating needs BFCL's wheel (its questions and gold calls), so the output is committed like the chess
positions, and a run needs nothing but the package: ``python -m otbench.envs.wild.generate --check``
regenerates it and compares.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otbench.envs.wild.generate import DATA_DIRECTORY, DIALOGUES_FILE, TOOLSET_FILE, TOOLSET_FORMAT, fingerprint_of
from otbench.envs.wild.scenario import Dialogue
from otbench.errors import DataError

REFERENCE_FINGERPRINT = "c1e0ff38854b5d28fa63fbff806d673922534bfe93ab24c0a9f14ab959c46662"
"""sha256 of the committed files (:func:`~otbench.envs.wild.generate.fingerprint_of`)."""
SPLITS = ("train", "test")


@dataclass(frozen=True)
class WildData:
    functions: tuple[dict[str, Any], ...]
    """BFCL's docs of every function offered anywhere; the i-th is ``function_{i+1}``."""
    dialogues: tuple[Dialogue, ...]
    fingerprint: str

    def split(self, name: str) -> list[Dialogue]:
        return [dialogue for dialogue in self.dialogues if dialogue.split == name]


def parse_data(toolset_bytes: bytes, dialogue_bytes: bytes) -> WildData:
    """The data in the two files' bytes; a malformed file is a :class:`DataError`."""
    try:
        toolset = json.loads(toolset_bytes)
        dialogues = tuple(Dialogue.from_dict(json.loads(line)) for line in dialogue_bytes.decode().splitlines()
                          if line.strip())
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"Wild data is malformed: {exc}") from exc
    if not isinstance(toolset, dict) or toolset.get("format") != TOOLSET_FORMAT:
        raise DataError(f"Wild toolset is not in the {TOOLSET_FORMAT} format")
    functions = tuple(toolset["functions"])
    names = {function["name"] for function in functions}
    missing = sorted({name for d in dialogues for name in d.functions} - names)
    if missing:
        raise DataError(f"Wild dialogues offer functions the toolset lacks: {', '.join(missing[:3])}")
    return WildData(functions, dialogues, fingerprint_of(toolset_bytes, dialogue_bytes))


def load_data(directory: Path = DATA_DIRECTORY) -> WildData:
    """The data in ``directory`` (the committed files by default, refused if they are not the reference)."""
    try:
        toolset_bytes = (directory / TOOLSET_FILE).read_bytes()
        dialogue_bytes = (directory / DIALOGUES_FILE).read_bytes()
    except OSError as exc:
        raise DataError(f"Wild data missing in {directory}: {exc}") from exc
    data = parse_data(toolset_bytes, dialogue_bytes)
    if directory == DATA_DIRECTORY and data.fingerprint != REFERENCE_FINGERPRINT:
        raise DataError(f"Wild data in {directory} differs from the reference (fingerprint {data.fingerprint[:12]}, "
                        f"expected {REFERENCE_FINGERPRINT[:12]}): regenerate it with python -m otbench.envs.wild.generate")
    return data
