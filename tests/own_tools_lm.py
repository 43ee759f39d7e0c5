"""One scripted LM for every role of the own-tools loop (the README's and the documentation's example):
the agent, a truthful editor (one tool per call, or a toolset's updates), GEPA's reflection and DSPy's ReAct.

Shared by the tests and by the installed-wheel smoke test (``tests/wheel_smoke.py``), which runs the
example against the installed package.
"""

import json
import re

from scripted_lm import prompt_text
from toy_env import docs_aware_agent_reply

TRUTH = {"function_1": "Adds a and b.", "function_2": "Multiplies a and b."}


def react_reply(messages):
    """Scripted ``dspy.ReAct``: call the tool whose description says it adds, then finish, then answer."""
    text = prompt_text(messages)
    if "starting with the field `[[ ## next_thought ## ]]`" in text:
        if "[[ ## observation_0 ## ]]" in text:
            return "[[ ## next_thought ## ]]\ndone\n\n[[ ## next_tool_name ## ]]\nfinish\n\n" \
                   "[[ ## next_tool_args ## ]]\n{}\n\n[[ ## completed ## ]]"
        adder = re.search(r"\((\d)\) (\w+), whose description is <desc>Adds", text)
        a, b = re.findall(r"\d+", text.split("[[ ## question ## ]]")[-1])[:2]
        return (f"[[ ## next_thought ## ]]\nadd\n\n[[ ## next_tool_name ## ]]\n{adder.group(2) if adder else 'finish'}"
                f"\n\n[[ ## next_tool_args ## ]]\n{json.dumps({'a': int(a), 'b': int(b)})}\n\n[[ ## completed ## ]]")
    observation = text.split("[[ ## observation_0 ## ]]")[-1].split("[[")[0].strip()
    return f"[[ ## reasoning ## ]]\nthe tool said so\n\n[[ ## answer ## ]]\n{observation}\n\n[[ ## completed ## ]]"


def everyone(messages):
    """One scripted LM for every role: the agent, a truthful editor (one tool per call, or a toolset's
    updates), and ReAct."""
    text = prompt_text(messages)
    if "[[ ## " in text:
        return react_reply(messages)
    if "Request:" in text and "Tools:" in text:
        return docs_aware_agent_reply(messages)
    tool = re.search(r"^Tool: (\w+)", text, re.MULTILINE)
    if tool:
        return json.dumps({"description": TRUTH[tool.group(1)]})
    reflected = re.search(r"^## Tool\n(\w+)", text, re.MULTILINE)  # GEPA's reflection on one tool
    if reflected:
        return f"```\n{TRUTH[reflected.group(1)]}\n```"
    return json.dumps({"updates": [{"name": name, "description": doc} for name, doc in TRUTH.items()]})
