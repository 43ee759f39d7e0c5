"""Documentation fidelity (Table 6) on pairs whose answer is known."""

import pytest

from otbench.errors import DataError
from otbench.evals.fidelity import doc_text, fidelity, lexical_similarities, semantic_similarities
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox

GOLD = "Calculates the probability of k successes in n independent trials with success probability p."


def test_identical_text_scores_one_and_unrelated_text_scores_low():
    unrelated = "Books a table at a restaurant for a given date and party size."
    assert semantic_similarities([GOLD], [GOLD]) == [pytest.approx(1.0)]
    assert lexical_similarities([GOLD], [GOLD]) == [pytest.approx(1.0)]
    semantic, = semantic_similarities([unrelated], [GOLD])
    lexical, = lexical_similarities([unrelated], [GOLD])
    assert semantic < 0.3 and lexical < 0.2


def test_a_paraphrase_scores_between_unrelated_and_identical():
    paraphrase = "Returns the binomial probability of getting k successes out of n trials."
    semantic, = semantic_similarities([paraphrase], [GOLD])
    assert 0.5 < semantic < 1.0


def test_a_blank_doc_scores_zero():
    assert semantic_similarities([""], [GOLD]) == [0.0] and lexical_similarities([""], [GOLD]) == [0.0]


def test_tools_pair_by_position_and_their_scores_average():
    gold = Toolbox({"t": [DocumentedTool("binomial", description=GOLD), DocumentedTool("area", description="Area of a circle.")]})
    learned = Toolbox({"t": [DocumentedTool("function_1", description=GOLD), DocumentedTool("function_2")]})
    score = fidelity(learned, gold, ["t"])
    assert score.tools == 2 and score.semantic == pytest.approx(0.5) and score.lexical == pytest.approx(0.5)
    with pytest.raises(DataError, match="2 gold tools"):
        fidelity(Toolbox({"t": [DocumentedTool("function_1")]}), gold, ["t"])


def test_doc_text_holds_description_parameters_and_returns_but_not_the_name():
    tool = DocumentedTool("secret_name", description="Adds.", parameters=[ParameterSpec("a", "integer")],
                          parameter_descriptions={"a": "first addend"}, returns="the sum")
    assert doc_text(tool) == "Adds.\na: first addend\nReturns: the sum"


def test_a_text_is_embedded_once_however_many_rows_compare_it(monkeypatch):
    """The gold docs meet every row's docs, and a comparison run again meets the same texts: each is encoded once."""
    from otbench.evals import fidelity as module

    encoded: list[str] = []
    model = module._sentence_model()
    real = model.encode

    def counting(texts, **kwargs):
        encoded.extend(texts)
        return real(texts, **kwargs)

    monkeypatch.setattr(model, "encode", counting)
    monkeypatch.setattr(module, "_EMBEDDINGS", {})
    first = semantic_similarities(["Adds two numbers.", "Returns a list."], [GOLD, GOLD])
    assert sorted(encoded) == sorted(["Adds two numbers.", "Returns a list.", GOLD])
    assert semantic_similarities(["Returns a list.", "Adds two numbers."], [GOLD, GOLD]) == first[::-1]
    assert len(encoded) == 3
