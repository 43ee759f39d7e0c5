"""The toolkit families: generated data, oracle, opaque errors, gold docs, per-task state, and the command line."""

import ast
import importlib
import inspect
import json
import re
import typing
from contextlib import contextmanager
from pathlib import Path

import dspy
import mlflow
import pytest
from scripted_lm import prompt_text, scripted_lm
from test_optimize_cli import any_role_reply

from otbench import compare, evaluate, optimize
from otbench.core.calls import ToolCall
from otbench.core.opaque import PRESENTATIONS
from otbench.envs.toolkits import FAMILIES, inventory, metrics
from otbench.envs.toolkits.families import load
from otbench.evals.harness import run_rollouts
from otbench.exits import run_main
from otbench.modules.agent import AgentReply
from otbench.run import evaluation, optimization

KITS = {name: load(name) for name in FAMILIES}
REAL_NAMES = {tool.__name__ for kit in KITS.values() for tool in kit.tools}
NAMED = re.compile(r"\b(" + "|".join(sorted(REAL_NAMES)) + r")\b")


def _names_in(text):
    return NAMED.findall(text)


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_is_documented_functions_typed_unless_untyped_with_enough_generated_requests(family):
    kit = KITS[family]
    module = importlib.import_module(f"otbench.envs.toolkits.{family}")
    assert 6 <= len(kit.tools) <= 10
    for tool in kit.tools:
        hints = typing.get_type_hints(tool)
        typed = set() if getattr(module, "UNTYPED", False) else set(inspect.signature(tool).parameters) | {"return"}
        assert inspect.getdoc(tool) and typed == set(hints), tool
        assert not _names_in(inspect.getdoc(tool)), f"{tool.__name__}'s docstring names a tool"
    assert len(kit.train) >= 12 and len(kit.test) >= 40
    assert all(example.answer not in ([], {}, "") for example in [*kit.train, *kit.test])  # nothing found is no answer
    assert kit.fingerprint == kit.expected_fingerprint, f"{family}: the generated data changed"
    assert load(family).fingerprint == kit.fingerprint  # generated alike every time
    used = {split: {call["name"] for example in examples for call in example.calls}
            for split, examples in (("train", kit.train), ("test", kit.test))}
    assert used["train"] == used["test"] == {tool.__name__ for tool in kit.tools}  # every tool, in both splits


@pytest.mark.parametrize("family", FAMILIES)
def test_train_and_test_differ_in_phrasing_and_values_and_no_request_names_a_tool(family):
    kit = KITS[family]
    questions = {split: [example.question for example in examples] for split, examples in (("train", kit.train),
                                                                                           ("test", kit.test))}
    assert all(len(set(texts)) == len(texts) for texts in questions.values())
    assert not set(questions["train"]) & set(questions["test"])
    gold = {split: {json.dumps(example.calls, sort_keys=True) for example in examples}
            for split, examples in (("train", kit.train), ("test", kit.test))}
    assert not gold["train"] & gold["test"]

    def skeleton(text):  # the phrasing without its values
        return re.sub(r"[-\d.]+|[A-Z]{2}-\d{3}", "#", text)

    assert not {skeleton(q) for q in questions["train"]} & {skeleton(q) for q in questions["test"]}
    assert not [q for q in [*questions["train"], *questions["test"]] if _names_in(q) or re.search(r"\w+=", q)]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("presentation", PRESENTATIONS)
def test_the_oracle_scores_one_on_both_splits_in_every_presentation(family, presentation):
    env = KITS[family].environment(presentation)
    for split in ("train", "test"):
        tasks = env.tasks(split)
        trajectories = run_rollouts(env, env.oracle_agent(tasks), env.toolbox(), tasks, num_threads=4, progress=False)
        assert env.summarise(trajectories) == {"score": 1.0, "n": float(len(tasks))}
        assert {step.call.name for t in trajectories for step in t.steps} <= set(env.functions)


BAD_VALUES = (None, "x", -1, 0, 2.5, [], {}, True, "2025-13-40", [{"a": 1}])


@pytest.mark.parametrize("family", FAMILIES)
def test_no_real_name_reaches_the_agent_in_docs_errors_or_outputs(family):
    """Every tool called with missing, unknown and ill-typed arguments: Python's errors and the tools' own name the
    tool as shown; nor do the docs of any presentation, gold included, name a real tool."""
    env = KITS[family].environment("names_params")
    texts = [json.dumps(tool.openai_schema()) for presentation in PRESENTATIONS
             for docs in (None, "gold") for tool in KITS[family].environment(presentation).toolbox(docs).toolset(family)]
    for shown in env.functions:
        parameters = list(inspect.signature(env.functions[shown]).parameters)
        trials = [{}, {"nonsense": 1}, *({name: value for name in parameters} for value in BAD_VALUES),
                  *({**{name: "KB-101" for name in parameters}, parameter: value}
                    for parameter in parameters for value in BAD_VALUES)]
        for arguments in trials:
            result = env.execute(family, ToolCall(shown, arguments))
            texts.append(result.error if not result.ok else repr(result.output))
        signature = inspect.signature(env.functions[shown]).parameters.values()
        if any(parameter.default is parameter.empty for parameter in signature):
            missing = env.execute(family, ToolCall(shown, {})).error
            assert missing.startswith(f"TypeError: {shown}() missing"), missing
    leaked = [text for text in texts if _names_in(text)]
    assert not leaked, leaked[:3]


@pytest.mark.parametrize("family", FAMILIES)
def test_gold_docs_are_the_true_docstrings_and_parameters_under_the_opaque_names(family):
    kit = KITS[family]
    env = kit.environment("names_only", seed=5)
    real = {tool.__name__: tool for tool in kit.tools}
    for tool in env.toolbox("gold").toolset(family):
        function = real[env.real_names[tool.name]]
        assert tool.name.startswith("function_") and tool.description == inspect.getdoc(function)
        assert [p.name for p in tool.parameters] == list(inspect.signature(function).parameters)
    assert all(not tool.description and tool.parameters is None for tool in env.toolbox().toolset(family))
    shown = {tool.name: tool.description for tool in kit.environment("gold", seed=5).toolbox().toolset(family)}
    assert shown == {tool.name: tool.description for tool in env.toolbox("gold").toolset(family)}


@pytest.mark.parametrize("family", ["conversions", "calendar", "records", "finance", "shapes", "counts"])
def test_a_confusable_tool_called_with_the_same_arguments_gives_another_answer(family):
    """Tools sharing parameter names answer each request differently, so the metric tells them apart."""
    kit = KITS[family]
    for example in [*kit.train, *kit.test]:
        (gold,) = example.calls
        for tool in kit.tools:
            if tool.__name__ == gold["name"] or set(inspect.signature(tool).parameters) < set(gold["arguments"]):
                continue
            try:
                output = tool(**gold["arguments"])
            except (TypeError, ValueError):
                continue
            assert not metrics.matches(example.answer, output), (example.question, tool.__name__)


def _replying(calls_of):
    """An agent replying with ``calls_of(task)`` (real names), translated to the shown names."""
    def make(env, tasks):
        by_question = {task.question: task for task in tasks}
        shown_of = {real: shown for shown, real in env.real_names.items()}

        def agent(*, question, **_):
            calls = [ToolCall(shown_of[c["name"]], c["arguments"]) for c in calls_of(by_question[question])]
            return AgentReply(raw="", calls=calls)
        return agent
    return make


def test_inventory_call_order_matters_and_the_final_state_is_scored():
    env = KITS["inventory"].environment()
    ordered = [task for task in env.tasks("test") if len(task.calls) == 2]
    assert len(ordered) >= 20
    reversed_agent = _replying(lambda task: task.calls[::-1])(env, ordered)
    trajectories = run_rollouts(env, reversed_agent, env.toolbox(), ordered, num_threads=4, progress=False)
    assert env.summarise(trajectories)["score"] == 0.0  # every two-call request fails in the wrong order
    # a request that changes the store is not answered by a read, even of the item it is about
    changing = [task for task in env.tasks("test") if task.state_changes and len(task.calls) == 1]
    reader = _replying(lambda task: [{"name": "get_item", "arguments": {"sku": task.calls[0]["arguments"]["sku"]}}])
    trajectories = run_rollouts(env, reader(env, changing), env.toolbox(), changing, progress=False)
    assert env.summarise(trajectories)["score"] == 0.0
    assert all("The store was not left as the request asked" in t.feedback for t in trajectories)


def test_inventory_state_is_per_task_and_thread_and_outside_calls_meet_a_fresh_default_store():
    env = KITS["inventory"].environment()
    tasks = env.tasks("test") * 3  # the same tasks again, on 8 threads at once: each starts from its own store
    trajectories = run_rollouts(env, env.oracle_agent(tasks), env.toolbox(), tasks, num_threads=8, progress=False)
    assert env.summarise(trajectories)["score"] == 1.0
    seller = next(shown for shown, real in env.real_names.items() if real == "sell_units")
    default_stock = inventory.Store.seeded(inventory.DEFAULT_SEED).items["KB-101"]["stock"]
    sold = [env.execute("inventory", ToolCall(seller, {"sku": "KB-101", "quantity": 1})).output for _ in range(3)]
    assert sold == [default_stock - 1] * 3
    with inventory.opened_store(7) as store:  # a store opened in one context is not seen by the other tools' callers
        inventory.restock_item("KB-101", 5)
        assert store.items["KB-101"]["stock"] == inventory.Store.seeded(7).items["KB-101"]["stock"] + 5
    assert inventory.current_store() is inventory.current_store()  # outside any: this thread's default store


def test_a_reply_that_calls_more_tools_than_needed_fails_and_feedback_never_gives_the_answer():
    kit = KITS["conversions"]
    env = kit.environment()
    tasks = env.tasks("test")[:6]
    shotgun = _replying(lambda task: [task.calls[0], {"name": "km_to_miles", "arguments": task.calls[0]["arguments"]},
                                      {"name": "miles_to_km", "arguments": task.calls[0]["arguments"]}])
    trajectories = run_rollouts(env, shotgun(env, tasks), env.toolbox(), tasks, progress=False)
    assert env.summarise(trajectories)["score"] == 0.0
    assert all(metrics.TOO_MANY in t.feedback for t in trajectories)
    for family, kit in KITS.items():
        env = kit.environment()
        first = kit.tools[0].__name__
        wrong = _replying(lambda task, first=first: [{"name": first, "arguments": {}}])
        tasks = env.tasks("train")
        for trajectory, task in zip(run_rollouts(env, wrong(env, tasks), env.toolbox(), tasks, progress=False), tasks,
                                    strict=True):
            assert str(task.answer) not in trajectory.feedback and not _names_in(trajectory.feedback), family


def test_records_orderings_are_the_documented_ones():
    from otbench.envs.toolkits import records

    rows = [{"k": "a", "v": 2}, {"k": "b", "v": 1}, {"k": "c", "v": 2}]
    assert [r["k"] for r in records.sort_records(rows, "v")] == ["b", "a", "c"]  # ties keep their order
    assert [r["k"] for r in records.top_k(rows, "v", 2)] == ["a", "c"]
    assert records.count_by(rows, "v") == {"1": 1, "2": 2}
    with pytest.raises(ValueError, match="the records' fields: k, v"):
        records.filter_equal(rows, "w", 1)


def test_finance_errors_state_the_parameter_and_its_rule_and_rates_are_fractions_but_percents_are_percents():
    from otbench.envs.toolkits import finance

    with pytest.raises(ValueError, match=r"^rate must be a number between 0 and 1, got 5$"):
        finance.simple_interest(1000, 5, 2)
    with pytest.raises(ValueError, match=r"^percent must be a number between 0 and 100, got 150$"):
        finance.tip_amount(80, 150)
    with pytest.raises(TypeError, match=r"^people must be a whole number of at least 1, got float$"):
        finance.split_bill(90, 2.5)
    with pytest.raises(TypeError, match=r"^principal must be a positive number, got str$"):
        finance.monthly_loan_payment("1000", 0.05, 2)
    with pytest.raises(ValueError, match=r"^price must be greater than unit_cost, got price 5 and unit_cost 7$"):
        finance.break_even_units(1000, 5, 7)
    assert finance.tip_amount(80, 15) == 12.0 and finance.monthly_rate(0.18) == 0.015
    assert finance.simple_interest(1000, 0.05, 2) == 100.0 and finance.compound_interest(1000, 0.05, 2, 1) == 102.5
    assert finance.monthly_loan_payment(1200, 0, 1) == 100.0  # no interest: the principal over the months
    assert finance.break_even_units(30, 0.3, 0.1) == 150  # 150.00000000000003 in floats: not one unit more
    assert finance.break_even_units(31.1, 0.3, 0.1) == 156  # 155.5 units: rounded up


# -- the command line, with scripted models -------------------------------------------------------------------
def _run(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


@pytest.mark.parametrize("family", FAMILIES)
def test_evaluate_runs_the_oracle_of_every_toolkit_at_one(family, capsys):
    code, out, err = _run(evaluate.main, ["--env", "toolkit", "--toolkit", family, "--agent", "oracle", "--json",
                                          "--quiet"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["score"] == 1.0 and result["n"] == len(KITS[family].test)


@pytest.mark.parametrize(("argv", "message"), [
    (["--toolkit", "weather"], "unknown toolkit 'weather'; choose from inventory, conversions, records, calendar, finance, shapes, counts"),
    (["--setting", "names_desc"], "unknown toolkit setting 'names_desc'; choose from names_only, names_params, gold"),
])
def test_a_bad_toolkit_option_is_one_line_and_exit_2(argv, message, capsys):
    code, _, err = _run(evaluate.main, ["--env", "toolkit", *argv, "--agent", "oracle"], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.fixture()
def recorded_prompts(monkeypatch):
    """evaluate and optimize get scripted models for every phase; returns every prompt they were sent."""
    prompts = []

    def reply(messages):
        prompts.append(prompt_text(messages))
        return any_role_reply(messages)

    @contextmanager
    def open_scripted(options, ledger, phases=("agent",)):
        yield {phase: scripted_lm(reply, ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(evaluation, "open_lms", open_scripted)
    monkeypatch.setattr(optimization, "open_lms", open_scripted)
    return prompts


def test_evaluate_with_gold_docs_shows_the_true_docstrings_under_opaque_names(recorded_prompts, capsys):
    code, out, err = _run(evaluate.main, ["--env", "toolkit", "--toolkit", "calendar", "--docs", "gold", "--limit", "3",
                                          "--json", "--quiet"], capsys)
    assert code == 0, err
    assert json.loads(out)["n"] == 3 and len(recorded_prompts) == 3
    assert "The English name of the day of the week date falls on" in recorded_prompts[0]
    assert not any(_names_in(prompt) for prompt in recorded_prompts)


def test_compare_on_a_toolkit_runs_every_row_and_no_prompt_names_a_real_tool(recorded_prompts, tmp_path, monkeypatch,
                                                                             capsys):
    monkeypatch.chdir(tmp_path)  # optimize writes learned_docs/ in the working directory
    argv = ["--env", "toolkit", "--toolkit", "inventory", "--limit", "2", "--test-limit", "2", "--probe",
            "--iterations", "1", "--p2p-samples", "1", "--gepa-budget", "2",
            "--plots", str(tmp_path), "--json", "--quiet"]
    code, out, err = _run(compare.main, argv, capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["env"] == "toolkit-inventory" and result["learning"] == "offline" and result["metrics"] == ["score"]
    assert [row["row"] for row in result["rows"]] == ["base", "gold", "+TO (paper)", "+TO", "+P2P", "+P2P (probe)",
                                                      "+ET", "+ET (probe)", "+GEPA", "+GEPA (probe)"]
    assert result["rows"][1]["docs_sem"] == pytest.approx(1.0)
    assert recorded_prompts and not [prompt for prompt in recorded_prompts if _names_in(prompt)]


def test_docs_chosen_on_a_validation_sample_are_logged_with_their_scores(recorded_prompts, tmp_path, capsys):
    argv = ["--env", "toolkit", "--toolkit", "inventory", "--limit", "2", "--val-limit", "2", "--test-limit", "2",
            "--iterations", "1", "--out", str(tmp_path), "--json", "--quiet"]
    code, out, err = _run(optimize.main, argv, capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["validation"]["n"] == 2 and result["validation"]["chosen"] in result["validation"]["candidates"]
    assert set(result["validation"]["candidates"]) <= {"start", "step 0", "final"}
    run = mlflow.get_run(result["run_id"])
    assert run.data.tags["chosen_docs"] == result["validation"]["chosen"] and "val_score" in run.data.metrics
    assert run.data.params["val_limit"] == "2" and run.data.params["method"] == "+TO --val-limit 2"
    assert len(mlflow.artifacts.load_text(f"runs:/{result['run_id']}/val_trajectories.jsonl").splitlines()) == 2


def test_a_validation_sample_is_refused_where_docs_are_learned_per_task(capsys):
    code, _, err = _run(optimize.main, ["--limit", "2", "--val-limit", "2"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--val-limit: bfcl learns docs per task" in err


# -- the documentation page ------------------------------------------------------------------------------------
DOCS = Path(__file__).resolve().parents[1] / "docs/environments/toolkits.md"


def _python_blocks():
    return [block.split("```", 1)[0] for block in DOCS.read_text().split("```python\n")[1:]]


def test_the_documentation_examples_run_as_printed(capsys):
    """The family from Python, your own functions with a state and an oracle, then ToolObserver on them (with a
    scripted model standing in for the configured LM)."""
    family, own, learning = _python_blocks()
    exec(compile(family, str(DOCS), "exec"), {"__name__": "docs"})  # noqa: S102 - the page as printed
    assert capsys.readouterr().out.splitlines() == ["10 24 60 True", "{'score': 1.0, 'n': 60.0}"]
    namespace = {"__name__": "docs"}
    exec(compile(own, str(DOCS), "exec"), namespace)  # noqa: S102
    real_names, error, oracle = capsys.readouterr().out.splitlines()
    assert set(ast.literal_eval(real_names).values()) == {"deposit", "withdraw", "balance"}
    assert re.fullmatch(r"TypeError: function_1\(\) missing \d required positional arguments?: .*", error)
    assert oracle == "{'score': 1.0, 'n': 2.0}"
    with dspy.context(lm=scripted_lm(any_role_reply)):
        exec(compile(learning, str(DOCS), "exec"), namespace)  # noqa: S102
    rows = capsys.readouterr().out.splitlines()
    assert [row.split()[0] for row in rows] == ["base", "gold", "learned"]


def test_the_readme_points_at_the_toolkits_page():
    assert "docs/environments/toolkits.md" in (DOCS.parents[2] / "README.md").read_text()
