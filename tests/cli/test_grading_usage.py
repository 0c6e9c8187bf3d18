"""The CLI's usage line shows grading beside the target's usage, for ``assay run`` and
again, recomputed from the evidence alone, for ``assay score``: real subprocesses, the
real openai SDK, a server on 127.0.0.1 answering both the model and its grader."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers import graded_reply, graded_task_file, run_cli, run_dirs
from tests.servers.openai_compat import OpenAICompatServer

USAGE = re.compile(
    r"usage: (\d+) calls \((\d+) cached\), (\d+) input \+ (\d+) output tokens, cost (\S+); "
    r"grading: (\d+) calls \((\d+) cached\), (\d+) input \+ (\d+) output tokens, cost (\S+)"
)


def test_run_and_score_print_grading_usage_beside_the_targets(tmp_path: Path) -> None:
    task_file = graded_task_file(tmp_path)
    with OpenAICompatServer(reply=graded_reply) as server:
        env = {"OPENAI_BASE_URL": server.url}
        ran = run_cli("run", f"{task_file}@capitals", "--log-dir", tmp_path / "runs", env=env)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        asked = len(server.requests)
        (run,) = run_dirs(tmp_path / "runs")
        scored = run_cli("score", run, env=env)
        assert scored.returncode == 0, scored.stdout + scored.stderr
        assert len(server.requests) == asked == 6  # score asked no model
    found = USAGE.search(ran.stdout)
    assert found is not None, ran.stdout
    report = json.loads((run / "report.json").read_text())
    target, grading = report["usage_total"], report["grading_usage_total"]
    assert found.groups()[:4] == tuple(
        str(target[k]) for k in ("calls", "cached_calls", "input_tokens", "output_tokens")
    )
    assert found.groups()[5:9] == tuple(
        str(grading[k]) for k in ("calls", "cached_calls", "input_tokens", "output_tokens")
    )
    assert grading["input_tokens"] > target["input_tokens"]  # a grader reads the whole prompt
    rescored = USAGE.search(scored.stdout)
    assert rescored is not None and rescored.group(0) == found.group(0), scored.stdout
