from otbench.llm.metering import TokenLedger
from scripted_lm import scripted_lm


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
