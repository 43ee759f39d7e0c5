"""``python -m otbench.export``: learned docs for other agents.

``--format openai --toolset ID`` writes the ``tools`` list an OpenAI Chat Completions call takes
(``--responses``: the Responses API's shape); without ``--toolset``, a file of one toolset gives
that list too, and a file of many gives one list per toolset, limited to the toolsets the run
optimized when the file names them (a BFCL docs file holds every test's toolset, most of them
never trained). ``--format json`` writes the code-free otbench docs file that ``Toolbox.read``
loads in a downstream DSPy agent. ``gold`` exports an environment's true docs (``--env``, ``--setting``), as
``evaluate --docs gold`` uses them.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from otbench import mlflow_store
from otbench.arguments import OneLineParser
from otbench.cli import add_tracking_arguments
from otbench.envs.registry import add_environment_arguments, make_environment, options_from_values
from otbench.errors import ConfigError
from otbench.exits import run_main
from otbench.outputs import OUTPUT_FILE, check_outputs
from otbench.store import require_store

if TYPE_CHECKING:  # tool docs load DSPy: imported after the options are parsed
    from otbench.modules.tool_docs import Toolbox

FORMATS = ("openai", "json")
"""Prefixes of docs read from an MLflow store (any other value is a file, or ``gold``)."""
GOLD = "gold"
"""The environment's true docs (the environment options name which), as ``evaluate --docs gold``."""


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m otbench.export", description=__doc__.splitlines()[0])
    parser.add_argument("docs", help="a docs file, runs:/RUN_ID of an optimize run, prompts:/NAME@latest, ledger:KEY "
                                     "(an entry of the results ledger), or gold (the true docs of --env and --setting)")
    parser.add_argument("--format", default="openai", choices=FORMATS,
                        help="openai (tool schemas) or json (otbench docs) (default openai)")
    parser.add_argument("--toolset", default=None, help="only this toolset (e.g. a BFCL test id): one tools list (default every toolset)")
    parser.add_argument("--responses", action="store_true",
                        help="openai: the Responses API's tool shape instead of Chat Completions'")
    parser.add_argument("--out", type=OUTPUT_FILE, default=None, help="write here (default standard output)")
    add_tracking_arguments(parser)
    add_environment_arguments(parser, running=False, argv=sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    from otbench.modules.tool_docs import Toolbox
    from otbench.run.docs_io import STORED, load_docs

    check_outputs(parser, args, store=args.docs.startswith(STORED), cache=False)
    if args.docs.startswith(STORED):
        require_store(args.tracking_uri, args.mlruns, args.docs)
        mlflow_store.configure(args.tracking_uri, directory=args.mlruns)
    if args.docs == GOLD:
        chosen = {name: value for name, value in vars(args).items() if name != "toolset"}  # here a toolset's id
        with make_environment(options_from_values(chosen)) as env:
            toolbox = env.toolbox(GOLD)
    else:
        toolbox = load_docs(args.docs)
    if args.toolset is not None:
        if args.toolset not in toolbox.toolset_ids():
            raise ConfigError(f"no toolset {args.toolset!r} in {args.docs}")
        toolbox = Toolbox({args.toolset: toolbox.toolset(args.toolset)}, meta=toolbox.meta)
    if args.format == "openai":
        document: object = _api_tools(toolbox, responses=args.responses)
    else:
        document = toolbox.to_json()
    text = json.dumps(document, indent=2, ensure_ascii=False)
    if args.out is None:
        sys.stdout.write(text + "\n")
    else:
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text + "\n")
        except OSError as error:  # checked before, but a disk can fill (or a device refuse) meanwhile
            raise ConfigError(f"--out {args.out}: {error.strerror or error}") from None
    return 0


def _api_tools(toolbox: Toolbox, *, responses: bool) -> object:
    """One ``tools`` list, or one per toolset when there are several (only the optimized ones, when known)."""
    from otbench.modules.api_tools import chat_completions_tool, responses_tool
    from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS

    shape = responses_tool if responses else chat_completions_tool
    toolsets = toolbox.toolset_ids()
    optimized = toolbox.meta.get(OPTIMIZED_TOOLSETS)
    if len(toolsets) > 1 and isinstance(optimized, list):
        toolsets = [ts for ts in toolsets if ts in set(optimized)]
    lists = {ts: [shape(tool) for tool in toolbox.toolset(ts)] for ts in toolsets}
    return next(iter(lists.values())) if len(toolbox.toolset_ids()) == 1 else lists


if __name__ == "__main__":
    run_main(main)
