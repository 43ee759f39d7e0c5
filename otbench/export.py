"""``python -m otbench.export``: learned docs for other agents.

``--format openai`` writes OpenAI ``tools`` schemas (one list per toolset); ``--format json``
writes the code-free otbench docs file that ``Toolbox.read`` loads in a downstream DSPy agent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from modules.tool_docs import Toolbox
from otbench import tracking
from otbench.cli import OneLineParser, add_tracking_arguments, run_main
from otbench.docs_io import load_docs
from otbench.errors import UserError

FORMATS = ("openai", "json")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m otbench.export", description=__doc__.splitlines()[0])
    parser.add_argument("docs", help="a docs file or runs:/RUN_ID of an optimize run")
    parser.add_argument("--format", default="openai", help="openai (tool schemas) or json (otbench docs)")
    parser.add_argument("--toolset", default=None, help="only this toolset (e.g. a BFCL test id)")
    parser.add_argument("--out", type=Path, default=None, help="write here instead of standard output")
    add_tracking_arguments(parser)
    args = parser.parse_args(argv)
    if args.format not in FORMATS:
        raise UserError(f"unknown format {args.format!r}; choose from {', '.join(FORMATS)}")
    if args.docs.startswith("runs:/"):
        tracking.configure(args.tracking_uri, directory=args.mlruns)
    toolbox = load_docs(args.docs)
    if args.toolset is not None:
        if args.toolset not in toolbox.toolset_ids():
            raise UserError(f"no toolset {args.toolset!r} in {args.docs}")
        toolbox = Toolbox({args.toolset: toolbox.toolset(args.toolset)}, meta=toolbox.meta)
    if args.format == "openai":
        document: object = {ts: [tool.openai_schema() for tool in toolbox.toolset(ts)] for ts in toolbox.toolset_ids()}
    else:
        document = toolbox.to_json()
    text = json.dumps(document, indent=2, ensure_ascii=False)
    if args.out is None:
        sys.stdout.write(text + "\n")
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    run_main(main)
