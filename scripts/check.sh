#!/usr/bin/env bash
# The one check command: lint, format, types, tests. CI runs exactly this (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
ruff check
ruff format --check
mypy
python -m pytest "$@"
