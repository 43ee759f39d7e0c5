"""The student an optimizer compiles: an agent plus the toolbox whose docs it reads."""

from __future__ import annotations

from typing import Any

import dspy

from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.tool_docs import Toolbox


class ToolAgentProgram(dspy.Module):
    """An agent and the documented tools it sees; optimizers edit ``toolbox`` and nothing else.

    ``agent`` is any callable agent (the LLM agent or a reference agent); the program's DSPy
    state is the toolbox's docs, so ``save``/``load`` persist exactly what was learned.
    """

    def __init__(self, toolbox: Toolbox, agent: Any | None = None) -> None:
        super().__init__()
        self.toolbox = toolbox
        self.agent = agent if agent is not None else FunctionCallingAgent()

    def forward(self, *, question: str, toolset: str, **kwargs: Any) -> Any:
        return self.agent(question=question, tools=self.toolbox.toolset(toolset), **kwargs)
