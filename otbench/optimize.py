"""``python -m otbench.optimize --optimizer toolobserver``: learn tool docs, tracked in MLflow.

With no other argument: BFCL-Opaque, names_only, the embedded model, a 10-test sample, online
ToolObserver; ``--optimizer play2prompt|easytool|gepa`` runs the competing optimizers the same way,
with the same tracking and token accounting. Every iteration is logged (metrics by step, docs, trajectories,
editor exchanges) with a checkpoint, so an interrupted run continues with ``--resume RUN_ID``. The final docs are
written as an otbench docs file and as DSPy state, locally and as run artefacts.

This module is the command's face: :class:`OptimizeOptions` (the command line, or the Python API) is turned into
a run's definition and settings once, and :mod:`otbench.run.optimization` executes them; the command line only
fills the options and prints the result.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from otbench.arguments import OneLineParser, positive_int, seed
from otbench.cli import add_tracking_arguments, given_options
from otbench.core.tables import format_table, server_table
from otbench.envs.registry import (
    ENVIRONMENTS,
    EnvironmentOptions,
    add_environment_arguments,
    learning_of,
    options_from_values,
    own_defaults,
    refuse_other_environments,
    resolve,
)
from otbench.errors import ConfigError
from otbench.exits import run_main
from otbench.llm.session import LMOptions
from otbench.optimizers.registry import DEFAULT, OPTIMIZERS, spec_of
from otbench.outputs import DATABASE_URL, OUTPUT_DIRECTORY, check_outputs
from otbench.run import definition as defining
from otbench.run.definition import RunDefinition
from otbench.run.settings import (
    HOW_IT_RUNS,
    RunSettings,
    TrackingOptions,
    add_lm_arguments,
    lm_from_values,
    tracking_from_values,
)
from otbench.study.sweep import SweepOptions, SweepResult, print_sweep, sweep_optimizer

if TYPE_CHECKING:  # what runs an optimization is imported when one runs (it loads DSPy): --help answers at once
    from otbench.run.optimization import OptimizeResult

DEFAULT_LIMIT = 10


@dataclass(frozen=True)
class OptimizeOptions:
    """One optimize run: the optimizer and its knobs, the environment, the tasks; and how it is carried out."""

    optimizer: str = DEFAULT
    environment: EnvironmentOptions = field(default_factory=EnvironmentOptions)
    mode: str | None = None
    """``online`` or ``offline`` (None: as the environment learns)."""
    limit: int = DEFAULT_LIMIT
    """Optimize on a seeded sample of this many tasks."""
    seed: int = 0
    test_limit: int = DEFAULT_LIMIT
    """Offline environments: score the learned docs on a seeded sample of this many test tasks."""
    val_limit: int | None = None
    """Offline environments: choose among the starting, each iteration's and the final docs on a seeded sample of
    this many train tasks outside the ones learned on (None: keep the final docs)."""
    knobs: Any = None
    """The optimizer's knobs (its spec's knobs dataclass, with every choice the optimizer offers); None: their
    declared defaults."""
    lm: LMOptions = field(default_factory=LMOptions)
    tracking: TrackingOptions = field(default_factory=TrackingOptions)
    num_threads: int = 1
    resume: str | None = None
    """The MLflow run id of an interrupted run to continue: what defines the run comes from its checkpoint."""
    coverage_from: str | None = None
    """The MLflow run id of an optimize run with ``--coverage`` whose pass this run goes on from (the same help for
    another optimizer, not paid again); it implies the coverage knob."""
    out: Path = Path("learned_docs")
    progress: bool = True

    def definition(self) -> RunDefinition:
        """What this run computes (:mod:`otbench.run.definition`): the environment resolved, the mode as the
        environment learns unless set, the optimizer's knobs as far as they act in that mode."""
        environment = resolve(self.environment)
        if self.val_limit and learning_of(environment.env) == "online":
            raise ConfigError(f"--val-limit: {environment.env} learns docs per task (online), so no docs learned here "
                              "apply to other tasks; drop --val-limit")
        spec = spec_of(self.optimizer)
        return defining.optimization(environment, optimizer=spec, knobs=self.knobs,
                                     mode=self.mode or learning_of(environment.env), limit=self.limit, seed=self.seed,
                                     test_limit=self.test_limit, val_limit=self.val_limit, lm=self.lm,
                                     coverage_from=self.coverage_from)

    def settings(self) -> RunSettings:
        """How this run is carried out."""
        return RunSettings(lm=self.lm, tracking=self.tracking, num_threads=self.num_threads,
                           sandbox_workers=self.environment.sandbox_workers, progress=self.progress, out=self.out)


def options_from(values: Mapping[str, Any]) -> OptimizeOptions:
    """Options from their command-line names (an argparse namespace's)."""
    refuse_other_environments(values)
    refuse_other_optimizers(values)
    optimizer = str(values.get("optimizer", DEFAULT))
    if values.get("coverage_from"):  # going on from a coverage pass is taking the pass's help
        values = {**values, "coverage": True}
    return OptimizeOptions(
        optimizer=optimizer, environment=options_from_values(values), mode=values.get("mode"),
        limit=values.get("limit", DEFAULT_LIMIT), seed=values.get("seed", 0),
        test_limit=values.get("test_limit", DEFAULT_LIMIT), val_limit=values.get("val_limit"),
        knobs=spec_of(optimizer).knobs_from(values), lm=lm_from_values(values),
        tracking=tracking_from_values(values), num_threads=values.get("num_threads", 1), resume=values.get("resume"),
        coverage_from=values.get("coverage_from"), out=Path(values.get("out", "learned_docs")), progress=not values.get("quiet", False))


def run(options: OptimizeOptions) -> OptimizeResult:
    """Run (or, with ``resume``, continue) the optimize run the options define; returns its
    :class:`~otbench.run.optimization.OptimizeResult`. Bad options are refused before anything slow loads."""
    from otbench.run import optimization

    settings = options.settings()
    if not options.resume:
        return optimization.execute(options.definition(), settings)
    return optimization.resume(options.resume, settings)


def sweep(options: OptimizeOptions, sweeping: SweepOptions) -> SweepResult:
    """``--sweep N``: tune the optimizer's knobs with optuna, every trial an optimize run (:mod:`otbench.study.sweep`)."""

    if options.resume:
        raise ConfigError("--sweep and --resume do not mix: rerun the sweep with the same --storage to continue it")
    if sweeping.study_name is not None and not sweeping.study_name.strip():
        raise ConfigError("--study-name '': name the study (or drop it for one named after the run)")
    return sweep_optimizer(options.definition(), options.settings(), sweeping)


# -- the command line ----------------------------------------------------------------------------------------
def chosen_optimizer(argv: list[str] | None) -> str:
    """The optimizer a command line names (``--optimizer``), the default when it names none or an unknown one."""
    scout = argparse.ArgumentParser(add_help=False)
    scout.add_argument("--optimizer", default=DEFAULT)
    known, _ = scout.parse_known_args(argv or [])
    return known.optimizer if known.optimizer in OPTIMIZERS else DEFAULT


class _Hidden:
    """An argument group whose options are taken but not shown, and in the namespace only when given."""

    def __init__(self, group: argparse._ArgumentGroup) -> None:
        self.group = group
        self.description: str | None = None

    def add_argument(self, *flags: str, **kwargs: Any) -> None:
        self.group.add_argument(*flags, **(kwargs | {"help": argparse.SUPPRESS, "default": argparse.SUPPRESS}))


def add_optimizer_arguments(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> None:
    """The flags of the optimizer ``argv`` chooses, as its spec declares them; the other optimizers' are taken,
    hidden, so that :func:`refuse_other_optimizers` names the optimizer a flag belongs to."""
    chosen = chosen_optimizer(argv)
    taken: set[str] = set()
    OPTIMIZERS[chosen].add_arguments(parser.add_argument_group(f"{chosen} options"), taken)
    hidden = parser.add_argument_group()
    for name, spec in OPTIMIZERS.items():
        if name != chosen:
            spec.add_arguments(_Hidden(hidden), taken)  # type: ignore[arg-type]  # a group that hides


def refuse_other_optimizers(values: Mapping[str, Any]) -> None:
    """Refuse, in one line, a flag of another optimizer than ``values``' ``--optimizer`` (it would be ignored): the
    namespace of a command line parsed by :func:`build_parser` of that same command line holds another optimizer's
    flag only when it was given."""
    chosen = str(values.get("optimizer", DEFAULT))
    if chosen not in OPTIMIZERS:
        return  # refused by name
    mine = _flag_defaults(chosen)
    for name in OPTIMIZERS:
        theirs = _flag_defaults(name)
        given = sorted(dest for dest in set(theirs) - set(mine) if dest in values)
        if name != chosen and given:
            raise ConfigError(f"--{given[0].replace('_', '-')} is a flag of {name} (--optimizer {name}), not of "
                              f"{chosen}; drop it")


def _flag_defaults(optimizer: str) -> dict[str, Any]:
    """The flags an optimizer's spec declares, by destination, with their defaults."""
    scratch = argparse.ArgumentParser(add_help=False)
    OPTIMIZERS[optimizer].add_arguments(scratch.add_argument_group(), set())
    return {action.dest: action.default for action in scratch._actions}


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sweep")
    group.add_argument("--sweep", type=positive_int, default=None, metavar="N",
                       help="tune the optimizer's knobs with N optuna trials (default: no sweep)")
    group.add_argument("--token-budget", type=positive_int, default=500_000,
                       help="stop starting trials once the study has spent this many tokens (default 500000)")
    group.add_argument("--storage", type=DATABASE_URL, default=None,
                       help="optuna RDB storage URL shared by sweep workers (default: in memory)")
    group.add_argument("--study-name", default=None,
                       help="optuna study to create or join (default: named after the optimizer, setting and model)")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command's options; ``argv``: the command line, whose ``--env`` decides which environment's options are
    shown."""
    parser = OneLineParser(prog="python -m otbench.optimize", description=__doc__.splitlines()[0])
    parser.add_argument("--optimizer", default=DEFAULT, help=f"one of: {', '.join(OPTIMIZERS)} (default {DEFAULT})")
    add_environment_arguments(parser, argv=argv)
    parser.add_argument("--mode", default=None, help="learning mode: online (docs learned per task) or offline (on a train split); default: as the environment learns")
    parser.add_argument("--limit", type=positive_int, default=DEFAULT_LIMIT,
                        help=f"optimize on a seeded sample of N tasks (default {DEFAULT_LIMIT})")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the task sample (default 0)")
    parser.add_argument("--test-limit", type=positive_int, default=DEFAULT_LIMIT,
                        help=f"offline environments: score the learned docs on N test tasks (default {DEFAULT_LIMIT})")
    parser.add_argument("--val-limit", type=positive_int, default=None, metavar="N",
                        help="offline environments: score the starting, each iteration's and the final docs on N "
                             "other train tasks and keep the best (default: keep the final docs)")
    add_optimizer_arguments(parser, argv)
    parser.add_argument("--num-threads", type=positive_int, default=1,
                        help="tasks run concurrently, each on a slot of the embedded server of its own (default 1)")
    parser.add_argument("--resume", default=None, metavar="RUN_ID",
                        help="continue an interrupted run (default: start a new one)")
    parser.add_argument("--coverage-from", default=None, metavar="RUN_ID",
                        help="go on from the coverage pass of that optimize run (same environment, tasks and models; "
                             "implies --coverage): another optimizer given the same pass without paying for it again")
    parser.add_argument("--out", type=OUTPUT_DIRECTORY, default=Path("learned_docs"),
                        help="where final docs are written (default learned_docs)")
    add_sweep_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the final summary as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_lm_arguments(parser, editor=True)
    add_tracking_arguments(parser)
    return parser


RESUMED_KEEP = ("optimizer", "coverage_from", "mode", "limit", "seed", "test_limit", "val_limit", "lm", "editor_lm", "embedded_model",
                "gguf", "temperature", "no_grammar", "prefill")
"""Options that define a run, beside the environment's and the optimizer's: a resumed run keeps its own."""


def refuse_what_does_not_apply(options: OptimizeOptions, given: set[str]) -> None:
    """Refuse, on one line, an option given that this run would ignore: one that defines the run beside
    ``--resume`` (the run continues as its checkpoint defines it), or an optimizer's knob that acts only in the other
    learning mode (``--batch-size`` online)."""
    if options.resume:
        environments = {name for env in ENVIRONMENTS for name in own_defaults(env)}
        optimizers = {name for optimizer in OPTIMIZERS for name in _flag_defaults(optimizer)}
        defining = sorted(given & ({*RESUMED_KEEP, "env", "setting", "faults", "toolset"} | environments | optimizers)
                          - HOW_IT_RUNS)
        if defining:
            raise ConfigError(f"--resume {options.resume} continues the run as it was defined, so "
                              f"--{defining[0].replace('_', '-')} would be ignored: drop it (or start a new run)")
        return
    mode = options.mode or learning_of(resolve(options.environment).env)
    for flag, modes in spec_of(options.optimizer).idle_in(mode).items():
        if flag in given:
            raise ConfigError(f"--{flag.replace('_', '-')} acts only in {' and '.join(modes)} learning; this run "
                              f"learns {mode}: drop it")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    check_outputs(parser, args)
    options = options_from(vars(args))
    refuse_what_does_not_apply(options, given_options(parser, argv))
    if args.sweep:
        swept = sweep(options, SweepOptions(trials=args.sweep, token_budget=args.token_budget, storage=args.storage,
                                            study_name=args.study_name))
        if args.json:
            print(json.dumps(swept.to_dict()))
        else:
            print_sweep(swept)
        return 0
    result = run(options)
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        _print(result)
    return 0


def _print(result: OptimizeResult) -> None:
    from otbench.run.optimization import summary_rows

    print(format_table(summary_rows(result, text=True)))
    rows = [{"phase": phase, **row} for phase, row in result.tokens_by_phase.items()]
    print(format_table(rows, ["phase", "prompt_tokens", "completion_tokens", "total_tokens", "calls", "paid_calls",
                              "cached_tokens", "seconds"]))
    server = server_table(result.server)
    if server:
        print(server)
    print(f"mean editor iterations: {result.mean_editor_iterations}   seconds: {result.seconds}   "
          f"outside LLM calls: {result.share_of_time_outside_llm:.1%}   tools learned: {result.tools_learned}")
    shown = result.contamination
    print(f"doc contamination: {shown['doc_contamination']:.1%} of learned sentences, "
          f"{shown['doc_contaminated_tools']:.1%} of tools ({sum(shown['injected_by_kind'].values())} faults injected "
          "while learning)")
    if result.validation is not None:
        chosen = result.validation
        scores = ", ".join(f"{name} {value:.3f}" for name, value in chosen["metrics"].items() if name != "n")
        print(f"docs kept: {chosen['chosen']}, the best on {chosen['n']} validation tasks ({scores})")
        for label, candidate in chosen["candidates"].items():
            print(f"  {label}: " + ", ".join(f"{name} {value:.3f}" for name, value in candidate.items()))
    if result.gate:
        kept = [key for key, decision in result.gate.items() if decision["kept"] == "learned"]
        print(f"gate: {len(kept)} learned docs kept as no worse, {len(result.gate) - len(kept)} tools given their "
              "starting docs back (gate.json, and the docs file's meta, say on what evidence)")
        for key, decision in result.gate.items():
            print(f"  {key.split('::', 1)[-1]}: {decision['kept']} doc ({decision['evidence']})")
    invented = result.invented
    print(f"invented claims: {int(invented['invented_claims'])} of {invented['sentences']} learned sentences state "
          "behaviour no observed call supports (invented_claims.json quotes them)")
    print(f"final docs: {result.docs}   MLflow run: {result.run_id}")
    if result.prompts:
        first = next(iter(result.prompts.values()))
        print(f"in MLflow's prompt registry: {len(result.prompts)} toolset(s), e.g. {first}")


if __name__ == "__main__":
    run_main(main)
