"""Repairs: where a tool refused a request's call but worked on others, the editor proposes the call the request
needed, the tool and the task's metric check it, and only a confirmed correction reaches the doc, stated by code."""

from __future__ import annotations

import json

import dspy
from scripted_lm import prompt_text, scripted_lm

from otbench.envs.functions import FunctionEnvironment
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.program import ToolAgentProgram
from otbench.optimizers.repairs import CORRECTED, Contrasts, correction_sentence
from otbench.optimizers.toolobserver.knobs import IMPROVED, Improvements
from otbench.optimizers.toolobserver.teleprompter import ToolObserver


def calculate(expression: str) -> str:
    """Evaluates an expression."""
    if "sqrt" in expression or "^" in expression:
        return f"Error: unsupported form in {expression!r}"  # an error in words, not a raised one
    base, _, power = expression.partition("**")
    value = float(base) ** float(power) if power else float(eval_product(expression))
    return f"result: {value:g}"


def eval_product(expression: str) -> float:
    """The product of ``a*b`` (the only other form the tests' requests need)."""
    left, _, right = expression.partition("*")
    return float(left) * float(right or 1)


def _env() -> FunctionEnvironment:
    examples = [dspy.Example(question="What is 3 times 4?", answer="12"),
                dspy.Example(question="What is the square root of 81?", answer="9"),
                dspy.Example(question="What is 2 times 5?", answer="10")]
    return FunctionEnvironment([calculate], examples, lambda example, t: f"result: {example.answer}" in t.outputs)


def _agent(messages: list[dict[str, str]]) -> str:
    """Writes ``a*b`` for a product and ``sqrt(n)`` for a root, unless the doc shows a correction for a root."""
    text = prompt_text(messages)
    request = text.split("Request:")[-1]
    numbers = [word.strip("?") for word in request.split() if word.strip("?").isdigit()]
    if "square root" in request:
        expression = f"{numbers[0]}**0.5" if CORRECTED in text else f"sqrt({numbers[0]})"
    else:
        expression = "*".join(numbers)
    return json.dumps({"calls": [{"name": "calculate", "arguments": {"expression": expression}}]})


def _editor(proposal: str, first: str | None = None):
    """Proposes ``proposal`` (``first``, where given, until told that its answer repeats a call tried)."""
    def reply(messages: list[dict[str, str]]) -> str:
        text = prompt_text(messages)
        if "without answering it:" in text:
            told = "Your first answer was a call already tried" in text
            return json.dumps({"name": "calculate", "arguments": {"expression": first if first and not told
                                                                   else proposal}})
        return json.dumps({"description": "Evaluates an arithmetic expression.",
                           "parameters": {"expression": "the expression"}})
    return reply


REPAIRING = Improvements(**{**vars(IMPROVED), "repair_calls": True})  # opt-in: off in the improved variant for now


def _compile(proposal: str, improvements: Improvements = REPAIRING, first: str | None = None):
    env = _env()
    agent = FunctionCallingAgent()
    agent.lm = scripted_lm(_agent, phase="agent")
    editor = scripted_lm(_editor(proposal, first), phase="editor")
    observer = ToolObserver(env=env, editor_lm=editor, mode="offline", max_iterations=2, gate=False,
                            progress=False, improvements=improvements)
    program = observer.compile(ToolAgentProgram(env.toolbox(), agent), trainset=env.tasks("train"))
    return program, editor


def test_a_refused_form_gets_the_correction_the_tool_and_the_metric_confirmed():
    program, editor = _compile("81**0.5")
    doc = program.toolbox.get("tools", "calculate").description
    assert CORRECTED in doc and 'calculate(expression="sqrt(81)") was refused' in doc
    assert "calculate(expression=\"81**0.5\") answered it, returning 'result: 9'" in doc
    repairs = [request for request in editor.engine.requests if "without answering it:" in prompt_text(request)]
    assert len(repairs) == 1  # asked once: the next iteration's attempt succeeds with the correction shown
    assert '"What is 3 times 4?" -> calculate(expression="3*4") returned' in prompt_text(repairs[0])  # what answered
    metrics = [record.metrics for record in program.detailed_results.iterations]
    assert metrics[0]["calls_repaired"] == 1.0


def test_an_editor_that_copies_the_call_tried_is_told_so_once_and_asked_again():
    program, editor = _compile("81**0.5", first="sqrt(81)")
    assert "answered it, returning 'result: 9'" in program.toolbox.get("tools", "calculate").description
    asked = [prompt_text(request) for request in editor.engine.requests if "without answering it:" in prompt_text(request)]
    assert len(asked) == 2 and "Your first answer was a call already tried" in asked[1]


def test_a_proposal_the_metric_does_not_confirm_never_reaches_the_doc():
    program, editor = _compile("81*0.5")  # works, but answers 40.5
    assert CORRECTED not in program.toolbox.get("tools", "calculate").description
    asked = [request for request in editor.engine.requests if "without answering it:" in prompt_text(request)]
    assert len(asked) == 1  # the same request is not asked about again in a later iteration


def test_without_the_knob_nothing_is_asked_and_nothing_stated():
    program, editor = _compile("81**0.5", IMPROVED)
    assert CORRECTED not in program.toolbox.get("tools", "calculate").description
    assert not any("without answering it:" in prompt_text(request) for request in editor.engine.requests)


def test_a_correction_reads_as_the_request_what_was_tried_and_the_call_that_answered():
    sentence = correction_sentence("Root of 81?", 'f(x="sqrt(81)") was refused (Error: no)', 'f(x="81**0.5")', "9")
    assert sentence == ('Corrected: for "Root of 81?", f(x="sqrt(81)") was refused (Error: no); f(x="81**0.5") '
                        "answered it, returning 9.")
    worked = correction_sentence("Who lives in Porto?", 'd(t="customers") did not answer it', 'q(sql="SELECT ...")',
                                 "[Ana]")
    assert worked == ('Corrected: for "Who lives in Porto?", d(t="customers") did not answer it; q(sql="SELECT ...") '
                      "answered it, returning [Ana].")


# -- contrasts: the agent's own correction across iterations, stated with no editor call -------------------------------
def _learning_agent():
    """Writes ``sqrt(n)`` for a root the first time it is asked, ``n**0.5`` after: a request failed, then answered."""
    asked: set[str] = set()

    def reply(messages: list[dict[str, str]]) -> str:
        request = prompt_text(messages).split("Request:")[-1]
        numbers = [word.strip("?") for word in request.split() if word.strip("?").isdigit()]
        if "square root" in request:
            expression = f"{numbers[0]}**0.5" if request in asked else f"sqrt({numbers[0]})"
            asked.add(request)
        else:
            expression = "*".join(numbers)
        return json.dumps({"calls": [{"name": "calculate", "arguments": {"expression": expression}}]})
    return reply


def _contrasted(improvements: Improvements):
    env = _env()
    agent = FunctionCallingAgent()
    agent.lm = scripted_lm(_learning_agent(), phase="agent")
    editor = scripted_lm(_editor("unused"), phase="editor")
    observer = ToolObserver(env=env, editor_lm=editor, mode="offline", max_iterations=2, gate=False,
                            progress=False, improvements=improvements)
    return observer.compile(ToolAgentProgram(env.toolbox(), agent), trainset=env.tasks("train")), editor


def test_a_request_failed_then_answered_closes_the_answering_tools_doc_with_both_calls():
    program, editor = _contrasted(Improvements(**{**vars(IMPROVED), "contrast_attempts": True}))
    doc = program.toolbox.get("tools", "calculate").description
    assert ('Corrected: for "What is the square root of 81?", calculate(expression="sqrt(81)") was refused (Error: '
            "unsupported form in 'sqrt(81)'); calculate(expression=\"81**0.5\") answered it, returning 'result: 9'.") in doc
    assert not any("without answering it:" in prompt_text(request) for request in editor.engine.requests)  # no editor
    assert [record.metrics["attempts_contrasted"] for record in program.detailed_results.iterations] == [0.0, 1.0]
    unchanged, _ = _contrasted(IMPROVED)  # opt-in: off in the improved variant
    assert CORRECTED not in unchanged.toolbox.get("tools", "calculate").description


def test_contrasts_keep_what_they_saw_for_a_resumed_run():
    contrasts = Contrasts({"t1": ['f(x="a")', 'f(x="a") was refused (no)']}, ["t0"])
    assert Contrasts.from_dict(json.loads(json.dumps(contrasts.to_dict()))) == contrasts
