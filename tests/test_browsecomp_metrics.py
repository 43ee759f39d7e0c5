from otbench.envs.browsecomp.metrics import (
    evidence_recall,
    exact_match,
    normalise_answer,
    score_attempt,
    sequence_match,
    summarise,
    token_f1,
)


def test_answers_match_ignoring_case_accents_punctuation_and_articles():
    assert normalise_answer("  The Bogotá, D.C.! ") == "bogota d c"
    assert exact_match("bogota", "Bogotá") == 1.0
    assert exact_match("THE", "THE") == 1.0  # an airport code that is an article stays an answer
    assert exact_match(None, "Kabul") == 0.0
    assert exact_match("Kandahar", "Kabul") == 0.0


def test_token_f1_gives_partial_credit():
    assert token_f1("Kabul", "Kabul") == 1.0
    assert token_f1("Kabul city", "Kabul") == 2 / 3
    assert token_f1("", "Kabul") == token_f1(None, "Kabul") == 0.0


def test_evidence_recall_and_sequence_match():
    assert evidence_recall(["d1", "d7", "d1"], ["d1", "d2"]) == 0.5
    assert sequence_match(["news", "wikipedia"], ["news", "wikipedia"]) == 1.0
    assert sequence_match(["all", "news", "other", "wikipedia"], ["news", "wikipedia"]) == 2 * 2 / 6
    assert sequence_match([], ["news"]) == 0.0


def test_score_and_summary():
    perfect = score_attempt(answer="1987", gold="1987", seen=["a", "b"], evidence=["a", "b"],
                            called_domains=["business", "sports"], optimal_domains=["business", "sports"])
    assert perfect.as_dict() == {"accuracy": 1.0, "f1": 1.0, "calls": 2.0, "evidence_recall": 1.0,
                                 "sequence_match": 1.0}
    none = score_attempt(answer=None, gold="1987", seen=[], evidence=["a"], called_domains=[],
                         optimal_domains=["business"])
    summary = summarise([perfect.as_dict(), none.as_dict()])
    assert summary == {"accuracy": 0.5, "f1": 0.5, "calls": 1.0, "evidence_recall": 0.5, "sequence_match": 0.5,
                       "n": 2.0}
