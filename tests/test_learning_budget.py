"""The shared learning budget (``--learn-tokens``) and the optimizers' limits at pool scale: rivals and scoring
offers bounded, work stopped where the tokens run out, the budget in a run's definition only when set."""

import argparse

import pytest
from recorder import Recorder
from scripted_lm import scripted_lm
from test_easytool import writer_reply
from test_gepa import truthful_reflection
from test_play2prompt import player_reply, refiner_reply
from toy_env import ToyEnvironment, docs_aware_agent_reply, truthful_editor_reply

from otbench.errors import ConfigError
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec
from otbench.optimizers.budget import TokenBudget
from otbench.optimizers.easytool import EasyTool, EasyToolWriter
from otbench.optimizers.gepa import GEPA
from otbench.optimizers.play2prompt import SCORED_TOOLS, DocRefiner, Play2Prompt, ToolPlayer, offered_beside
from otbench.optimizers.registry import spec_of
from otbench.optimizers.rivals import RIVALS_KEPT, rivals
from otbench.optimizers.toolobserver.knobs import PAPER
from otbench.optimizers.toolobserver.teleprompter import ToolObserver


def _agent(ledger):
    agent = FunctionCallingAgent()
    agent.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="agent")
    return agent


def test_the_budget_counts_every_phase_paid_and_cache_served_and_stays_spent():
    ledger = TokenLedger()
    lm = scripted_lm(lambda messages: "four words of reply", ledger=ledger, phase="editor")
    budget = TokenBudget(30, {"editor": lm, "agent": lm.for_phase("agent")}, spent_before=5)
    assert budget.spent() == 5 and not budget.exhausted()
    lm(messages=[{"role": "user", "content": "one two three"}])
    assert budget.spent() == 5 + 3 + 4
    ledger.record_cached("agent", 20)  # a reply the cache served counts what it cost when first made
    assert budget.spent() == 32 and budget.exhausted()
    assert budget.metrics() == {"budget_tokens": 30.0, "budget_spent": 32.0, "budget_exhausted": 1.0}
    assert not TokenBudget(None, {"editor": lm}).exhausted() and TokenBudget(None, {}).metrics() == {}


def test_easytool_rewrites_in_toolset_order_until_the_budget_runs_out():
    env = ToyEnvironment(3)
    ledger = TokenLedger()
    writer = EasyToolWriter()
    writer.lm = scripted_lm(writer_reply, ledger=ledger, phase="editor")
    recorder = Recorder()
    learned = EasyTool(env=env, writer=writer, tracker=recorder, progress=False, token_budget=1).compile(
        ToolAgentProgram(env.toolbox(), _agent(ledger)), trainset=env.tasks())
    assert ledger.phase("editor").calls == 2  # one tool's two calls, then the budget is spent
    metrics = recorder.records[0].metrics
    assert metrics["tools_rewritten"] == 1.0 and metrics["budget_exhausted"] == 1.0
    assert metrics["budget_tokens"] == 1.0 and metrics["budget_spent"] >= 1.0
    assert learned.toolbox.get("t0", "function_1").description and not learned.toolbox.get("t0", "function_2").description


def test_play2prompt_plays_no_further_once_the_budget_is_spent():
    env = ToyEnvironment(1)
    ledger = TokenLedger()
    player, refiner, scorer = ToolPlayer(), DocRefiner(), FunctionCallingAgent()
    player.lm = scripted_lm(player_reply, ledger=ledger, phase="exploration")
    refiner.lm = scripted_lm(refiner_reply, ledger=ledger, phase="editor")
    scorer.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="exploration")
    learned = Play2Prompt(env=env, player=player, refiner=refiner, scorer=scorer, progress=False,
                          token_budget=1).compile(ToolAgentProgram(env.toolbox(), _agent(ledger)),
                                                  trainset=env.tasks())
    assert learned.toolbox.get("t0", "function_2").description == ""  # never played: the first tool spent it
    assert ledger.phase("exploration").calls == 1  # the first tool's play stops after the call that spent it
    assert ledger.phase("editor").calls == 0  # no beam round starts on a spent budget


def test_toolobserver_starts_no_iteration_once_the_budget_is_spent_and_a_resume_counts_on():
    env = ToyEnvironment(3, shared=True)
    runs = {}
    for budget in (None, 1):
        ledger, recorder, editor = TokenLedger(), Recorder(), DocEditor()
        editor.lm = scripted_lm(truthful_editor_reply, ledger=ledger, phase="editor")
        ToolObserver(env=env, editor=editor, mode="offline", max_iterations=3, tracker=recorder, progress=False,
                     improvements=PAPER, token_budget=budget).compile(ToolAgentProgram(env.toolbox(), _agent(ledger)),
                                                  trainset=env.tasks())
        runs[budget] = recorder.records
    assert len(runs[1]) == 1 < len(runs[None])
    assert "budget_spent" in runs[1][0].checkpoint and "budget_spent" not in runs[None][0].checkpoint
    resumed = ToolObserver(env=env, mode="offline", max_iterations=3, progress=False, improvements=PAPER,
                           token_budget=1)
    ledger = TokenLedger()
    resumed.compile(ToolAgentProgram(env.toolbox(), _agent(ledger)), trainset=env.tasks(),
                    resume=runs[1][0].checkpoint)
    assert ledger.phase("agent").calls == 0  # what the first start spent is spent: nothing more is run


def test_gepa_stops_searching_once_the_budget_is_spent():
    spent = {}
    for budget in (None, 1):
        env, ledger = ToyEnvironment(2), TokenLedger()
        scorer = FunctionCallingAgent()
        scorer.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="exploration")
        reflection = scripted_lm(truthful_reflection([]), ledger=ledger, phase="editor")
        GEPA(env=env, reflection_lm=reflection, scorer=scorer, budget=8, progress=False, token_budget=budget).compile(
            ToolAgentProgram(env.toolbox(), _agent(ledger)), trainset=env.tasks())
        spent[budget] = ledger.phase("editor").calls
    assert spent[1] < spent[None]


def _parsed(*argv):
    parser = argparse.ArgumentParser(exit_on_error=False)
    taken: set[str] = set()
    group = parser.add_argument_group("optimizers")
    for name in ("toolobserver", "easytool"):
        spec_of(name).add_arguments(group, taken)
    return vars(parser.parse_args(argv))


def test_learn_tokens_is_one_shared_flag_in_the_definition_and_the_row_only_when_set():
    values = _parsed("--learn-tokens", "60k")
    assert values["learn_tokens"] == 60_000
    for name, label in (("easytool", "+ET [60k tokens]"), ("toolobserver", "+TO [60k tokens]")):
        spec = spec_of(name)
        part = spec.define(spec.knobs_from(values), "offline")
        assert part["learn_tokens"] == 60_000 and spec.row_label(part, "offline") == label
        assert spec.knobs_of(part, "offline").learn_tokens == 60_000
        assert spec.params(part, "offline", swept=False)["learn_tokens"] == 60_000
        assert "learn_tokens" not in spec.define(spec.knobs_from({}), "offline")  # earlier runs keep their keys
    with pytest.raises(argparse.ArgumentError, match="number of tokens"):
        _parsed("--learn-tokens", "lots")
    with pytest.raises(ConfigError, match="learn-tokens"):
        spec_of("gepa").knobs_from({"learn_tokens": 0})


def _alike(count):
    return [DocumentedTool(f"tool_{index:02d}", parameters=[ParameterSpec("value", "number")]) for index in range(count)]


def test_a_tool_has_at_most_a_dozen_rivals_the_nearest_in_toolset_order():
    found = rivals(_alike(40))
    assert all(len(others) == RIVALS_KEPT for others in found.values())
    assert found["tool_20"][:4] == ("tool_21", "tool_19", "tool_22", "tool_18")
    assert set(found["tool_00"]) == {f"tool_{index:02d}" for index in range(1, RIVALS_KEPT + 1)}
    assert rivals(_alike(5))["tool_02"] == ("tool_00", "tool_01", "tool_03", "tool_04")  # a few: all, in order


def test_play2prompt_offers_the_scorer_a_tool_with_its_rivals_not_a_whole_pool():
    pool = _alike(30) + [DocumentedTool("lookup", parameters=[ParameterSpec("code", "string")])]
    offered = [tool.name for tool in offered_beside(pool, "lookup")]
    assert len(offered) == SCORED_TOOLS and "lookup" in offered
    near = [tool.name for tool in offered_beside(pool, "tool_15")]
    assert len(near) == SCORED_TOOLS and {"tool_15", "tool_09", "tool_21"} <= set(near)
    small = _alike(4)
    assert offered_beside(small, "tool_01") == small


def test_a_budget_below_one_token_is_refused():
    with pytest.raises(ConfigError, match="positive number of tokens"):
        EasyTool(env=ToyEnvironment(1), token_budget=0)


def test_a_compile_counts_the_tools_whose_docs_it_changed():
    env = ToyEnvironment(3)
    ledger = TokenLedger()
    writer = EasyToolWriter()
    writer.lm = scripted_lm(writer_reply, ledger=ledger, phase="editor")
    learned = EasyTool(env=env, writer=writer, progress=False, token_budget=1).compile(
        ToolAgentProgram(env.toolbox(), _agent(ledger)), trainset=env.tasks())
    assert learned.detailed_results.tools_learned == 1


def test_toolobserver_starts_no_attempt_once_the_budget_is_spent():
    env, ledger, recorder, editor = ToyEnvironment(4, shared=True), TokenLedger(), Recorder(), DocEditor()
    editor.lm = scripted_lm(truthful_editor_reply, ledger=ledger, phase="editor")
    ToolObserver(env=env, editor=editor, mode="offline", max_iterations=3, tracker=recorder, progress=False, gate=False,
                 improvements=PAPER, token_budget=1).compile(ToolAgentProgram(env.toolbox(), _agent(ledger)), trainset=env.tasks())
    assert ledger.phase("agent").calls == 1  # the first attempt spent the budget: no other task was started
    assert recorder.records[0].metrics["n"] == 1.0
