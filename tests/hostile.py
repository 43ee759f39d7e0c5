"""Hostile model replies for all three environments: Hypothesis strategies, the committed corpus,
one replay path (the real agent on a scripted LM, the environment's rollout, its summary, the
logging and editor renderings) and the checks every reply must pass.

A check returns what went wrong instead of asserting, so the fuzz tests and the measurement script
(``benchmarks/hostile_replies.py``) judge replies the same way.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from scripted_lm import scripted_lm

from otbench.core.calls import ToolCall
from otbench.core.trajectory import Trajectory
from otbench.envs.bfcl.metrics import parameter_accuracy
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.call_parsing import parse_reply
from otbench.modules.editor import render_attempt
from otbench.modules.lm_output import first_text

CORPUS = Path(__file__).parent / "data" / "hostile_replies.jsonl"
PLACEHOLDERS = ("<TOOL>", "<HIDDEN>", "<ARG>", "<VALUE>")


@dataclass(frozen=True)
class Target:
    """What hostile replies aim at in one environment: a task, its right tool and argument, and a
    tool name the agent was not shown (BFCL's hidden real name, or a plausible real name)."""

    env_name: str
    env: Any
    task: Any
    tool: str
    parameter: str
    value: Any
    hidden: str


@dataclass
class Outcome:
    """One reply replayed: the trajectory, or the exception that escaped, and what the checks found."""

    reply: str
    trajectory: Trajectory | None
    problems: list[str]


# --- The committed corpus ---------------------------------------------------------------------


def corpus() -> list[dict[str, str]]:
    """The corpus records: ``{"class": ..., "reply": ...}`` with placeholders for each environment."""
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def instantiate(reply: str, target: Target) -> str:
    """A corpus reply aimed at ``target``: placeholders become its tool, hidden name, parameter and value."""
    values = {"<TOOL>": target.tool, "<HIDDEN>": target.hidden, "<ARG>": target.parameter,
              "<VALUE>": json.dumps(target.value)}
    for placeholder in PLACEHOLDERS:
        reply = reply.replace(placeholder, values[placeholder])
    return reply


# --- Strategies -------------------------------------------------------------------------------

_SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d"])
hostile_text = st.text(st.one_of(st.characters(), _SURROGATES), max_size=12)
_huge_ints = st.integers(4_250, 4_400).map(lambda digits: 10**digits - 1)
_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), hostile_text)
json_values = st.recursive(
    _json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=8)
_python_scalars = st.one_of(_json_scalars, st.binary(max_size=4), _huge_ints, st.complex_numbers(allow_nan=False))
python_values = st.recursive(
    _python_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
        st.frozensets(st.integers() | st.text(max_size=3), min_size=1, max_size=3).map(set),
        st.dictionaries(st.one_of(hostile_text, st.integers(), st.binary(max_size=3),
                                  st.tuples(st.integers(), st.integers())), inner, max_size=3)),
    max_leaves=8)


def python_literal(value: Any) -> str:
    """``value`` written as a Python literal; huge integers in hex (``repr`` refuses them)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return hex(value) if abs(value) > 10**4000 else repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(python_literal, value)) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(python_literal(item) + ", " for item in value) + ")"
    if isinstance(value, set):
        return "{" + ", ".join(map(python_literal, value)) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)  # str (surrogates come out escaped, and read back as surrogates), bytes, float, complex


def replies(target: Target) -> st.SearchStrategy[str]:
    """Hostile replies aimed at ``target``: every class of reply that once crashed, hung or was misscored."""
    names = st.one_of(st.just(target.tool), st.just(target.hidden), hostile_text, st.integers(), st.none(),
                      st.just(target.tool + "\udc00"), st.just("f" * 200))
    identifiers = st.sampled_from([target.tool, target.hidden, "f", "function_9", "final_answer"])
    keys = st.one_of(st.just(target.parameter), hostile_text)
    objects = st.dictionaries(keys, json_values, max_size=3)
    call = st.fixed_dictionaries({"name": names, "arguments": st.one_of(objects, json_values)})
    openai = st.builds(lambda name, arguments: {"type": "function", "function": {
        "name": name, "arguments": json.dumps(arguments)}}, names, st.one_of(objects, json_values))
    json_reply = st.builds(
        lambda calls, ascii_only, wrapped: json.dumps({"calls": calls} if wrapped else calls, ensure_ascii=ascii_only),
        st.lists(call | openai, min_size=1, max_size=3), st.booleans(), st.booleans())
    python_call = st.builds(
        lambda name, arguments: f"{name}(" + ", ".join(f"{k}={python_literal(v)}" for k, v in arguments.items()) + ")",
        identifiers, st.dictionaries(st.sampled_from([target.parameter, "x", "query", "fen", "n"]), python_values,
                                     max_size=3))
    python_reply = st.lists(python_call, min_size=1, max_size=3).map(
        lambda calls: calls[0] if len(calls) == 1 else "[" + ", ".join(calls) + "]")
    right = json.dumps({"calls": [{"name": target.tool, "arguments": {target.parameter: target.value}}]})
    nested = st.builds(
        lambda depth, as_python: (f"{target.tool}({target.parameter}=" + "[" * depth + "]" * depth + ")" if as_python
                                  else right.replace(json.dumps(target.value), "[" * depth + "]" * depth)),
        st.integers(1, 3_000), st.booleans())
    many = st.integers(2, 400).map(lambda count: json.dumps({"calls": [
        {"name": target.tool, "arguments": {target.parameter: target.value}}] * count}))
    mutated = st.builds(lambda cut, noise: right[:cut] + noise + right[cut:], st.integers(0, len(right)), hostile_text)
    return st.one_of(json_reply, python_reply, nested, many, mutated, hostile_text)


# --- Replay and checks ------------------------------------------------------------------------


def replay(target: Target, reply: str) -> Outcome:
    """Feed ``reply`` (at every turn) to the real agent on a scripted LM, roll the environment out,
    summarise, render for the editor and log; every way that fails is a problem of the outcome."""
    lm = scripted_lm(lambda _messages: reply)
    agent = FunctionCallingAgent(instructions=target.env.agent_instructions)
    agent.lm = lm
    try:
        trajectory = target.env.rollout(agent, target.env.toolbox(), target.task)
        problems = check(target, reply, trajectory, lm.engine.requests)
    except Exception as exc:  # noqa: BLE001 - an escaping exception is what the replay counts
        return Outcome(reply, None, [f"crash: {type(exc).__name__}: {str(exc)[:200]}"])
    return Outcome(reply, trajectory, problems)


def check(target: Target, reply: str, trajectory: Trajectory, requests: list[list[dict[str, str]]]) -> list[str]:
    """Crashes in summarising, logging or prompting, and wrong scores, found in one replayed reply."""
    problems: list[str] = []
    for messages in requests:
        for message in messages:
            message["content"].encode("utf-8")  # what the HTTP client does with a prompt
    json.dumps(trajectory.to_dict(), default=str, ensure_ascii=False).encode("utf-8")  # the MLflow artefact
    render_attempt(trajectory, show_outcome=True).encode("utf-8")  # the editor's prompt
    summary = target.env.summarise([trajectory])
    values = {**trajectory.metrics, **summary}
    problems += [f"metric {name} is {value!r}" for name, value in values.items()
                 if not (isinstance(value, float) and math.isfinite(value))]
    parsed = parse_reply(first_text([reply]))
    problems += _wrong_scores(target, trajectory, parsed.calls or [])
    sandbox = getattr(target.env, "sandbox", None)
    if sandbox is not None and sandbox.in_use:
        problems.append("hang: a sandbox worker was not returned to its pool")
    return problems


def _wrong_scores(target: Target, trajectory: Trajectory, calls: list[ToolCall]) -> list[str]:
    """Scores that credit a call that could not be made: such calls must count as failures."""
    metrics = trajectory.metrics
    if target.env_name == "bfcl":
        env = target.env
        shown = {tool.name for tool in env.toolbox().toolset(target.task.id)}
        usable = [call for call in calls[:env.max_calls_per_reply] if call.problem is None and call.name in shown]
        expected_p = parameter_accuracy(usable, env.oracle_calls(target.task))
        wrong = []
        if not math.isclose(metrics["P"], expected_p):
            wrong.append(f"wrong score: P {metrics['P']} where the usable calls earn {expected_p}")
        if metrics["E"] == 1.0 and (len(usable) != len(calls) or not all(step.ok for step in trajectory.steps)):
            wrong.append("wrong score: E 1.0 with a failed call")
        return wrong
    first = calls[0] if calls and calls[0].problem is None else None  # only the first call of a reply runs
    if target.env_name == "chess":
        usable = first is not None and first.name in {tool.name for tool in target.env.toolbox().toolset("chess")}
        if not usable and (metrics["optimal_calls"] != 0 or metrics["failed_moves"] != metrics["decisions"]):
            return [f"wrong score: a reply without a usable call scored {metrics}"]
        return []
    answered = first is not None and first.name == "final_answer"
    if not answered and (metrics["accuracy"] != 0 or metrics["f1"] != 0):
        return [f"wrong score: a reply without a usable answer scored {metrics}"]
    query = first.arguments.get("query") if first is not None else None
    searched = first is not None and first.name in target.env.domain_of_tool and isinstance(query, str) and query.strip()
    if not searched and metrics["calls"] != 0:
        return [f"wrong score: a reply without a usable search counted {metrics['calls']} searches"]
    return []
