"""Tamper tests: change one byte of each kind of evidence file and watch it be caught.

Invariant 5: changing any evidence makes ``verify`` name what changed, and ``score`` /
``gate`` refuse to judge it (exit 4, one line on stderr, no traceback).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from assay.errors import EvidenceError
from assay.evidence import verify_run
from assay.evidence._log import events_in
from tests.helpers import edit_artifact, read_jsonl, run_spec_at, unique_callable_spec

EXIT_EVIDENCE = 4

# --------------------------------------------------------------------------- helpers


def replace_once(path: Path, old: bytes, new: bytes, *, line: int | None = None) -> None:
    """Replace the first *old* in *path* (or in its 0-based *line*) with *new*."""
    data = path.read_bytes()
    if line is None:
        assert old in data, (path.name, old)
        path.write_bytes(data.replace(old, new, 1))
        return
    lines = data.split(b"\n")
    assert old in lines[line], (path.name, line, old)
    lines[line] = lines[line].replace(old, new, 1)
    path.write_bytes(b"\n".join(lines))


def flip_byte(path: Path, offset: int = 0) -> None:
    """Change the byte at *offset* of *path* to another printable byte."""
    data = bytearray(path.read_bytes())
    data[offset] = ord("x") if data[offset] != ord("x") else ord("y")
    path.write_bytes(bytes(data))


def edit_lines(path: Path, edit: Callable[[list[bytes]], list[bytes]]) -> None:
    """Rewrite the lines of a JSONL file (each keeps its newline)."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(edit(lines)))


def output_artifact(run: Path) -> str:
    """The digest of buggy-release's output on order-100 (the wrong answer)."""
    for bundle in read_jsonl(run / "bundles.jsonl"):
        trial = bundle["trial"]
        if trial["sample_id"] == "order-100" and trial["target_id"] == "buggy-release":
            return str(bundle["observation"]["output"])
    raise AssertionError("no bundle for buggy-release/order-100")


def sample_artifact(run: Path) -> str:
    """The digest of the artifact holding the first bundle's sample (input, expected)."""
    return str(read_jsonl(run / "bundles.jsonl")[0]["artifacts"]["sample"])


def manifest_field(run: Path, key: str) -> str:
    return str(json.loads((run / "manifest.json").read_text())[key])


def flip_hex(run: Path, value: str) -> None:
    """Change the last hex digit of *value* inside manifest.json."""
    last = value[-1]
    changed = value[:-1] + ("0" if last != "0" else "1")
    replace_once(run / "manifest.json", value.encode(), changed.encode())


def run_cli_parallel(*commands: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
    """Run several ``assay`` commands at once (they only read the run) and wait for all."""
    env = {**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "assay", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for command in commands
    ]
    results = []
    for command, proc in zip(commands, procs, strict=True):
        out, err = proc.communicate(timeout=60)
        results.append(subprocess.CompletedProcess(list(command), proc.returncode, out, err))
    return results


def assert_refused(proc: subprocess.CompletedProcess[str]) -> None:
    """Exit 4, exactly one ``assay:`` line on stderr, no traceback."""
    assert proc.returncode == EXIT_EVIDENCE, (proc.args, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("assay: "), proc.stderr


def assert_caught(run: Path, name: str, *, first: bool = True) -> None:
    """verify_run and the CLI both name *name*; score and gate refuse the run."""
    result = verify_run(run)
    assert not result.ok, f"{name}: the change was not detected"
    if first:
        assert name in result.problems[0], result.problems
    else:
        assert any(name in problem for problem in result.problems), result.problems
    verify, score, gate = run_cli_parallel(
        ("verify", str(run)), ("score", str(run)), ("gate", str(run))
    )
    assert verify.returncode == EXIT_EVIDENCE, verify.stdout + verify.stderr
    assert name in verify.stdout, verify.stdout
    assert "Traceback" not in verify.stderr
    assert_refused(score)
    assert_refused(gate)


# --------------------------------------------------------------------------- fixtures


ABORTING = """
class Abort(BaseException):
    \"\"\"Stands for Ctrl-C or a crash: not an error of the target, it stops the run.\"\"\"


async def answer(text):
    if text == "boom":
        raise Abort("stop the run")
    return text
"""


@pytest.fixture(scope="module")
def aborted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run that stopped after two of its three trials: its manifest is not ``complete``."""
    folder = tmp_path_factory.mktemp("aborted")
    samples = [
        {"id": "s0", "input": "q0", "expected": "q0"},
        {"id": "s1", "input": "q1", "expected": "q1"},
        {"id": "s2", "input": "boom", "expected": "boom"},
    ]
    spec = unique_callable_spec(folder / "spec", ABORTING, samples=samples)
    out = folder / "run"
    try:
        run_spec_at(spec, out, max_concurrency=1)
    except BaseException as exc:  # the target's own class: it cannot be named here
        stopped = exc
    else:
        pytest.fail("the run went on past the target's Abort")
    # the target's Abort itself, not wrapped in a group nor turned into another error
    assert (type(stopped).__name__, stopped.args) == ("Abort", ("stop the run",)), stopped
    assert manifest_field(out, "status") != "complete"  # aborted, interrupted, ...
    assert len(read_jsonl(out / "bundles.jsonl")) == 2
    return out


@pytest.fixture
def aborted(aborted_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "aborted"
    shutil.copytree(aborted_run, copy)
    return copy


# --------------------------------------------------------------------------- untouched


def test_untouched_run_verifies_and_rescores(run: Path) -> None:
    result = verify_run(run)
    assert result.ok, result.problems
    assert (result.trials, result.bundles, result.scores) == (6, 6, 6)
    verify, score, gate = run_cli_parallel(
        ("verify", str(run)), ("score", str(run)), ("gate", str(run))
    )
    assert verify.returncode == 0, verify.stdout
    assert score.returncode == 0, score.stdout + score.stderr
    assert gate.returncode == 1, gate.stdout + gate.stderr  # buggy-release fails the gate


def test_untouched_aborted_run_verifies(aborted: Path) -> None:
    result = verify_run(aborted)
    assert result.ok, result.problems
    assert result.bundles == 2


# --------------------------------------------------------------------------- one byte each


@dataclass(frozen=True)
class Case:
    """One tampering: what it does to a run, and the name the findings must carry."""

    tamper: Callable[[Path], str]
    first: bool = True


def _spec(run: Path) -> str:
    replace_once(run / "spec.json", b'"shipping-fee"', b'"shipping-fex"')
    return "spec.json"


def _plan(run: Path) -> str:
    replace_once(run / "plan.jsonl", b'"sample_index":0', b'"sample_index":1', line=1)
    return "plan.jsonl"


def _event_value(run: Path) -> str:
    replace_once(run / "events.jsonl", b'"attempts":1', b'"attempts":2')
    return "events.jsonl"


def _event_deleted(run: Path) -> str:
    edit_lines(run / "events.jsonl", lambda lines: lines[:5] + lines[6:])
    return "events.jsonl"


def _event_inserted(run: Path) -> str:
    edit_lines(run / "events.jsonl", lambda lines: [*lines[:4], lines[2], *lines[4:]])
    return "events.jsonl"


def _events_swapped(run: Path) -> str:
    edit_lines(run / "events.jsonl", lambda lines: [*lines[:2], lines[3], lines[2], *lines[4:]])
    return "events.jsonl"


def _last_event_torn(run: Path) -> str:
    def tear(lines: list[bytes]) -> list[bytes]:
        last = lines[-1]
        return [*lines[:-1], last[: len(last) // 2]]

    edit_lines(run / "events.jsonl", tear)
    return "events.jsonl"


def _last_event_edited(run: Path) -> str:
    lines = (run / "events.jsonl").read_bytes().split(b"\n")
    replace_once(run / "events.jsonl", b'"at":1', b'"at":2', line=len(lines) - 2)
    return "events.jsonl"


def _events_truncated(run: Path) -> str:
    edit_lines(run / "events.jsonl", lambda lines: lines[:-2])  # whole lines, cut cleanly
    return "events.jsonl"


def _event_appended(run: Path) -> str:
    edit_lines(run / "events.jsonl", lambda lines: [*lines, lines[-1]])
    return "events.jsonl"


def _trailing_newline_dropped(run: Path) -> str:
    path = run / "events.jsonl"
    data = path.read_bytes()
    assert data.endswith(b"\n")
    path.write_bytes(data[:-1])
    return "events.jsonl"


def _output_artifact(run: Path) -> str:
    sha = output_artifact(run)
    edit_artifact(run, sha, lambda data: data.replace(b"10", b"00", 1))
    return sha


def _sample_artifact(run: Path) -> str:
    sha = sample_artifact(run)

    def flip(data: bytes) -> bytes:
        middle = len(data) // 2
        return (
            data[:middle]
            + (b"x" if data[middle : middle + 1] != b"x" else b"y")
            + data[middle + 1 :]
        )

    edit_artifact(run, sha, flip)
    return sha


def _artifact_removed(run: Path) -> str:
    """Every artifact gone (packs hold many): the bundles name what is missing."""
    sha = output_artifact(run)
    shutil.rmtree(run / "artifacts")
    return sha


def _bundles(run: Path) -> str:
    replace_once(run / "bundles.jsonl", b'"state":"completed"', b'"state":"completeD"', line=2)
    return "bundles.jsonl"


def _scores(run: Path) -> str:
    replace_once(run / "scores.jsonl", b'"value":1.0', b'"value":0.0')
    return "scores.jsonl"


def _manifest_events_head(run: Path) -> str:
    flip_hex(run, manifest_field(run, "events_head"))
    return "manifest"


def _manifest_spec_digest(run: Path) -> str:
    flip_hex(run, manifest_field(run, "spec_digest"))
    return "manifest"


def _manifest_file_digest(run: Path) -> str:
    files = json.loads((run / "manifest.json").read_text())["files"]
    flip_hex(run, files["scores.jsonl"])
    return "manifest"


def _manifest_event_count(run: Path) -> str:
    count = int(manifest_field(run, "events"))
    replace_once(run / "manifest.json", f'"events":{count}'.encode(), b'"events":%d' % (count - 1))
    return "manifest"


def _manifest_planned(run: Path) -> str:
    replace_once(run / "manifest.json", b'"planned":6', b'"planned":7')
    return "manifest"


def _manifest_status(run: Path) -> str:
    replace_once(run / "manifest.json", b'"status":"complete"', b'"status":"Complete"')
    return "manifest"


def _manifest_evaluation(run: Path) -> str:
    replace_once(
        run / "manifest.json", b'"evaluation":"shipping-fee"', b'"evaluation":"shipping-fex"'
    )
    return "manifest"


def _manifest_finished_at(run: Path) -> str:
    stamp = manifest_field(run, "finished_at")
    changed = stamp[:-1] + ("1" if stamp[-1] != "1" else "2")
    replace_once(run / "manifest.json", stamp.encode(), changed.encode())
    return "manifest"


def _report(name: str) -> Callable[[Path], str]:
    def tamper(run: Path) -> str:
        path = run / name
        flip_byte(path, len(path.read_bytes()) // 2)
        return name

    tamper.__name__ = f"_report_{name}"
    return tamper


CASES = [
    pytest.param(Case(_spec), id="spec.json"),
    pytest.param(Case(_plan), id="plan.jsonl"),
    pytest.param(Case(_event_value), id="events.jsonl-data-value"),
    pytest.param(Case(_event_deleted), id="events.jsonl-line-deleted"),
    pytest.param(Case(_event_inserted), id="events.jsonl-line-inserted"),
    pytest.param(Case(_events_swapped), id="events.jsonl-lines-swapped"),
    pytest.param(Case(_last_event_torn), id="events.jsonl-last-line-torn"),
    pytest.param(Case(_last_event_edited), id="events.jsonl-last-line-edited"),
    pytest.param(Case(_event_appended), id="events.jsonl-line-appended"),
    pytest.param(Case(_events_truncated, first=False), id="events.jsonl-last-lines-cut"),
    pytest.param(Case(_trailing_newline_dropped), id="events.jsonl-trailing-newline-dropped"),
    pytest.param(Case(_output_artifact), id="artifact-output"),
    pytest.param(Case(_sample_artifact), id="artifact-sample"),
    pytest.param(Case(_artifact_removed, first=False), id="artifact-removed"),
    pytest.param(Case(_bundles), id="bundles.jsonl"),
    pytest.param(Case(_scores), id="scores.jsonl"),
    pytest.param(Case(_manifest_events_head, first=False), id="manifest-events_head"),
    pytest.param(Case(_manifest_spec_digest, first=False), id="manifest-spec_digest"),
    pytest.param(Case(_manifest_file_digest, first=False), id="manifest-file-digest"),
    pytest.param(Case(_manifest_event_count, first=False), id="manifest-events"),
    pytest.param(Case(_manifest_planned, first=False), id="manifest-planned"),
    pytest.param(Case(_manifest_status, first=False), id="manifest-status"),
    pytest.param(Case(_manifest_evaluation, first=False), id="manifest-evaluation"),
    pytest.param(Case(_manifest_finished_at, first=False), id="manifest-finished_at"),
    pytest.param(Case(_report("report.json")), id="report.json"),
    pytest.param(Case(_report("report.md")), id="report.md"),
    pytest.param(Case(_report("report.html")), id="report.html"),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.doc(
    "docs/evidence.md",
    "`prev` chains each record to the bytes of the one before (64 zeros for the first);",
    "The spec against the manifest; each plan line's trial id against the spec; the event chain",
)
def test_one_changed_byte_is_named_and_refused(run: Path, case: Case) -> None:
    name = case.tamper(run)
    assert_caught(run, name, first=case.first)


def test_unreadable_manifest_is_refused_not_crashed(run: Path) -> None:
    replace_once(run / "manifest.json", b"{", b"[")
    with pytest.raises(EvidenceError) as info:
        verify_run(run)
    assert "manifest.json" in str(info.value)
    for proc in run_cli_parallel(("verify", str(run)), ("score", str(run)), ("gate", str(run))):
        assert_refused(proc)
        assert "manifest.json" in proc.stderr


# --------------------------------------------------------------------------- aborted runs


def _aborted_bundle(run: Path) -> str:
    replace_once(run / "bundles.jsonl", b'"state":"completed"', b'"state":"completeD"')
    return "bundles.jsonl"


def _aborted_event(run: Path) -> str:
    replace_once(run / "events.jsonl", b'"attempts":1', b'"attempts":2')
    return "events.jsonl"


def _aborted_score_value(run: Path) -> str:
    replace_once(run / "scores.jsonl", b'"value":1.0', b'"value":0.0')
    return "scores.jsonl"


def _aborted_plan_index(run: Path) -> str:
    replace_once(run / "plan.jsonl", b'"sample_index":1', b'"sample_index":2')
    return "plan.jsonl"


ABORTED_CASES = [
    pytest.param(_aborted_bundle, id="bundles.jsonl"),
    pytest.param(_aborted_event, id="events.jsonl"),
    pytest.param(_aborted_score_value, id="scores.jsonl-value"),
    pytest.param(_aborted_plan_index, id="plan.jsonl-sample_index"),
]


@pytest.mark.parametrize("tamper", ABORTED_CASES)
def test_one_changed_byte_in_an_aborted_run_is_named(
    aborted: Path, tamper: Callable[[Path], str]
) -> None:
    name = tamper(aborted)
    result = verify_run(aborted)
    assert not result.ok, f"{name}: the change was not detected"
    assert any(name in problem for problem in result.problems), result.problems
    (verify,) = run_cli_parallel(("verify", str(aborted)))
    assert verify.returncode == EXIT_EVIDENCE
    assert name in verify.stdout


# --------------------------------------------------------------- grading usage figures


@pytest.mark.doc(
    "docs/evidence.md",
    "A grader's calls are not in it: they are `score_sampling` events, logged after the bundle "
    "is sealed,",
)
def test_an_edited_grading_usage_figure_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grader's usage lives on its score line, which the line's ``match`` event binds:
    an edited token count or cost is named by verify, and score / gate refuse the run."""
    from assay import eval as run_eval
    from tests.helpers import graded_reply, graded_task_file
    from tests.servers.openai_compat import OpenAICompatServer

    with OpenAICompatServer(reply=graded_reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        task_file = graded_task_file(tmp_path)
        (result,) = run_eval(f"{task_file}@capitals", log_dir=tmp_path / "runs")
    assert result.status == "success", result.error
    run = result.path
    assert run is not None and verify_run(run).ok
    line = read_jsonl(run / "scores.jsonl")[0]
    tokens = line["usage"]["output_tokens"]
    replace_once(
        run / "scores.jsonl",
        f'"output_tokens":{tokens},'.encode(),
        f'"output_tokens":{tokens - 1},'.encode(),
        line=0,
    )
    assert_caught(run, "scores.jsonl")


# ------------------------------------------------- artifacts only an event points at

BIG_PROMPT_TASK = """
from assay import Sample, Task, generate, match, task


@task
def big():
    sample = Sample(input="x" * 70_000, target="ok", id="big")  # a loose artifact
    return Task(dataset=[sample], solver=generate(), scorer=match(), model="mock/m")
"""


@pytest.mark.doc(
    "docs/evidence.md",
    "the artifacts that only an event names (a model call's or a grader's prompt and output, a "
    "tool call's arguments and result) against the store too;",
)
def test_a_deleted_prompt_that_no_bundle_lists_is_named(tmp_path: Path) -> None:
    """A model call's prompt and output are named by its ``sampling`` event alone (the
    bundle lists the sample and the answer). Deleting the prompt's file is caught too,
    at the event that names it."""
    from assay import eval as run_eval
    from tests.helpers import write_module

    task_file = write_module(tmp_path, "big_prompt_task", BIG_PROMPT_TASK)
    (result,) = run_eval(f"{task_file}@big", log_dir=tmp_path / "runs")
    run = result.path
    assert result.status == "success" and run is not None and verify_run(run).ok
    events = read_jsonl(run / "events.jsonl")
    ((number, call),) = [  # the line that holds the event (a batch line)
        (i + 1, e["data"])
        for i, line in enumerate(events)
        for e in events_in(line)
        if e["type"] == "sampling" and "model" in e["data"]
    ]
    loose = run / "artifacts" / call["prompt"][:2] / call["prompt"]
    assert loose.is_file()
    loose.unlink()
    problems = verify_run(run).problems
    assert any(p.startswith(f"events.jsonl:{number}:") and "prompt" in p for p in problems), (
        problems
    )


# --------------------------------------------------------------- where each problem is

LISTING = ["plan.jsonl", "events.jsonl", "bundles.jsonl", "scores.jsonl"]


@pytest.mark.doc(
    "docs/evidence.md",
    "Each problem names the file (and line) where it is, listed in file order; a whole-file",
)
def test_problems_name_their_file_and_line_in_file_order(run: Path) -> None:
    """Edits in four files, later lines first: the findings come back by file, in the
    order of the run directory's listing, and by line within each file."""
    replace_once(run / "scores.jsonl", b'"scorer_id":"fee-', b'"scorer_id":"fex-', line=5)
    replace_once(run / "scores.jsonl", b'"scorer_id":"fee-', b'"scorer_id":"fex-', line=1)
    replace_once(run / "bundles.jsonl", b'"state":"completed"', b'"state":"completeD"', line=4)
    replace_once(run / "bundles.jsonl", b'"state":"completed"', b'"state":"completeD"', line=2)
    replace_once(run / "events.jsonl", b'"at":1', b'"at":2', line=10)
    replace_once(run / "plan.jsonl", b'"sample_index":', b'"sample_index":9', line=3)
    problems = verify_run(run).problems
    where = []
    for problem in problems:
        name, _, rest = problem.partition(":")
        line = rest.split(" ", 1)[0].split(":")[0]
        where.append((name, int(line) if line.isdigit() else 0))
    # first the whole-file digests the manifest holds (named by file, no line) ...
    whole = [name for name, line in where if line == 0]
    assert whole == ["bundles.jsonl", "plan.jsonl", "scores.jsonl"], problems
    assert where[: len(whole)] == [(name, 0) for name in whole], problems
    # ... then each finding at its line: by file in the listing's order, by line in each
    named = [name for name, line in where if line]
    assert named == sorted(named, key=LISTING.index), problems
    assert sorted(set(named), key=LISTING.index) == LISTING, problems
    for name in LISTING:
        lines = [line for n, line in where if n == name and line]
        assert lines == sorted(lines), (name, problems)
    assert {("scores.jsonl", 2), ("scores.jsonl", 6), ("plan.jsonl", 4)} <= set(where), problems
    assert {("bundles.jsonl", 3), ("bundles.jsonl", 5)} <= set(where), problems
    assert any(name == "events.jsonl" and line >= 11 for name, line in where), problems
