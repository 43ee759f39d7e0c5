from scripted_lm import scripted_lm

from otbench.llm.metering import TokenLedger


def test_tokens_are_counted_by_phase():
    ledger = TokenLedger()
    agent = scripted_lm(lambda m: "one two", ledger=ledger, phase="agent")
    editor = agent.for_phase("editor")
    agent(messages=[{"role": "user", "content": "a b c"}])
    editor(messages=[{"role": "user", "content": "a b c d"}])
    snapshot = ledger.snapshot()
    assert snapshot["agent"]["prompt_tokens"] == 3 and snapshot["agent"]["completion_tokens"] == 2
    assert snapshot["editor"]["prompt_tokens"] == 4
    assert snapshot["all"]["total_tokens"] == 11
    assert ledger.flat_metrics()["tokens_editor_total"] == 6


def test_a_cache_hit_costs_nothing_but_its_tokens_are_kept_as_cached():
    from scripted_lm import ScriptedEngine

    from otbench.llm.metering import MeteredLM

    ledger, engine = TokenLedger(), ScriptedEngine(lambda m: "one two")
    lm = MeteredLM("scripted/cached", engine=engine, cache=True, ledger=ledger, phase="agent")
    messages = [{"role": "user", "content": "a b c unique-to-this-test"}]
    lm(messages=messages)
    lm(messages=messages)
    row = ledger.snapshot()["agent"]
    assert len(engine.requests) == 1
    assert row["calls"] == 2 and row["paid_calls"] == 1
    assert row["total_tokens"] == 6 and row["cached_tokens"] == 6
    assert ledger.flat_metrics()["tokens_agent_cached"] == 6


def test_restore_replaces_the_totals():
    ledger = TokenLedger()
    scripted_lm(lambda m: "x", ledger=ledger)(messages=[{"role": "user", "content": "y"}])
    snapshot = ledger.snapshot()
    ledger.restore({})
    assert ledger.snapshot()["all"]["total_tokens"] == 0
    ledger.restore(snapshot)
    assert ledger.snapshot() == snapshot


def test_the_usage_memory_outlives_the_run_that_paid(tmp_path):
    """litellm replays a cached reply with empty usage: its cost is recalled from the memory on disk."""
    from otbench.llm.metering import UsageMemory

    key = UsageMemory.key("m", {"temperature": 0}, None, [{"role": "user", "content": "a"}], {})
    UsageMemory(tmp_path).remember(key, 42)
    assert UsageMemory(tmp_path).recall(key) == 42
    assert UsageMemory().recall(key) == 0 and UsageMemory(tmp_path).recall("other") == 0
