"""What a CI job reads beside the exit code: ``--junit FILE``, the GitHub step summary,
and ``assay export`` / ``assay.read_run``.

Everything runs through the real CLI (``python -m assay``) on real runs; the JUnit files
are parsed with the standard library, as a CI's test-report reader would.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from assay.errors import (
    EXIT_CONFIG,
    EXIT_EVIDENCE,
    EXIT_FAILED,
    EXIT_INCONCLUSIVE,
    EXIT_PASSED,
    EXIT_RUN,
)
from tests.helpers import (
    FAST_RETRY,
    SHIPPING,
    bundles_by_sample,
    edit_artifact,
    error_line,
    interrupted_at_last_trial,
    quiz_tasks,
    run_cli,
    simple_spec,
    unique_callable_spec,
    write_module,
)
from tests.servers.openai_compat import OpenAICompatServer, not_json

EARLIER_STEP = "## an earlier step's summary\n\n"


@pytest.fixture(scope="module")
def shipping(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The shipping example run with ``--junit`` under a step summary that already holds
    an earlier step's text: buggy-release fails order-100, fixed-release passes."""
    root = tmp_path_factory.mktemp("shipping")
    summary = root / "summary.md"
    summary.write_text(EARLIER_STEP, encoding="utf-8")
    proc = run_cli(
        "run",
        SHIPPING / "eval.yaml",
        "-o",
        root / "run",
        "--junit",
        root / "run.xml",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert proc.returncode == EXIT_FAILED, proc.stdout + proc.stderr
    return {"root": root, "run": root / "run", "junit": root / "run.xml", "summary": summary}


def _suite(junit: Path) -> ET.Element:
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1, ET.tostring(root)
    return suites[0]


def _cases(suite: ET.Element) -> dict[tuple[str, str], ET.Element]:
    return {(c.get("classname", ""), c.get("name", "")): c for c in suite.findall("testcase")}


def _counts(element: ET.Element) -> dict[str, int]:
    return {key: int(element.get(key, "-1")) for key in ("tests", "failures", "errors", "skipped")}


@pytest.mark.doc(
    "docs/cli.md",
    "`--junit FILE` (on `run`, `resume`, `score` and `gate`; one option definition) — also "
    "write the gate as JUnit XML to FILE, for a CI's test report.",
    "Each gated check (a target the gate judged) is a testcase named by the target, with "
    "classname the evaluation; under it, each trial that did not pass a gated scorer is a "
    "testcase with classname `<evaluation>.<target>`, named by scorer, sample, repetition "
    "and trial id.",
    "Passing trials are not listed",
    "| check `passed` | a testcase with no child |",
    '| check `failed` | `<failure message="failed: <first reason>">` with every reason |',
    '| trial score `failed` | `<failure message="failed: <reason>">`;',
    "The file's `failures`, `errors` and `skipped` counts are those of its testcases.",
)
def test_run_junit_has_a_testcase_per_check_and_per_failing_trial(
    shipping: dict[str, Any],
) -> None:
    suite = _suite(shipping["junit"])
    assert suite.get("name") == "shipping-fee"
    cases = _cases(suite)
    failed_trial = bundles_by_sample(shipping["run"])  # one bundle per sample: any target
    assert set(failed_trial)  # the run has bundles
    buggy = cases[("shipping-fee", "buggy-release")]
    failure = buggy.find("failure")
    assert failure is not None
    assert failure.get("message") == (
        "failed: fee-matches: pass rate 2/3 = 0.6667 is below the minimum 1"
    )
    fixed = cases[("shipping-fee", "fixed-release")]
    assert list(fixed) == []  # passed: no child
    under = [key for key in cases if key[0] == "shipping-fee.buggy-release"]
    assert len(under) == 1, cases.keys()  # order-99 and order-101 passed: not listed
    name = under[0][1]
    assert name.startswith("fee-matches · sample order-100 · rep 1 (t-"), name
    trial_failure = cases[under[0]].find("failure")
    assert trial_failure is not None
    assert trial_failure.get("message") == "failed: fee is 10, expected 0"
    assert not [key for key in cases if key[0] == "shipping-fee.fixed-release"]
    assert _counts(suite) == {"tests": 3, "failures": 2, "errors": 0, "skipped": 0}
    assert _counts(ET.parse(shipping["junit"]).getroot()) == _counts(suite)


@pytest.mark.doc(
    "docs/cli.md",
    "`--junit FILE` (on `run`, `resume`, `score` and `gate`; one option definition)",
)
def test_score_and_gate_write_the_junit_the_run_wrote(shipping: dict[str, Any]) -> None:
    for command in ("score", "gate"):
        junit = shipping["root"] / f"{command}.xml"
        proc = run_cli(command, shipping["run"], "--junit", junit)
        expected = EXIT_PASSED if command == "score" else EXIT_FAILED  # score: scores equal
        assert proc.returncode == expected, proc.stdout + proc.stderr
        assert junit.read_bytes() == shipping["junit"].read_bytes(), command


@pytest.mark.doc(
    "docs/cli.md",
    "When the environment variable `GITHUB_STEP_SUMMARY` names a file (GitHub Actions sets "
    "it for each step), `run`, `resume`, `score` and `gate` append a Markdown summary to it: "
    "the gate, the targets table, task metrics, the reasons and the first 20 non-passing "
    "trials.",
)
def test_the_step_summary_is_appended_after_what_was_there(shipping: dict[str, Any]) -> None:
    text = shipping["summary"].read_text(encoding="utf-8")
    assert text.startswith(EARLIER_STEP)
    summary = text[len(EARLIER_STEP) :]
    assert summary.startswith("### assay: shipping-fee\n")
    assert "**Gate: FAILED**" in summary
    assert "| buggy-release | failed | fee-matches | 0.6667 |" in summary
    assert "- buggy-release (failed): fee-matches: pass rate 2/3 = 0.6667" in summary
    assert "| buggy-release | order-100 | 1 | completed | fee-matches: failed (fee is 10, " in (
        summary
    )
    assert "order-99" not in summary  # passing trials are not listed
    gate_summary = shipping["root"] / "gate-summary.md"
    proc = run_cli("gate", shipping["run"], env={"GITHUB_STEP_SUMMARY": str(gate_summary)})
    assert proc.returncode == EXIT_FAILED
    assert gate_summary.read_text(encoding="utf-8") == summary  # the same summary, appended


@pytest.mark.doc(
    "docs/cli.md", "A summary that cannot be written is said on stderr and changes no exit code."
)
def test_a_summary_that_cannot_be_written_changes_no_exit_code(
    shipping: dict[str, Any], tmp_path: Path
) -> None:
    proc = run_cli("gate", shipping["run"], env={"GITHUB_STEP_SUMMARY": str(tmp_path)})
    assert proc.returncode == EXIT_FAILED  # the gate's code, as without a summary
    line = error_line(proc)
    assert "GITHUB_STEP_SUMMARY" in line and str(tmp_path) in line


@pytest.mark.doc(
    "docs/cli.md",
    "A FILE whose folder is missing or cannot be written is exit 2 before anything runs.",
)
def test_a_junit_file_in_a_missing_folder_is_refused_before_the_run(tmp_path: Path) -> None:
    junit = tmp_path / "missing" / "junit.xml"
    proc = run_cli("run", SHIPPING / "eval.yaml", "-o", tmp_path / "run", "--junit", junit)
    assert proc.returncode == EXIT_CONFIG
    assert "--junit" in error_line(proc)
    assert not (tmp_path / "run").exists()  # nothing ran


ONE_WRONG = """
def answer(text):
    return "wrong" if text == "q0" else text
"""


@pytest.mark.doc(
    "docs/cli.md",
    "under a check that passed (the gate allowed it) `<system-out>` instead, so the file "
    "counts no failure the gate did not",
)
def test_a_failed_trial_under_a_passing_check_is_not_a_failure(tmp_path: Path) -> None:
    spec = unique_callable_spec(tmp_path / "spec", ONE_WRONG, gate={"minimum": 0.5})
    junit = tmp_path / "junit.xml"
    proc = run_cli("run", spec, "-o", tmp_path / "run", "--junit", junit)
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    suite = _suite(junit)
    assert _counts(suite) == {"tests": 2, "failures": 0, "errors": 0, "skipped": 0}
    cases = _cases(suite)
    assert list(cases[("simple", "t")]) == []
    (trial_key,) = [key for key in cases if key[0] == "simple.t"]
    assert "sample s0" in trial_key[1]
    out = cases[trial_key].find("system-out")
    assert out is not None and out.text is not None
    assert out.text.startswith("failed: ") and out.text.endswith("(within the gate)")


BLOCKED_ONE = """
def answer(text):
    if text == "q1":
        raise ConnectionError("the service is down")
    return text
"""


@pytest.mark.doc(
    "docs/cli.md",
    '| check `inconclusive` | `<skipped message="inconclusive: <first reason>">`: neither '
    "pass nor fail |",
    '| trial score `error`, `unscorable` or `missing` | `<skipped message="inconclusive: …">` |',
)
def test_inconclusive_is_skipped_neither_pass_nor_fail(tmp_path: Path) -> None:
    spec = unique_callable_spec(
        tmp_path / "spec", BLOCKED_ONE, gate={"minimum": 0.5}, retry=FAST_RETRY
    )
    junit = tmp_path / "junit.xml"
    proc = run_cli("run", spec, "-o", tmp_path / "run", "--junit", junit)
    assert proc.returncode == EXIT_INCONCLUSIVE, proc.stdout + proc.stderr
    suite = _suite(junit)
    assert _counts(suite) == {"tests": 2, "failures": 0, "errors": 0, "skipped": 2}
    cases = _cases(suite)
    check = cases[("simple", "t")].find("skipped")
    assert check is not None and check.get("message", "").startswith("inconclusive: ")
    (trial_key,) = [key for key in cases if key[0] == "simple.t"]
    assert "sample s1" in trial_key[1]
    skipped = cases[trial_key].find("skipped")
    assert skipped is not None
    assert skipped.get("message", "").startswith("inconclusive: unscorable"), skipped.attrib


@pytest.mark.doc(
    "docs/cli.md", '| run `ungated` | one testcase `gate` with `<skipped message="not gated: …">` |'
)
def test_an_ungated_run_is_one_skipped_testcase(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path / "spec", gate={})
    junit = tmp_path / "junit.xml"
    proc = run_cli("run", spec, "-o", tmp_path / "run", "--junit", junit)
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    suite = _suite(junit)
    assert _counts(suite) == {"tests": 1, "failures": 0, "errors": 0, "skipped": 1}
    skipped = _cases(suite)[("simple", "gate")].find("skipped")
    assert skipped is not None
    assert skipped.get("message", "").startswith("not gated: ")


HOSTILE = """
def answer(text):
    return "\\x1b[31mred\\x00\\x07 ]]> </testcase>" if text == "q0" else text
"""


@pytest.mark.doc(
    "docs/cli.md",
    "Characters XML cannot hold (control characters) are written as `\\x1b`-style escapes.",
)
def test_control_characters_cannot_break_the_junit_file(tmp_path: Path) -> None:
    samples = [
        {"id": "s\x1b[2J\x01", "input": "q0", "expected": "q0"},
        {"id": "ok", "input": "q1", "expected": "q1"},
    ]
    spec = unique_callable_spec(tmp_path / "spec", HOSTILE, samples=samples)
    junit = tmp_path / "junit.xml"
    proc = run_cli("run", spec, "-o", tmp_path / "run", "--junit", junit)
    assert proc.returncode == EXIT_FAILED, proc.stdout + proc.stderr
    suite = _suite(junit)  # it parses
    (trial_key,) = [key for key in _cases(suite) if key[0] == "simple.t"]
    assert "sample s\\x1b[2J\\x01 · rep 1" in trial_key[1]
    failure = _cases(suite)[trial_key].find("failure")
    assert failure is not None
    assert "\\x1b[31mred\\x00\\x07 ]]> </testcase>" in failure.get("message", "")


TASKS = (
    quiz_tasks(2)
    + """
@task
def other():
    return Task(dataset=[Sample(input="q", target="five", id="x")], scorer=includes())
"""
)


@pytest.mark.doc(
    "docs/cli.md", "A Python task's run writes one `<testsuite>` per task × model unit."
)
def test_a_python_task_run_writes_a_suite_per_unit(tmp_path: Path) -> None:
    write_module(tmp_path, "tasks", TASKS)
    junit = tmp_path / "junit.xml"
    proc = run_cli(
        "run",
        "tasks.py",
        "-m",
        "mock/a",
        "-M",
        "default_output=four",
        "--log-dir",
        tmp_path / "logs",
        "--junit",
        junit,
        cwd=tmp_path,
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr  # no gate: ungated
    suites = ET.parse(junit).getroot().findall("testsuite")
    assert sorted(s.get("name", "") for s in suites) == ["other", "quiz"]


HELLO = """
from assay import Sample, Task, generate, includes, task


@task
def hello():
    return Task(
        dataset=[Sample(input="hi", target="x", id=f"s{i}") for i in range(3)],
        solver=[generate()],
        scorer=includes(),
    )
"""


@pytest.mark.doc(
    "docs/cli.md",
    '| run `stopped` | one testcase `gate` with `<error message="stopped: <cause>">` |',
)
def test_a_stopped_run_is_one_error_testcase(tmp_path: Path) -> None:
    write_module(tmp_path, "tasks", HELLO)
    junit = tmp_path / "junit.xml"
    env = {"OPENAI_API_KEY": "test-key"}
    with OpenAICompatServer([not_json()], reply=lambda payload: "x") as server:
        args = ("--model", "openai/m", "--model-base-url", server.url, "-M", "max_retries=0")
        proc = run_cli(
            "run", "tasks.py@hello", *args, "-o", tmp_path / "run", "-j", "1",
            "--junit", junit, cwd=tmp_path, env=env,
        )  # fmt: skip
    assert proc.returncode == EXIT_RUN, proc.stdout + proc.stderr
    suite = _suite(junit)
    assert _counts(suite)["errors"] == 1
    error = _cases(suite)[("hello", "gate")].find("error")
    assert error is not None
    assert error.get("message", "").startswith("stopped: 1 trial(s) errored"), error.attrib


def test_resume_writes_the_junit_of_the_run_it_finishes(tmp_path: Path) -> None:
    run = interrupted_at_last_trial(tmp_path, '"wrong" if text == "q0" else text')
    (tmp_path / "go").touch()
    junit = tmp_path / "junit.xml"
    proc = run_cli("resume", run, "--junit", junit, cwd=tmp_path)
    assert proc.returncode == EXIT_FAILED, proc.stdout + proc.stderr
    suite = _suite(junit)
    assert _counts(suite) == {"tests": 2, "failures": 2, "errors": 0, "skipped": 0}
    assert any("sample s0" in name for _, name in _cases(suite))


# --- export and read_run ------------------------------------------------------------


def _order_100_buggy(rows: list[dict[str, Any]]) -> dict[str, Any]:
    (row,) = [
        r for r in rows if r["sample_id"] == "order-100" and r["target_id"] == "buggy-release"
    ]
    return row


@pytest.mark.doc(
    "docs/cli.md",
    "| `export RUN [--format csv\\|jsonl\\|inspect] [-o FILE] [--trust PUB]` | every trial "
    "of a run, "
    "one row each, read from its checked evidence",
    "`export RUN` writes one row per finished trial, in plan order, to stdout or to `-o FILE`",
    "`--format csv` (the default) writes a header row and text cells as they are, anything "
    "else (an input or answer that is JSON) as compact JSON; `--format jsonl` writes one "
    "JSON object a line with the values as recorded.",
)
def test_export_writes_one_row_per_trial_as_csv_and_jsonl(shipping: dict[str, Any]) -> None:
    proc = run_cli("export", shipping["run"])
    assert proc.returncode == EXIT_PASSED, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 6
    assert list(rows[0]) == [
        "trial_id",
        "bundle_digest",
        "index",
        "target_id",
        "sample_id",
        "repetition",
        "state",
        "input",
        "expected",
        "answer",
        "failure",
        "fee-matches.status",
        "fee-matches.value",
        "fee-matches.reason",
    ]
    assert [int(r["index"]) for r in rows] == list(range(6))  # plan order
    row = _order_100_buggy(rows)
    assert (row["input"], row["expected"], row["answer"]) == (
        '{"amount": 100}',
        '{"fee": 0}',
        '{"fee": 10}',
    )
    assert (row["fee-matches.status"], row["fee-matches.reason"]) == (
        "failed",
        "fee is 10, expected 0",
    )
    assert row["state"] == "completed" and row["repetition"] == "1"
    out = shipping["root"] / "trials.jsonl"
    proc = run_cli("export", shipping["run"], "--format", "jsonl", "-o", out)
    assert proc.returncode == EXIT_PASSED, proc.stderr
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["trial_id"] for r in records] == [r["trial_id"] for r in rows]
    record = _order_100_buggy(records)
    assert record["input"] == {"amount": 100} and record["answer"] == {"fee": 10}
    assert record["fee-matches.value"] == 0.0 and record["repetition"] == 1


@pytest.mark.doc(
    "docs/cli.md",
    "Each bundle, output and sample is checked against its digest as `show` checks it: an "
    "edited one is exit 4 and `-o FILE` is not written.",
)
def test_export_refuses_an_edited_output(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = run_cli("run", SHIPPING / "eval.yaml", "-o", run)
    assert proc.returncode == EXIT_FAILED
    bundle = next(iter(bundles_by_sample(run).values()))
    edit_artifact(run, bundle["observation"]["output"], lambda data: data.replace(b"0", b"1"))
    out = tmp_path / "trials.csv"
    proc = run_cli("export", run, "-o", out)
    assert proc.returncode == EXIT_EVIDENCE
    assert "changed" in error_line(proc)
    assert not out.exists()
    assert not list(tmp_path.glob(".trials.csv*"))  # no partial file left either


@pytest.mark.doc(
    "docs/cli.md",
    "`--trust PUB` refuses a run not signed by a trusted key (exit 4), as it does for `verify`.",
)
def test_export_with_trust_refuses_an_unsigned_run(
    shipping: dict[str, Any], tmp_path: Path
) -> None:
    pytest.importorskip("cryptography", reason="the sign extra")
    key = tmp_path / "key"
    assert run_cli("keygen", key).returncode == EXIT_PASSED
    proc = run_cli("export", shipping["run"], "--trust", key.with_name("key.pub"))
    assert proc.returncode == EXIT_EVIDENCE
    assert "is not signed (no attestation.dsse.json)" in error_line(proc)
    assert proc.stdout == ""  # not a row before the refusal
    signed = tmp_path / "signed"
    shutil.copytree(shipping["run"], signed)
    assert run_cli("sign", signed, "--key", key).returncode == EXIT_PASSED
    proc = run_cli("export", signed, "--trust", key.with_name("key.pub"))
    assert proc.returncode == EXIT_PASSED, proc.stderr
    assert len(proc.stdout.splitlines()) == 7  # the header and six trials


@pytest.mark.doc(
    "docs/cli.md",
    "In Python, `assay.read_run(RUN)` returns the same rows as pandas DataFrames, `.trials` "
    "(one row per trial) and `.scores` (one row per trial and scorer); without pandas it "
    "raises a `ConfigError` saying `pip install pandas`.",
)
def test_read_run_gives_dataframes_and_names_pandas_when_missing(
    shipping: dict[str, Any],
) -> None:
    pytest.importorskip("pandas", reason="pandas is in the test extra")
    import assay

    frames = assay.read_run(shipping["run"])
    assert frames.trials.shape == (6, 14)
    assert list(frames.scores.columns) == [
        "trial_id",
        "target_id",
        "sample_id",
        "repetition",
        "scorer_id",
        "status",
        "value",
        "reason",
    ]
    failed = frames.scores[frames.scores["status"] == "failed"]
    assert list(failed["sample_id"]) == ["order-100"]
    assert list(failed["target_id"]) == ["buggy-release"]
    code = (
        "import sys\n"
        "sys.modules['pandas'] = None  # as if it were not installed\n"
        "import assay\n"
        "assert 'pandas' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
        "from assay.errors import ConfigError\n"
        "try:\n"
        "    assay.read_run(sys.argv[1])\n"
        "except ConfigError as exc:\n"
        "    print(exc.one_line())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(shipping["run"])],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "pip install pandas" in proc.stdout


def test_import_assay_does_not_import_pandas() -> None:
    code = "import sys, assay, assay.report; print('pandas' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "False", proc.stderr
