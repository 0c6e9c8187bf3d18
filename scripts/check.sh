#!/usr/bin/env bash
# The one check command: lint, format, types, tests. CI runs exactly this (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
ruff check
ruff format --check
mypy
# In parallel (one worker per core; a file's tests stay on one worker, so its module
# fixtures are made once), in random order (pytest-randomly), the 15 slowest shown.
python -m pytest -n "${ASSAY_TEST_WORKERS:-auto}" --dist loadfile --durations=15 "$@"
# The compiled build (pyproject's mypyc hook): built, then its evidence and the trial
# path's tests checked on it; the whole check only (not for a few tests named).
if [ $# -eq 0 ]; then
    scripts/check_compiled.sh
fi
