#!/usr/bin/env bash
# Make bench/.venv-inspect (a venv of its own) and install Inspect AI into it.
# The package under test never depends on Inspect; only the bench compares with it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
if [ ! -x "$here/.venv-inspect/bin/python" ]; then
    "$python" -m venv "$here/.venv-inspect"
fi
"$here/.venv-inspect/bin/python" -m pip install --quiet --upgrade pip
"$here/.venv-inspect/bin/python" -m pip install --quiet -r "$here/requirements-inspect.txt"
"$here/.venv-inspect/bin/python" -c "import inspect_ai; print('inspect-ai', inspect_ai.__version__)"
