"""Scores of one Wild dialogue: tasks, the whole session, the path taken, turn by turn, and why tasks failed.

A dialogue holds four user tasks over several user turns. Each task has a kind (what the right response
is), a hidden intention (where its values come from) and gold calls under the names the agent was shown.
A gold call's argument may be read from the output of an earlier gold call of the same task (a value
that is an object ``{"$ref": i, "path": [...], "as": ...}``): "one output feeds the next call". When the
agent's own prerequisite call matched, the value is read from what *it* returned (so an output damaged
by an injected fault is followed, not held against the agent); else from the gold output.

Pure functions of what the environment recorded (the calls of each reply, each turn's ending), so they
are testable on hand-built trajectories:

- ``task_accuracy``: tasks done right. A tool task is right when the calls that ran match its gold calls
  one to one (same tool; equal arguments, or the same output), none left over; a clarification when the
  agent asked (no call, no answer) and then, told the missing value, made the gold calls; chitchat when
  it replied without a call.
- ``session_accuracy``: dialogues whose four tasks were all right.
- ``optimal_path_rate``: tasks with gold calls done right in as few replies as the dependencies allow
  (independent calls made in one reply; a call that needs another's output in a later one).
- ``tool_selection_accuracy``: turns whose set of called tools is exactly the set needed (none for
  chitchat and for the turn that should ask).
- ``call_correctness``: per turn, calls that matched a gold call over the larger of the calls made and
  the calls needed (a missing call costs as much as a wrong one); 1 for a turn needing none and making none.

Calls that an injected transient fault (timeout, rate limit, unavailable) kept from running are not the
agent's: they are left out of matching and counting, and the retry counts instead.

Each failed task gets one error class, the first that applies: ``refused`` (no call and no question on a
task that needed one, or no usable reply), ``asked_instead`` (asked when it should have acted),
``acted_instead`` (called a tool or answered when it should have asked), ``wrong_tool`` (a call to a
tool the task does not need while a needed call is missing), ``missing_argument`` and ``wrong_value``
(a needed tool called without a needed argument, or with a wrong value), ``incomplete`` (every call
made was right but a needed one never came), ``redundant_call`` (every needed call made, plus others
that worked; or any call in chitchat). When every needed call came but one that failed came first (a
guess the tool's error corrected), the failed call is what is classed: wrong tool, missing argument or
wrong value.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from otbench.core.calls import CallResult
from otbench.evals.outcomes import Mean, MetricRule, Ratio

KINDS = ("single", "series", "parallel", "series_parallel", "clarification", "chitchat")
"""Task kinds: one call; calls where one output feeds the next; independent calls; both; a needed value is
missing (ask, then act on the answer); small talk (no call)."""
TOOL_KINDS = KINDS[:4]
INTENTIONS = ("none", "partial_information", "coreference", "long_range")
"""Where a task's values come from: its own message; an earlier turn, left unsaid; an earlier turn, referred
to ("the same for 12", "that one"); a turn more than two turns back."""
ERROR_CLASSES = ("refused", "asked_instead", "acted_instead", "wrong_tool", "missing_argument", "wrong_value",
                 "incomplete", "redundant_call")
METRIC_NAMES = ("task_accuracy", "session_accuracy", "optimal_path_rate", "tool_selection_accuracy",
                "call_correctness")
METRIC_RULES: dict[str, MetricRule] = {
    "task_accuracy": Ratio("correct_tasks", "tasks"),
    "session_accuracy": Mean("session_accuracy"),
    "optimal_path_rate": Ratio("optimal_tasks", "tool_tasks"),
    "tool_selection_accuracy": Ratio("selected_turns", "turns"),
    "call_correctness": Ratio("correctness_sum", "turns"),
}
"""How each metric is made from per-dialogue scores (:mod:`otbench.evals.outcomes`): tasks, turns and calls are counted
within dialogues, so a dialogue is the cluster of its parts."""

ENDINGS = ("reply", "ask", "none")
"""How a turn ended: a message to the user, a question back, or neither (no usable reply, or out of steps)."""
TRANSIENT_FAULTS = frozenset({"timeout", "rate_limit", "unavailable"})

_REL_TOLERANCE = 1e-3  # a value copied from an output and rounded ("1628.89" for 1628.894626...) is the value
_ABS_TOLERANCE = 1e-6
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
_MISSING = object()


# -- gold calls: references into earlier outputs ------------------------------------------------------------
def is_ref(value: Any) -> bool:
    return isinstance(value, dict) and "$ref" in value


def ref_indexes(value: Any) -> set[int]:
    """The gold calls whose outputs ``value`` reads."""
    if is_ref(value):
        return {int(value["$ref"])}
    if isinstance(value, dict):
        return set().union(*(ref_indexes(item) for item in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(ref_indexes(item) for item in value)) if value else set()
    return set()


def _as_number(value: Any) -> Any:
    """A price such as ``"$136.99"`` or ``"1,200"`` as a number (other values unchanged)."""
    if isinstance(value, str):
        found = _NUMBER.search(value)
        if found:
            number = float(found.group().replace(",", ""))
            return int(number) if number.is_integer() and "." not in found.group() else number
    return value


def resolve(value: Any, outputs: Sequence[Any]) -> Any:
    """``value`` with every reference replaced by what it reads from ``outputs`` (index: gold call)."""
    if is_ref(value):
        read = outputs[int(value["$ref"])]
        for step in value.get("path", []):
            read = read[step]
        kind = value.get("as")
        if kind == "number":
            return _as_number(read)
        if kind == "text":
            return str(read)
        return read
    if isinstance(value, dict):
        return {key: resolve(item, outputs) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item, outputs) for item in value]
    return value


def depth(arguments: Sequence[Mapping[str, Any]]) -> int:
    """Replies a task needs at least: the longest chain of calls that read each other's outputs (0: no call)."""
    level: list[int] = []
    for args in arguments:
        level.append(1 + max((level[i] for i in ref_indexes(dict(args))), default=0))
    return max(level, default=0)


# -- values --------------------------------------------------------------------------------------------------
def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def values_equal(expected: Any, given: Any) -> bool:
    """Equal as a user would mean them: numbers within a small relative tolerance (also when one is a
    numeric string, as coordinates are), text ignoring case and surrounding spaces, lists and objects
    element by element (tuples as lists)."""
    if _is_number(expected) or _is_number(given):
        a, b = _as_float(expected), _as_float(given)
        return a is not None and b is not None and math.isclose(a, b, rel_tol=_REL_TOLERANCE, abs_tol=_ABS_TOLERANCE)
    if isinstance(expected, str) and isinstance(given, str):
        return expected.strip().casefold() == given.strip().casefold()
    if isinstance(expected, (list, tuple)) and isinstance(given, (list, tuple)):
        return len(expected) == len(given) and all(values_equal(a, b) for a, b in zip(expected, given, strict=True))
    if isinstance(expected, dict) and isinstance(given, dict):
        return expected.keys() == given.keys() and all(values_equal(expected[k], given[k]) for k in expected)
    return bool(expected == given)


def _as_float(value: Any) -> float | None:
    if _is_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def arguments_equal(expected: Mapping[str, Any], given: Mapping[str, Any], defaults: Mapping[str, Any]) -> bool:
    """Every parameter either call sets has equal values, a parameter left out taking its default."""
    for name in set(expected) | set(given):
        want, got = expected.get(name, defaults.get(name, _MISSING)), given.get(name, defaults.get(name, _MISSING))
        if want is _MISSING or got is _MISSING or not values_equal(want, got):
            return False
    return True


def missing_arguments(expected: Mapping[str, Any], given: Mapping[str, Any], defaults: Mapping[str, Any]) -> list[str]:
    """Needed arguments the call left out (those whose default is not the needed value)."""
    return [name for name, value in expected.items()
            if name not in given and not (name in defaults and values_equal(value, defaults[name]))]


# -- what the environment records ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ExpectedCall:
    """One gold call as the agent should make it."""

    name: str
    """The tool's name as shown to the agent."""
    arguments: Mapping[str, Any]
    """Argument values, references to earlier gold calls' outputs included."""
    output: Any
    """What the call returns (gold arguments)."""
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """The tool's optional parameters and their defaults: leaving one out means its default."""


@dataclass(frozen=True)
class ExpectedTask:
    """One user task of a dialogue."""

    kind: str
    """One of :data:`KINDS`."""
    intention: str
    """One of :data:`INTENTIONS`."""
    turns: tuple[int, ...]
    """The user turns of the task, by index in the dialogue: one, or for a clarification the request then
    the user's answer."""
    calls: tuple[ExpectedCall, ...] = ()
    """Its gold calls, made in its last turn."""


@dataclass(frozen=True)
class TurnRecord:
    """What the agent did in one user turn."""

    steps: tuple[tuple[CallResult, ...], ...]
    """The tool calls of each reply, as they ran (calls to answer or ask are not tool calls)."""
    ending: str
    """One of :data:`ENDINGS`."""


@dataclass(frozen=True)
class TaskOutcome:
    kind: str
    intention: str
    correct: bool
    error: str | None
    """One of :data:`ERROR_CLASSES` for a failed task, None for a right one."""
    optimal: bool | None
    """Done right on a shortest path; None for a task without gold calls."""


@dataclass(frozen=True)
class DialogueScore:
    tasks: tuple[TaskOutcome, ...]
    selection: tuple[bool, ...]
    """Per turn: the right set of tools was called."""
    correctness: tuple[float, ...]
    """Per turn: calls that matched over the larger of calls made and calls needed."""
    matched: frozenset[tuple[int, int, int]]
    """(turn, reply, call) of every call that matched a gold call."""
    switches: int

    def metrics(self) -> dict[str, float]:
        """The dialogue's metrics, with each task's outcome coded as numbers (an MLflow metric is a number):
        ``taskN.kind``/``.intention``/``.error`` index :data:`KINDS`, :data:`INTENTIONS`,
        :data:`ERROR_CLASSES` (-1: no error)."""
        tool_tasks = [t for t in self.tasks if t.optimal is not None]
        data = {
            "task_accuracy": _mean([t.correct for t in self.tasks]),
            "session_accuracy": float(all(t.correct for t in self.tasks)),
            "optimal_path_rate": _mean([bool(t.optimal) for t in tool_tasks]) if tool_tasks else 1.0,
            "tool_selection_accuracy": _mean(list(self.selection)),
            "call_correctness": _mean(list(self.correctness)),
            "tasks": float(len(self.tasks)), "correct_tasks": float(sum(t.correct for t in self.tasks)),
            "tool_tasks": float(len(tool_tasks)),
            "optimal_tasks": float(sum(bool(t.optimal) for t in tool_tasks)),
            "turns": float(len(self.selection)), "selected_turns": float(sum(self.selection)),
            "correctness_sum": float(sum(self.correctness)), "switches": float(self.switches),
        }
        for number, task in enumerate(self.tasks, start=1):
            data[f"task{number}.correct"] = float(task.correct)
            data[f"task{number}.kind"] = float(KINDS.index(task.kind))
            data[f"task{number}.intention"] = float(INTENTIONS.index(task.intention))
            data[f"task{number}.error"] = float(ERROR_CLASSES.index(task.error)) if task.error else -1.0
        return data

    def feedback(self) -> str:
        """One line per task, for editors: its kind and hidden intention, and whether it was right or why not
        (never the gold calls)."""
        return "; ".join(f"task {number} ({task.kind}, {task.intention.replace('_', ' ')}): "
                         + ("right" if task.correct else f"failed, {str(task.error).replace('_', ' ')}")
                         for number, task in enumerate(self.tasks, start=1))


def _mean(values: Sequence[bool | float]) -> float:
    return sum(float(v) for v in values) / len(values) if values else 0.0


# -- scoring --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Made:
    """A call the agent made in a turn, located."""

    turn: int
    step: int
    index: int
    result: CallResult

    @property
    def counted(self) -> bool:
        return self.result.injected not in TRANSIENT_FAULTS

    @property
    def key(self) -> tuple[int, int, int]:
        return self.turn, self.step, self.index


def _made(turn: int, record: TurnRecord) -> list[_Made]:
    return [_Made(turn, step, index, result) for step, results in enumerate(record.steps)
            for index, result in enumerate(results)]


def _matches(made: _Made, expected: ExpectedCall, arguments: Mapping[str, Any]) -> bool:
    """The same tool, called successfully, with equal arguments or giving the same output. A call that failed never
    matches, even with values that compare equal (a zip code sent as a number loses its leading zero)."""
    call, result = made.result.call, made.result
    if call.name != expected.name or call.problem is not None or not result.ok:
        return False
    if arguments_equal(arguments, call.arguments, expected.defaults):
        return True
    return result.injected is None and values_equal(expected.output, result.output)


def _match(task: ExpectedTask, made: list[_Made]) -> tuple[dict[int, _Made], list[int], list[_Made]]:
    """Gold call index -> the call that matched it (greedy in gold order, each call once), the gold calls left
    unmatched, and the counted calls left over. A gold call's references read the matched calls' outputs."""
    outputs = [call.output for call in task.calls]
    free = [m for m in made if m.counted]
    matched: dict[int, _Made] = {}
    unmatched: list[int] = []
    for index, expected in enumerate(task.calls):
        arguments = resolve(dict(expected.arguments), outputs)
        found = next((m for m in free if _matches(m, expected, arguments)), None)
        if found is None:
            unmatched.append(index)
            continue
        free.remove(found)
        matched[index] = found
        if found.result.ok:
            outputs[index] = found.result.output
    return matched, unmatched, free


def _call_error(task: ExpectedTask, unmatched: list[int], left: list[_Made]) -> str:
    """Why the needed calls were not all made right (some gold call is unmatched)."""
    if any(m.result.call.name not in {c.name for c in task.calls} for m in left):
        return "wrong_tool"
    outputs = [call.output for call in task.calls]
    for made in left:
        for index in unmatched:
            expected = task.calls[index]
            if expected.name == made.result.call.name:
                arguments = resolve(dict(expected.arguments), outputs)
                if missing_arguments(arguments, made.result.call.arguments, expected.defaults):
                    return "missing_argument"
    return "wrong_value" if left else "incomplete"


def _tool_task(task: ExpectedTask, made: list[_Made], ending: str) -> tuple[bool, str | None, dict[int, _Made]]:
    if not any(m.counted for m in made):
        if made:  # every call it tried met an injected failure and it gave up
            return False, "incomplete", {}
        return False, "asked_instead" if ending == "ask" else "refused", {}
    matched, unmatched, left = _match(task, made)
    if not unmatched:
        failed = [m for m in left if not m.result.ok]
        if not left:
            return True, None, matched
        # every needed call came; a call that failed on the way (then made right) says what went wrong first
        return False, _call_error(task, list(range(len(task.calls))), failed) if failed else "redundant_call", matched
    return False, _call_error(task, unmatched, left), matched


def _in_order(task: ExpectedTask, matched: dict[int, _Made]) -> bool:
    """Every call that reads another's output came in a later reply than that call."""
    return all(matched[j].step > matched[i].step for j, call in enumerate(task.calls)
               for i in ref_indexes(dict(call.arguments)) if i in matched and j in matched)


def score_dialogue(tasks: Sequence[ExpectedTask], turns: Sequence[TurnRecord], switches: int) -> DialogueScore:
    """Score every task and turn of one dialogue from what happened in each turn (``turns[i]`` is user turn i)."""
    outcomes: list[TaskOutcome] = []
    selection: list[bool] = [True] * len(turns)
    correctness: list[float] = [1.0] * len(turns)
    matched_keys: set[tuple[int, int, int]] = set()
    for task in tasks:
        act = task.turns[-1]
        made = _made(act, turns[act])
        correct, error, matched = False, None, dict[int, _Made]()
        if task.kind == "chitchat":
            correct = not made and turns[act].ending == "reply"
            if not correct:
                error = ("redundant_call" if made else "asked_instead" if turns[act].ending == "ask" else "refused")
        else:
            if task.kind == "clarification":
                first = turns[task.turns[0]]
                if _made(task.turns[0], first) or first.ending == "reply":
                    error = "acted_instead"
                elif first.ending == "none":
                    error = "refused"
            correct, call_error, matched = _tool_task(task, made, turns[act].ending)
            if error is None:
                error = call_error
            correct = correct and error is None
        matched_keys |= {m.key for m in matched.values()}
        optimal = None
        if task.calls:
            replies = sum(any(m.counted and m.step == step for m in made) for step in range(len(turns[act].steps)))
            optimal = correct and replies == depth([c.arguments for c in task.calls]) and _in_order(task, matched)
        outcomes.append(TaskOutcome(task.kind, task.intention, correct, None if correct else error, optimal))
        for turn in task.turns:
            here = _made(turn, turns[turn])
            needed = [c.name for c in task.calls] if turn == act else []
            selection[turn] = {m.result.call.name for m in here} == set(needed)
            counted = sum(m.counted for m in here)
            hits = sum(m.key in matched_keys for m in here)
            correctness[turn] = hits / max(counted, len(needed)) if max(counted, len(needed)) else 1.0
    return DialogueScore(tuple(outcomes), tuple(selection), tuple(correctness), frozenset(matched_keys), switches)


# -- over many dialogues ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Task:
    correct: bool
    kind: str
    intention: str
    error: str | None
    switches: int


def _tasks_of(metrics: Mapping[str, float]) -> list[_Task]:
    tasks = []
    for number in range(1, int(metrics.get("tasks", 0)) + 1):
        error = int(metrics[f"task{number}.error"])
        tasks.append(_Task(bool(metrics[f"task{number}.correct"]), KINDS[int(metrics[f"task{number}.kind"])],
                           INTENTIONS[int(metrics[f"task{number}.intention"])],
                           ERROR_CLASSES[error] if error >= 0 else None, int(metrics["switches"])))
    return tasks


def summarise(dialogues: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Micro-averaged metrics over dialogues (each task, turn and call counts once; :data:`METRIC_RULES` says how,
    for their intervals), the exact repeats the loop did not run, errors by class, and task accuracy by hidden
    intention, by task kind and by the dialogue's number of switches (session accuracy too), as flat names MLflow
    groups by ``/``."""
    n = len(dialogues)
    if not n:
        return {name: 0.0 for name in METRIC_NAMES} | {"n": 0.0}
    total = lambda key: sum(d.get(key, 0.0) for d in dialogues)
    tasks = [task for d in dialogues for task in _tasks_of(d)]
    right, sessions = sum(t.correct for t in tasks), total("session_accuracy")
    summary = {
        "task_accuracy": right / len(tasks) if tasks else 0.0,
        "session_accuracy": sessions / n,
        "optimal_path_rate": total("optimal_tasks") / total("tool_tasks") if total("tool_tasks") else 1.0,
        "tool_selection_accuracy": total("selected_turns") / total("turns") if total("turns") else 0.0,
        "call_correctness": total("correctness_sum") / total("turns") if total("turns") else 0.0,
        "n": float(n), "tasks": float(len(tasks)),
        "refused_repeats": total("refused_repeats"),
    }
    errors = Counter(t.error for t in tasks if t.error)
    summary.update({f"errors/{name}": float(errors[name]) for name in ERROR_CLASSES})
    for group, key in (("intention", "intention"), ("kind", "kind"), ("switches", "switches")):
        for value, members in _grouped(tasks, key).items():
            summary[f"task_accuracy/{group}/{value}"] = sum(t.correct for t in members) / len(members)
    for switches in sorted({int(d["switches"]) for d in dialogues}):
        same = [d for d in dialogues if int(d["switches"]) == switches]
        summary[f"session_accuracy/switches/{switches}"] = sum(d["session_accuracy"] for d in same) / len(same)
    return summary


def _grouped(tasks: list[_Task], key: str) -> dict[str, list[_Task]]:
    groups: dict[str, list[_Task]] = {}
    for task in tasks:
        groups.setdefault(str(getattr(task, key)), []).append(task)
    order = {"intention": INTENTIONS, "kind": KINDS}.get(key)
    return dict(sorted(groups.items(), key=lambda item: order.index(item[0]) if order else int(item[0])))


def breakdown(dialogues: Sequence[Mapping[str, float]]) -> list[dict[str, Any]]:
    """One row per group of tasks (all; by hidden intention; by task kind; by the dialogue's number of
    switches): tasks, task accuracy, session accuracy where the group is whole dialogues, and failed tasks
    by error class."""
    tasks = [task for d in dialogues for task in _tasks_of(d)]
    rows = [_row("all", "-", tasks, [bool(d["session_accuracy"]) for d in dialogues])]
    for group in ("intention", "kind", "switches"):
        for value, members in _grouped(tasks, group).items():
            sessions = ([bool(d["session_accuracy"]) for d in dialogues if str(int(d["switches"])) == value]
                        if group == "switches" else None)
            rows.append(_row(group, value, members, sessions))
    return rows


def _row(group: str, value: str, tasks: list[_Task], sessions: list[bool] | None) -> dict[str, Any]:
    errors = Counter(t.error for t in tasks if t.error)
    row: dict[str, Any] = {"group": group, "value": value, "tasks": len(tasks),
                           "task_accuracy": round(sum(t.correct for t in tasks) / len(tasks), 3) if tasks else 0.0}
    row["session_accuracy"] = round(sum(sessions) / len(sessions), 3) if sessions else ""
    row.update({name: errors[name] for name in ERROR_CLASSES})
    return row
