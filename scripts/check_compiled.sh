#!/usr/bin/env bash
# The compiled build, checked (scripts/check.sh runs this last): the wheel that
# pyproject's mypyc hook makes, built from a copy of the sources (scripts/compiled.py);
# its evidence compared byte for byte with the pure build's on two workloads, then the
# suite's folders of the trial path run on it (the compiled modules are theirs).
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
site="$(python scripts/compiled.py "$build" | tail -n 1)"
python bench/same_evidence.py --base "$PWD/src" --this "$site" --samples 1200
PYTHONPATH="$site" python -m pytest -n "${ASSAY_TEST_WORKERS:-auto}" --dist loadfile \
    --basetemp "$build/pytest" tests/pipeline tests/run tests/evidence tests/model tests/score
