"""``assay export RUN --format inspect``: the run as Inspect AI's ``.eval`` log, opened by
Inspect's own ``read_eval_log`` in its own venv (``bench/.venv-inspect``, made by
``bench/setup_inspect.sh``; ``.ci/run`` makes it, so under CI this never skips)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pytest

from assay import Sample, Task, TaskState, eval, generate, includes
from assay.log import read_eval_log
from assay.solver import Generate
from tests.helpers import SHIPPING, bundles_by_sample, edit_artifact, error_line, run_cli, wait_for

INSPECT_PYTHON = Path(__file__).parents[2] / "bench" / ".venv-inspect" / "bin" / "python"
EXIT_EVIDENCE = 4

READ_WITH_INSPECT = """
import json, sys
from inspect_ai.log import read_eval_log
log = read_eval_log(sys.argv[1])
header = read_eval_log(sys.argv[1], header_only=True)
print(json.dumps({
    "status": log.status,
    "task": log.eval.task,
    "model": log.eval.model,
    "header_samples": header.samples,
    "total": log.results.total_samples,
    "metrics": {
        s.name: {k: m.value for k, m in s.metrics.items()} for s in log.results.scores
    },
    "samples": sorted(
        [
            [str(s.id), s.epoch, s.input, s.target, s.output.completion,
             {k: v.value for k, v in s.scores.items()},
             s.error.message if s.error else None,
             s.metadata.get("assay_bundle_digest")]
            for s in log.samples
        ]
    ),
    "reductions": [
        [r.scorer, sorted([str(x.sample_id), x.value] for x in r.samples)]
        for r in log.reductions or []
    ],
}))
"""


async def fails_on_s2(state: TaskState, generate: Generate) -> TaskState:
    if state.sample_id == "s2":
        raise RuntimeError("no answer for s2")
    return await generate(state)


def run_with_an_error(tmp_path: Path) -> Path:
    """Three samples × two epochs on the mock model: s0 passes, s1 fails, s2 errors."""
    task = Task(
        dataset=[
            Sample(input="q 0", target="Default", id="s0"),
            Sample(input="q 1", target="elsewhere", id="s1"),
            Sample(input="q 2", target="Default", id="s2"),
        ],
        solver=[fails_on_s2, generate()],
        scorer=includes(),
        name="capitals",
        epochs=2,
    )
    (result,) = eval(task, model="mock/one", log_dir=tmp_path / "runs", fail_on_error=False)
    assert result.path is not None
    return result.path


def read_with_inspect(path: Path) -> dict[str, Any]:
    if not INSPECT_PYTHON.exists():
        pytest.skip("no bench/.venv-inspect: run bench/setup_inspect.sh")
    proc = subprocess.run(
        [str(INSPECT_PYTHON), "-c", READ_WITH_INSPECT, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


@pytest.mark.doc(
    "docs/cli.md",
    "`--format inspect` writes Inspect AI's `.eval` log (to `RUN.eval` without `-o FILE`)",
)
def test_inspect_reads_the_exported_log_with_every_sample_score_and_error(tmp_path: Path) -> None:
    run = run_with_an_error(tmp_path)
    out = tmp_path / "capitals.eval"

    proc = run_cli("export", run, "--format", "inspect", "-o", out)

    assert proc.returncode == 0, proc.stderr
    assert "exported 6 trial(s)" in proc.stderr
    seen = read_with_inspect(out)
    ours = read_eval_log(run)
    assert ours.samples is not None and ours.results is not None
    assert (seen["status"], seen["task"], seen["model"]) == ("error", "capitals", "mock/one")
    assert seen["header_samples"] is None and seen["total"] == 6
    assert seen["metrics"] == {
        s.name: {k: m.value for k, m in s.metrics.items()} for s in ours.results.scores
    }
    assert seen["metrics"]["includes"]["accuracy"] == pytest.approx(2 / 6)
    expected = sorted(
        [
            [str(s.id), s.epoch, s.input, s.target, str(s.completion or ""),
             {k: v.value for k, v in s.scores.items()}, s.error, s.bundle_digest]
            for s in ours.samples
        ]
    )  # fmt: skip
    assert seen["samples"] == expected
    by_sample = {row[0]: row for row in seen["samples"]}
    assert by_sample["s0"][5] == {"includes": 1.0}
    assert by_sample["s1"][5] == {"includes": 0.0}
    assert "no answer for s2" in by_sample["s2"][6]
    assert seen["reductions"] == [["includes", [["s0", 1.0], ["s1", 0.0]]]]


@pytest.mark.doc(
    "docs/cli.md",
    "`--format inspect` writes Inspect AI's `.eval` log (to `RUN.eval` without `-o FILE`)",
)
def test_without_output_the_log_is_written_beside_the_run(tmp_path: Path) -> None:
    run = run_with_an_error(tmp_path)
    proc = run_cli("export", run, "--format", "inspect")
    assert proc.returncode == 0, proc.stderr
    written = run.with_name(run.name + ".eval")
    assert proc.stdout == ""
    with zipfile.ZipFile(written) as archive:
        names = set(archive.namelist())
    assert {"header.json", "summaries.json", "reductions.json", "_journal/start.json"} <= names
    assert len([n for n in names if n.startswith("samples/")]) == 6


@pytest.mark.doc(
    "docs/cli.md",
    "Each bundle, output and sample is checked against its digest as `show` checks it: an "
    "edited one is exit 4 and `-o FILE` is not written.",
)
def test_an_edited_output_is_not_exported_to_inspect(tmp_path: Path) -> None:
    run = run_with_an_error(tmp_path)
    bundle = bundles_by_sample(run)["s0"]
    edit_artifact(run, bundle["observation"]["output"], lambda data: data.replace(b"D", b"E"))
    out = tmp_path / "capitals.eval"
    proc = run_cli("export", run, "--format", "inspect", "-o", out)
    assert proc.returncode == EXIT_EVIDENCE
    assert "changed" in error_line(proc)
    assert not out.exists()
    assert not list(tmp_path.glob(".capitals.eval*"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def listed(url: str) -> list[dict[str, Any]]:
    """The logs ``inspect view`` lists at *url* (none while it is not yet answering)."""
    try:
        files: list[dict[str, Any]] = get_json(url)["files"]
    except (OSError, ValueError, KeyError):
        return []
    return files


@pytest.mark.doc(
    "docs/cli.md",
    "a zip of JSON that Inspect's `read_eval_log` and `inspect view` open",
)
def test_inspect_view_lists_and_serves_the_exported_log(tmp_path: Path) -> None:
    run = run_with_an_error(tmp_path)
    logs = tmp_path / "inspect-logs"
    logs.mkdir()
    out = logs / "capitals.eval"
    assert run_cli("export", run, "--format", "inspect", "-o", out).returncode == 0
    if not INSPECT_PYTHON.exists():
        pytest.skip("no bench/.venv-inspect: run bench/setup_inspect.sh")
    port = free_port()
    view = subprocess.Popen(
        [str(INSPECT_PYTHON.with_name("inspect")), "view", "start", "--log-dir", str(logs),
         "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}/api"
        assert wait_for(lambda: bool(listed(f"{base}/log-files")), timeout=120, step=0.05)
        (entry,) = listed(f"{base}/log-files")
        assert entry["name"].endswith("/capitals.eval")
        served = get_json(f"{base}/logs/{urllib.parse.quote(entry['name'], safe=':/')}")
    finally:
        os.killpg(view.pid, signal.SIGTERM)  # the server this test started, and only it
        view.communicate(timeout=60)
    assert served["status"] == "error"
    assert served["eval"]["task"] == "capitals"
    assert len(served["samples"]) == 6
    assert served["results"]["scores"][0]["metrics"]["accuracy"]["value"] == pytest.approx(2 / 6)


EXIT_CONFIG = 2
EXIT_FAILED = 1


@pytest.mark.doc(
    "docs/cli.md",
    "An Inspect log is of one model: a run of several targets needs `--target ID` (without "
    "it, exit 2 naming them).",
)
def test_a_run_of_several_targets_is_exported_one_target_at_a_time(tmp_path: Path) -> None:
    run = tmp_path / "shipping"
    assert run_cli("run", SHIPPING / "eval.yaml", "-o", run).returncode == EXIT_FAILED
    out = tmp_path / "fixed.eval"

    refused = run_cli("export", run, "--format", "inspect", "-o", out)
    unknown = run_cli("export", run, "--format", "inspect", "-o", out, "--target", "nope")

    assert refused.returncode == EXIT_CONFIG
    assert "2 targets (buggy-release, fixed-release)" in error_line(refused)
    assert "--target" in error_line(refused)
    assert unknown.returncode == EXIT_CONFIG
    assert "no target 'nope'" in error_line(unknown)
    assert not out.exists()

    chosen = run_cli("export", run, "--format", "inspect", "-o", out, "--target", "fixed-release")

    assert chosen.returncode == 0, chosen.stderr
    seen = read_with_inspect(out)
    assert seen["model"] == "fixed-release"
    assert seen["total"] == 3
    ours = [s for s in read_eval_log(run).samples or [] if s.model == "fixed-release"]
    assert sorted(row[7] for row in seen["samples"]) == sorted(s.bundle_digest for s in ours)
    # a YAML spec declares no metrics: each scorer's pass rate is given as accuracy
    assert seen["metrics"] == {"fee-matches": {"accuracy": 1.0, "stderr": 0.0}}
