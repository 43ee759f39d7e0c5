import json

import pytest
from recorder import Recorder
from scripted_lm import prompt_text, scripted_lm
from toy_env import ToyEnvironment, docs_aware_agent_reply

from otbench.core.parallel import MapInterrupted
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.program import ToolAgentProgram
from otbench.optimizers.play2prompt import DocRefiner, Play2Prompt, ToolPlayer

TRUTH = {"function_1": "Adds a and b.", "function_2": "Multiplies a and b."}


def player_reply(messages):
    """Propose a wrong parameter first, the right ones after seeing the error; reverse and judge honestly."""
    content = prompt_text(messages)
    if "Propose one call" in content:
        arguments = {"a": 2, "b": 5} if "unexpected keyword argument" in content else {"x": 1}
        return json.dumps({"arguments": arguments})
    if "Write the request" in content:
        verb = "add" if "function_1(" in content.split("Call:")[1] else "multiply"
        return json.dumps({"query": f"{verb} 2 and 5"})
    return json.dumps({"score": 8})


def refiner_reply(messages):
    content = prompt_text(messages)
    name = "function_1" if '"name": "function_1"' in content.split("Examples of calls")[0] else "function_2"
    return json.dumps({"description": TRUTH[name]})


def _setup(env):
    ledger = TokenLedger()
    agent, player, refiner = FunctionCallingAgent(), ToolPlayer(), DocRefiner()
    agent.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="agent")
    player.lm = scripted_lm(player_reply, ledger=ledger, phase="exploration")
    refiner.lm = scripted_lm(refiner_reply, ledger=ledger, phase="editor")
    scorer = FunctionCallingAgent()
    scorer.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="exploration")
    return ToolAgentProgram(env.toolbox(), agent), player, refiner, scorer, ledger


def _optimizer(env, player, refiner, scorer, **knobs):
    return Play2Prompt(env=env, player=player, refiner=refiner, scorer=scorer, progress=False, **knobs)


def test_play_retries_after_a_tool_error_and_keeps_only_working_examples():
    env = ToyEnvironment(1)
    program, player, refiner, scorer, _ = _setup(env)
    recorder = Recorder()
    program = _optimizer(env, player, refiner, scorer, initial_samples=1, retries=1, tracker=recorder).compile(
        program, trainset=env.tasks())
    play = [e for e in recorder.records[0].exchanges if e.job == "propose"]
    assert len(play) == 2 * 2  # per tool: a failing call, then a retry that sees its error
    assert "unexpected keyword argument 'x'" in play[1].prompt
    states = {s["tool"]: s for s in recorder.records[0].checkpoint["states"]}
    assert states["function_1"]["examples"] == [
        {"query": "add 2 and 5", "arguments": {"a": 2, "b": 5}, "output": "7", "score": None}]


def test_the_judge_is_asked_only_when_examples_must_be_dropped_and_the_best_rated_are_kept():
    env = ToyEnvironment(1)
    program, player, refiner, scorer, _ = _setup(env)
    ratings = iter([3, 9, 6] * 2)  # per tool, in the order the three examples were found

    def rating_player(messages):
        if "Rate this example" in prompt_text(messages):
            return json.dumps({"score": next(ratings)})
        return player_reply(messages)

    player.lm = scripted_lm(rating_player)
    recorder = Recorder()
    program = _optimizer(env, player, refiner, scorer, initial_samples=3, top_k=2, tracker=recorder).compile(
        program, trainset=env.tasks())
    jobs = [e.job for e in recorder.records[0].exchanges]
    assert jobs.count("judge") == 2 * 3 and jobs.count("reverse") == 2 * 3
    for state in recorder.records[0].checkpoint["states"]:
        assert [e["score"] for e in state["examples"]] == [9.0, 6.0]

    unjudged, player2, refiner2, scorer2, _ = _setup(env)
    recorder2 = Recorder()
    unjudged = _optimizer(env, player2, refiner2, scorer2, initial_samples=3, top_k=3, tracker=recorder2).compile(
        unjudged, trainset=env.tasks())
    assert "judge" not in [e.job for e in recorder2.records[0].exchanges]


def test_without_retries_a_failed_call_yields_no_example_and_no_rewrite():
    env = ToyEnvironment(1)
    program, player, refiner, scorer, ledger = _setup(env)
    recorder = Recorder()
    program = _optimizer(env, player, refiner, scorer, initial_samples=1, retries=0, tracker=recorder).compile(
        program, trainset=env.tasks())
    assert recorder.records[0].metrics["tools_with_examples"] == 0.0
    assert ledger.phase("editor").calls == 0
    assert program.toolbox.get("t0", "function_1").description == ""


def test_the_beam_keeps_the_doc_the_agent_succeeds_with():
    env = ToyEnvironment(1)
    program, player, refiner, scorer, ledger = _setup(env)
    recorder = Recorder()
    program = _optimizer(env, player, refiner, scorer, initial_samples=1, expansions=1, beam_width=1,
               tracker=recorder).compile(program, trainset=env.tasks())
    # function_1: blank doc -> the agent calls the other (blank) tool and fails; "Adds a and b." wins.
    assert program.toolbox.get("t0", "function_1").description == "Adds a and b."
    beams = {s["tool"]: s["beam"] for s in recorder.records[1].checkpoint["states"]}
    assert beams["function_1"] == [["Adds a and b.", 1.0]]
    # function_2: the blank doc already scores 1.0 (the agent falls back to it); a rewrite must beat it.
    assert beams["function_2"] == [["", 1.0]]
    assert [r.step for r in recorder.records] == [0, 1, 2]
    assert recorder.records[-1].metrics["E"] == 1.0
    assert ledger.phase("agent").calls == 1  # only the final scoring of the task is agent work
    assert ledger.phase("exploration").calls > 0 and ledger.phase("editor").calls == 2


def _resumed(env, checkpoint, **knobs):
    """A fresh program and optimizer resuming ``checkpoint`` as the optimize command does (its docs first)."""
    fresh, player, refiner, scorer, _ledger = _setup(env)
    fresh.toolbox.adopt_docs(type(fresh.toolbox).from_json(checkpoint["docs"]))
    resumed = Recorder()
    fresh = _optimizer(env, player, refiner, scorer, tracker=resumed, **knobs).compile(
        fresh, trainset=env.tasks(), resume=checkpoint)
    return fresh, player, resumed


def _proposed_for(player):
    """The prompts in which the player was asked to propose a call."""
    return [prompt_text(r["messages"]) for r in player.lm.history if "Propose one call" in prompt_text(r["messages"])]


def _rewrites(recorder):
    """The refiner's exchanges the steps logged."""
    return [e for record in recorder.records for e in record.exchanges if e.job == "refine"]


def test_an_interrupted_run_resumes_after_play_without_playing_again():
    env = ToyEnvironment(1)
    program, player, refiner, scorer, _ = _setup(env)
    interrupted = Recorder(stop_after=0)
    with pytest.raises(MapInterrupted):  # the stop lands while play's map is running
        _optimizer(env, player, refiner, scorer, initial_samples=1, tracker=interrupted).compile(
            program, trainset=env.tasks())
    fresh, player2, resumed = _resumed(env, interrupted.records[-1].checkpoint, initial_samples=1)
    assert not _proposed_for(player2)
    assert [r.step for r in resumed.records] == [1, 2]
    assert fresh.toolbox.get("t0", "function_1").description == "Adds a and b."


def test_play_logs_each_toolset_and_a_resume_plays_only_the_toolsets_not_finished():
    env = ToyEnvironment(3)  # online: a toolset per task
    program, player, refiner, scorer, _ = _setup(env)
    interrupted = Recorder(stop_after=1)
    with pytest.raises(MapInterrupted):
        _optimizer(env, player, refiner, scorer, initial_samples=1, tracker=interrupted).compile(
            program, trainset=env.tasks())
    checkpoint = interrupted.records[-1].checkpoint
    assert checkpoint["toolsets_done"] == ["t0", "t1"] and checkpoint["next_stage"] == 0
    assert [bool(s["examples"]) for s in checkpoint["states"]] == [True] * 4 + [False] * 2  # t2's as before play
    assert interrupted.records[-1].metrics["toolsets_done"] == 2.0
    fresh, player2, resumed = _resumed(env, checkpoint, initial_samples=1)
    assert len(_proposed_for(player2)) == 2 * 2  # t2's two tools: a failing call and its retry each
    assert [r.step for r in resumed.records] == [2, 3, 4, 5, 6]  # t2's play, the beam round's 3 toolsets, scoring
    assert resumed.records[-1].metrics["E"] == 1.0
    assert all(fresh.toolbox.get(t, "function_1").description == "Adds a and b." for t in ("t0", "t1", "t2"))


def test_a_beam_round_logs_each_toolset_and_a_resume_refines_only_the_toolsets_not_finished():
    env = ToyEnvironment(3)
    program, player, refiner, scorer, _ = _setup(env)
    interrupted = Recorder(stop_after=4)  # play's 3 steps, then t0 and t1 through the beam round
    with pytest.raises(MapInterrupted):
        _optimizer(env, player, refiner, scorer, initial_samples=1, tracker=interrupted).compile(
            program, trainset=env.tasks())
    checkpoint = interrupted.records[-1].checkpoint
    assert checkpoint["next_stage"] == 1 and len(checkpoint["toolsets_done"]) == 2
    fresh, player2, resumed = _resumed(env, checkpoint, initial_samples=1)
    assert not _proposed_for(player2)
    assert len(_rewrites(resumed)) == 2 * 2  # the third toolset's two tools, two rewrites each
    assert [r.step for r in resumed.records] == [5, 6]
    assert all(fresh.toolbox.get(t, "function_1").description == "Adds a and b." for t in ("t0", "t1", "t2"))


def test_a_checkpoint_written_when_each_stage_was_one_step_resumes_at_its_stage():
    env = ToyEnvironment(2)
    program, player, refiner, scorer, _ = _setup(env)
    done = Recorder()
    _optimizer(env, player, refiner, scorer, initial_samples=1, tracker=done).compile(program, trainset=env.tasks())
    played = done.records[1].checkpoint  # after both toolsets' play
    earlier = {"next_step": 1, "docs": played["docs"], "states": played["states"]}
    _, player2, resumed = _resumed(env, earlier, initial_samples=1)
    assert not _proposed_for(player2)
    assert [r.step for r in resumed.records] == [2, 3, 4]


def test_knobs_are_checked():
    env = ToyEnvironment(1)
    _, player, refiner, scorer, _ = _setup(env)
    with pytest.raises(ValueError, match="beam_width"):
        _optimizer(env, player, refiner, scorer, beam_width=0)


HOSTILE_PROPOSALS = [  # raw reply text, as a model could write it (escapes and all)
    '{"arguments":{"a":2,"\\ud800":1}}',               # a key that is a lone surrogate
    '{"arguments":[2,5]}',                              # arguments that are not an object
    '{"arguments":{"a":' + "[" * 40 + "1" + "]" * 40 + '}}',  # nesting deeper than calls may go
    '{"arguments":{"a":NaN,"b":Infinity}}',             # numbers JSON's parser accepts and no tool should get
    '{"arguments":{"a":"\\udc00","b":1}}',              # a value that is not valid Unicode
]
HOSTILE_TEXTS = ['{"query":["add", 2, 5]}', '{"query":"add 2 and 5 \\ud800"}']
HOSTILE_SCORES = ['{"score":NaN}', '{"score":1e999}', '{"score":true}', '{"score":-3}']
HOSTILE_DESCRIPTIONS = ['{"description":{"text":"Adds."}}', '{"description":"Adds a \\udc00 and b."}']


def test_hostile_replies_of_the_player_and_the_refiner_are_read_at_the_boundary():
    """Calls that do not fit are failed attempts with their reason and never reach a tool; requests, ratings and
    descriptions are clean or nothing; everything logged encodes as UTF-8."""
    env = ToyEnvironment(1)
    executed = []
    real_execute = env.execute

    def execute(toolset, call):
        executed.append(call)
        return real_execute(toolset, call)

    env.execute = execute
    program, player, refiner, scorer, _ = _setup(env)
    proposals, texts, scores = iter(HOSTILE_PROPOSALS * 2), iter(HOSTILE_TEXTS * 6), iter(HOSTILE_SCORES * 6)
    descriptions = iter(HOSTILE_DESCRIPTIONS * 4)

    def hostile_player(messages):
        content = prompt_text(messages)
        if "Propose one call" in content:
            return next(proposals, json.dumps({"arguments": {"a": 2, "b": 5}}))
        if "Write the request" in content:
            return next(texts)
        return next(scores)

    player.lm = scripted_lm(hostile_player)
    refiner.lm = scripted_lm(lambda messages: next(descriptions))
    recorder = Recorder()
    program = _optimizer(env, player, refiner, scorer, initial_samples=3, retries=5, top_k=1, expansions=2,
                         tracker=recorder).compile(program, trainset=env.tasks())

    assert executed and all(call.problem is None for call in executed)
    proposes = [e for record in recorder.records for e in record.exchanges if e.job == "propose"]
    assert any("arguments must be an object of named arguments, not a list" in e.prompt for e in proposes)
    assert any("not valid Unicode" in e.prompt for e in proposes)
    assert any("nested more than 32 levels" in e.prompt for e in proposes)
    assert any("is not a finite number" in e.prompt for e in proposes)
    states = recorder.records[-1].checkpoint["states"]
    examples = [example for state in states for example in state["examples"]]
    assert examples and all(example["query"] == "add 2 and 5 \ufffd" for example in examples)
    assert all(example["score"] is None or 1 <= example["score"] <= 10 for example in examples)
    for record in recorder.records:  # what the tracker writes to MLflow
        json.dumps([record.checkpoint, [e.to_dict() for e in record.exchanges], record.toolbox.to_json()],
                   ensure_ascii=False).encode("utf-8")
    tried = [text for state in states for text in state["tried"]]
    assert "Adds a \ufffd and b." in tried and not any("{" in text for text in tried)
