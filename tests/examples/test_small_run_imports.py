"""A small run pays for nothing heavy it does not use (issue 13: statistics cost seconds).

The shipping example (6 trials, two targets, pass/fail scores) gates, compares its two
targets and writes every report without importing scipy or numpy: their import alone cost
this run 1.5-6 s. The run happens in-process (``assay.cli.main``) inside a fresh
interpreter, so ``sys.modules`` shows exactly what the run itself imported; the time it
takes is a figure in bench/startup.py, not an assertion here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import SHIPPING

_RUN_IN_PROCESS = """
import json, sys
from assay.cli import main
try:
    main(["run", sys.argv[1], "--output", sys.argv[2]])
except SystemExit as stop:
    code = stop.code
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("scipy", "numpy"))
print(json.dumps({"exit": code, "heavy": heavy}))
"""


def _run_shipping(output: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", _RUN_IN_PROCESS, str(SHIPPING / "eval.yaml"), str(output)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


def test_the_shipping_example_imports_neither_scipy_nor_numpy(tmp_path: Path) -> None:
    found = _run_shipping(tmp_path / "run")
    assert found["exit"] == 1  # the buggy release fails its minimum: the whole pipeline ran
    assert (tmp_path / "run" / "report.html").is_file()
    assert json.loads((tmp_path / "run" / "report.json").read_bytes())["comparisons"]
    assert found["heavy"] == []
