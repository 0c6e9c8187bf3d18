"""What a run does for its end while its trials wait on a model: nothing of it before
the first model call (the run's start is on the path to the first answer too)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TASK = """
import sys
from typing import Any

from assay import Sample, Task, generate, match, task
from assay.model import ChatMessage, GenerateConfig, MockAPI, modelapi

SEEN: list[bool] = []


def echo(messages: list[ChatMessage]) -> str:
    if not SEEN:
        SEEN.append("jinja2" in sys.modules)
        print(f"jinja2 imported at the first call: {SEEN[0]}", file=sys.stderr)
    return messages[-1].content


@modelapi("first-call")
def provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    return MockAPI(name, config, outputs=echo)


@task
def echoed() -> Task:
    samples = [Sample(input=f"q{i}", target=f"q{i}", id=f"s{i}") for i in range(20)]
    return Task(dataset=samples, solver=[generate()], scorer=match(), model="first-call/v1")
"""


def test_the_report_template_is_not_loaded_before_the_first_model_call(tmp_path: Path) -> None:
    """A thread loading Jinja at the start would compete with it for the GIL; the
    template is loaded once the trials are under way (and the report still written)."""
    (tmp_path / "task.py").write_text(TASK)
    code = (
        "import sys, assay\n"
        "result = assay.eval(sys.argv[1], log_dir=sys.argv[2])[0]\n"
        "assert result.status == 'success', result.error\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    argv = [sys.executable, "-c", code, f"{tmp_path / 'task.py'}@echoed", str(tmp_path / "log")]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "jinja2 imported at the first call: False" in done.stderr
    assert list((tmp_path / "log").glob("*/report.html"))
