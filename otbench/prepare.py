"""``python -m otbench.prepare``: fetch or build what runs need offline, once (BFCL data, model file,
BrowseComp corpus and search indexes, the shipped MCP servers' virtual environments)."""

from __future__ import annotations

import argparse

from otbench.arguments import OneLineParser
from otbench.exits import run_main
from otbench.llm.weights import EMBEDDED_MODELS, ensure_gguf
from otbench.outputs import check_outputs


def main(argv: list[str] | None = None) -> int:
    parser: argparse.ArgumentParser = OneLineParser(prog="python -m otbench.prepare", description=__doc__)
    parser.add_argument("--embedded-model", default="qwen-1.5b", choices=sorted(EMBEDDED_MODELS),
                        help="the embedded model to assemble and verify (default qwen-1.5b)")
    parser.add_argument("--browsecomp-dense", action="store_true",
                        help="also build BrowseComp's dense index (about 17 CPU-minutes; else built on first use)")
    args = parser.parse_args(argv)
    check_outputs(parser, args)
    from otbench.envs.bfcl.data import wheel_path
    from otbench.envs.browsecomp.dataset import load_dataset  # loads DSPy: after the options are parsed
    from otbench.envs.browsecomp.retrieval import open_retriever

    print(f"BFCL data: {wheel_path()}")
    print(f"embedded model: {ensure_gguf(EMBEDDED_MODELS[args.embedded_model])} (sha256 verified)")
    browsecomp = load_dataset()  # generated on first use, checked against its reference fingerprint
    indexes = ["bm25", "dense"] if args.browsecomp_dense else ["bm25"]
    for kind in indexes:
        open_retriever(kind, browsecomp.documents, browsecomp.directory / "index", browsecomp.fingerprint)
    print(f"BrowseComp corpus and {' + '.join(indexes)} index: {browsecomp.directory}")
    from otbench.envs.mcp.servers import SERVERS, install

    for server in SERVERS.values():  # each in a virtual environment of its own: they pin other mcp SDKs than ours
        print(f"MCP server {server.name}: {install(server)} in {server.environment}")
    return 0


if __name__ == "__main__":
    run_main(main)
