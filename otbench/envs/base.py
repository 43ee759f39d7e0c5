"""The one small interface through which optimizers and the evaluation harness see environments.

Every environment follows the same contract, so the commands (evaluate, optimize, compare) and
the optimizers never import an environment's own modules:

- ``learning`` says how docs are learned. ``"online"``: each task has its own toolset and docs are
  learned at test time, per task (BFCL). ``"offline"``: one toolset is shared by all tasks;
  docs are learned on the ``train`` split and scored on the ``test`` split (Chess, BrowseComp).
- ``toolbox(docs)`` builds fresh docs: the setting's own, or with ``"gold"`` the true docs.
- ``rollout`` runs an agent on one task (one turn or many: the environment drives the loop)
  and returns a scored :class:`~otbench.core.trajectory.Trajectory`.
- ``agent_instructions`` is the system prompt of the LLM agent in this environment.
- ``one_reply`` says whether an attempt is one agent reply whose calls run in order (BFCL, your own
  functions) rather than a dialogue of turns (Chess, BrowseComp): then another reply to the same task
  can be scored by rolling it out with an agent that gives that reply, which optimizers use to judge
  what a different call would have done.

These members are optional (read with ``getattr``; an environment without them behaves as noted):

- ``tie_break_metric``: a finer metric of ``summarise`` that tells docs apart where the primary one ties, as it
  does when a small agent answers almost nothing whatever its docs (BrowseComp: the share of the pages needed that
  its searches found); choosing docs on a validation sample reads it second (none: the primary metric alone);
- ``breakdown(trajectories)``: tables of the environment's own (name -> rows) that commands log and print
  beside the metrics (none);
- ``docs_from(learned)``: docs learned in another environment, as docs of this one's tools (Wild takes a
  BFCL run's docs function by function); None when they are this environment's own (they apply as they are);
- ``replayable_calls``: True where a call gives the same result whenever it is run (BFCL's functions), so an agent
  that runs its calls itself (an agent framework's, :mod:`otbench.modules.agents_sdk`) is scored by running them
  again (none: False, and such an agent is refused);
- ``answers(task, output, within=0.0)``: whether one call's ``output`` is the answer a train ``task`` asks for, read
  against the task's own answer with no agent run (``within``: the relative distance still counted, for a number
  predicted rather than returned); the pool's tools are found by a search before they are called, so a call can be
  judged on a request only so (none: where ``one_reply``, a call is judged by playing it as the reply; elsewhere it
  is not judged);
- ``memory()`` and ``restore_memory(memory)``: what the environment learned beside the docs while an optimizer
  ran (the pool's usage index: the train requests each tool answered), a JSON object saved in the docs file, so
  that docs evaluated or exported later find tools as they did when learned (none: the docs are all it learns).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Self

from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory

if TYPE_CHECKING:  # only named in signatures: the commands import this module without loading DSPy
    from otbench.modules.tool_docs import Toolbox

LEARNING_MODES = ("online", "offline")


class Agent(Protocol):
    """Anything an environment can run on a task (the LLM agent or a reference agent)."""

    def __call__(self, **kwargs: Any) -> Any: ...


class Environment(Protocol):
    """An environment: tasks, their initial and gold docs, and a way to run an agent on a task.

    ``setting`` names what the agent is given to work with, and runs are grouped by it in MLflow and
    in tables: BFCL's documentation setting (how much of the true docs the agent sees), Chess's and
    BrowseComp's choice of tools (BrowseComp adds its retrieval options when they differ from the
    defaults). A *toolset* is something else: the tools one task is played with, by id (every BFCL
    test has its own; Chess and BrowseComp share one among all tasks).
    ``metric_names`` lists the metrics ``summarise`` reports, the primary one first; it is also
    the column order of every table. An environment whose metrics are not plain means of the
    same-named per-task scores also says how each is made from them (``metric_rules``,
    :mod:`otbench.evals.outcomes`: Chess's % optimal is a ratio of per-game move counts), so intervals and
    paired tests are computed on the right units. Environments are context managers: leaving the ``with``
    block stops whatever they started (sandboxes, engines).
    """

    name: str
    setting: str
    primary_metric: str
    metric_names: tuple[str, ...]
    learning: str
    agent_instructions: str
    one_reply: bool

    def tasks(self, split: str = "test") -> list[Any]:
        """Tasks of a split: ``test`` always; ``train`` too when ``learning`` is offline."""

    def toolbox(self, docs: str | None = None) -> Toolbox:
        """Fresh docs for every toolset: the setting's own (``docs`` None) or the true ones (``"gold"``)."""

    def toolset_of(self, task: Any) -> str:
        """The id of the toolset ``task`` is played with (its own online, the shared one offline)."""

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        """Run one call of a tool of ``toolset`` under its shown name, outside any task.

        Optimizers that explore tools one by one before any task (Play2Prompt) need this.
        """

    def rollout(self, agent: Agent, toolbox: Toolbox, task: Any) -> Trajectory:
        """Run ``agent`` on ``task`` with ``toolbox``'s current docs, execute its calls, score it."""

    def summarise(self, trajectories: list[Trajectory]) -> dict[str, float]:
        """Aggregate metrics (means) over trajectories, with ``n``."""

    def oracle_agent(self, tasks: list[Any]) -> Agent:
        """An agent that acts optimally on ``tasks`` (it must score perfectly: a check of the metrics)."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc_info: object) -> None: ...


class Closing:
    """An environment as a context manager: leaving the block closes it. Those that hold a process (a sandbox, an
    engine pool, a server) release it in :meth:`close`; the others have nothing to release."""

    def close(self) -> None:
        """Release what the environment holds (nothing, unless it says otherwise)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def task_key(task: Any) -> str:
    """A task's id: its ``id`` (attribute or field) when it has one, else a digest of its fields, so equal
    tasks are the same task (a user's ``dspy.Example`` needs no id)."""
    import hashlib
    import json

    known = getattr(task, "id", None)
    if known is not None:
        return str(known)
    fields = task.toDict() if hasattr(task, "toDict") else vars(task) if hasattr(task, "__dict__") else repr(task)
    text = json.dumps(fields, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def sample_tasks(tasks: list[Any], limit: int | None, seed: int) -> list[Any]:
    """A seeded subset of ``limit`` tasks in their original order (all of them without a limit).

    A seeded sample instead of the first N keeps small runs representative (BFCL's file order
    puts every simple test before every multiple-function test); every command uses this
    function, so runs with equal ``--limit`` and ``--seed`` compare on the same tasks.
    """
    import random

    if limit is None or limit >= len(tasks):
        return list(tasks)
    chosen = set(random.Random(seed).sample(range(len(tasks)), limit))
    return [task for index, task in enumerate(tasks) if index in chosen]
