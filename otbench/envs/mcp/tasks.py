"""The task file: one request a line, with what answers it, split into the tasks docs are learned and scored on.

A line is a JSON object::

    {"question": "What is 12:30 in Tokyo in Kolkata time?", "answer": "09:00"}
    {"question": "...", "answer": 3.5, "metric": "numeric", "calls": [{"name": "convert_time", "arguments": {...}}]}

``question`` (the request) is required; ``answer`` is what the metric looks for in what the calls
returned; ``calls`` are the calls that answer it, under the server's own tool names (then
``--agent oracle`` replays them, and the ``calls`` metric compares with them); ``metric`` names a
built-in metric for this line instead of ``--metric``; ``split`` (``train`` or ``test``) puts the line
in a split; ``id`` names the task (default: a digest of the line). Lines without a ``split`` are split
by position: the first of every three is a train task, so a file of ten has four to learn on and six to
score on, the same on every machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy

from otbench.envs.mcp.metrics import BUILT_IN
from otbench.errors import ConfigError

SPLITS = ("train", "test")
TRAIN_EVERY = 3
"""Of the lines without a ``split``, one in this many (the first, fourth...) is a train task."""


def _checked_calls(calls: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(calls, list) or not calls:
        raise ConfigError(f"{where}: calls must be a non-empty list of {{\"name\": ..., \"arguments\": {{...}}}}")
    for call in calls:
        if not (isinstance(call, dict) and isinstance(call.get("name"), str)
                and isinstance(call.get("arguments", {}), dict)):
            raise ConfigError(f"{where}: each call needs a tool name and an object of arguments, got {call!r}")
    return [{"name": call["name"], "arguments": dict(call.get("arguments", {}))} for call in calls]


def _task(line: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except ValueError as error:
        raise ConfigError(f"{where}: not valid JSON ({error})") from None
    except RecursionError:
        raise ConfigError(f"{where}: nested too deep to be a task") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected an object with a question")
    if not isinstance(data.get("question"), str) or not data["question"].strip():
        raise ConfigError(f"{where}: needs a question text (the request)")
    if "answer" not in data and "calls" not in data:
        raise ConfigError(f"{where}: needs an answer, or the calls that answer it")
    if "calls" in data:
        data["calls"] = _checked_calls(data["calls"], where)
    if data.get("metric", BUILT_IN[0]) not in BUILT_IN:
        raise ConfigError(f"{where}: metric {data['metric']!r} is none of {', '.join(BUILT_IN)} (a metric of your "
                          "own is given with --metric module:function)")
    if data.get("split", "test") not in SPLITS:
        raise ConfigError(f"{where}: split must be train or test, got {data['split']!r}")
    return data


def read_tasks(path: Path) -> dict[str, list[dspy.Example]]:
    """The train and test tasks of the task file ``path``, in file order."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConfigError(f"--tasks {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"--tasks {path}: not UTF-8 text") from None
    splits: dict[str, list[dspy.Example]] = {split: [] for split in SPLITS}
    unsplit = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        data = _task(line, f"{path}:{number}")
        split = data.pop("split", None)
        if split is None:
            split = "train" if unsplit % TRAIN_EVERY == 0 else "test"
            unsplit += 1
        splits[split].append(dspy.Example(**data))
    for split in SPLITS:
        if not splits[split]:
            raise ConfigError(f"--tasks {path}: no {split} task; write at least two tasks, or give some lines "
                              f'"split": "{split}"')
    return splits
