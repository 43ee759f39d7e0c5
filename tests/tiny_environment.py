"""A new environment, added as a user adds one: this module is its ``options`` module (what
:class:`otbench.envs.registry.OptionsModule` asks for) and builds its environment. Registered by one line in
:data:`otbench.envs.registry.ENVIRONMENTS`, it is a choice of every command.

The environment is the toy one of the optimizer tests (``function_1`` adds, ``function_2`` multiplies, both behind
opaque names) with one toolset shared by all its tasks, the true docs under ``gold`` and a reference agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from toy_env import ToyEnvironment, ToyTask

from otbench.arguments import positive_int
from otbench.core.calls import ToolCall
from otbench.errors import ConfigError
from otbench.modules.agent import AgentReply
from otbench.modules.tool_docs import Toolbox

if TYPE_CHECKING:
    from otbench.envs.registry import ArgumentGroup, EnvironmentOptions

LEARNING = "offline"
SETTINGS = ("names_params", "names_only")
DEFAULT_SETTING = SETTINGS[0]


def add_arguments(group: ArgumentGroup) -> None:
    group.add_argument("--tiny-tasks", type=positive_int, default=4, metavar="N", help="how many tasks (default 4)")


def settings() -> str:
    return f"{', '.join(SETTINGS)} (default {DEFAULT_SETTING}): whether the tools show their parameters"


def check(options: EnvironmentOptions) -> None:
    if options.setting not in SETTINGS:
        raise ConfigError(f"unknown tiny setting {options.setting!r}; choose from {', '.join(SETTINGS)}")


def build(options: EnvironmentOptions, *, workers: int = 1) -> TinyEnvironment:
    return TinyEnvironment(int(options.own["tiny_tasks"]), str(options.setting))


class TinyEnvironment(ToyEnvironment):
    name = "tiny"
    one_reply = True

    def __init__(self, n_tasks: int, setting: str) -> None:
        super().__init__(n_tasks, shared=True, hide_parameters=setting == "names_only")
        self.setting = setting

    def toolbox(self, docs: str | None = None) -> Toolbox:
        toolbox = super().toolbox(docs)
        if docs == "gold":
            toolbox.get("shared", "function_1").with_docs(description="Adds a and b.")
            toolbox.get("shared", "function_2").with_docs(description="Multiplies a and b.")
        return toolbox

    def oracle_agent(self, tasks: list[ToyTask]) -> Any:
        def answer(*, question: str, **_: Any) -> AgentReply:
            task = next(task for task in tasks if task.question == question)
            call = ToolCall("function_1", {"a": task.a, "b": task.b})
            return AgentReply(raw=f"function_1(a={task.a}, b={task.b})", calls=[call])
        return answer

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None
