"""``assay show RUN ID``: one trial, or every trial of a sample, from checked evidence.

Real runs through the real CLI: what is printed is what the files hold, a target's text
cannot drive the terminal, and an edited artifact, bundle or score is refused (exit 4)
instead of shown.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import (
    REPO,
    bundles_by_sample,
    edit_artifact,
    error_line,
    read_jsonl,
    run_cli,
    simple_spec,
    state_of,
    unique_callable_spec,
)

TARGET = """
def answer(text):
    if text == "terminal":
        return "\\x1b[31mred\\x1b[0m and \\u202egnp.exe"  # colour codes, a bidi override
    if text == "long":
        return "x" * 5000
    if text == "wrong":
        return "not it"
    return text
"""
SAMPLES = [
    {"id": "plain", "input": "hello", "expected": "hello"},
    {"id": "terminal", "input": "terminal", "expected": "terminal"},
    {"id": "long", "input": "long", "expected": "long"},
    {"id": 7, "input": "wrong", "expected": "right"},
    {"id": 'naïve "quoted" 名', "input": "echo", "expected": "echo"},
]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("show")
    spec = unique_callable_spec(folder / "spec", TARGET, samples=SAMPLES, repetitions=2)
    out = folder / "run"
    ran = run_cli("run", spec, "-o", out)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # two samples fail the gate
    return out


@pytest.mark.doc(
    "docs/cli.md",
    "one trial (`ID` = its `t-…` id) or every trial of a sample (`ID` = the sample id): "
    "state, attempts, input, expected, output, each score and its reason; each part checked "
    "against its digest first",
)
def test_a_sample_id_shows_each_of_its_trials_in_order(run: Path) -> None:
    shown = run_cli("show", run, "plain")
    assert shown.returncode == 0, shown.stderr
    trials = [b for b in read_jsonl(run / "bundles.jsonl") if b["trial"]["sample_id"] == "plain"]
    heads = [line for line in shown.stdout.splitlines() if line.startswith("t-")]
    assert [h.split()[0] for h in heads] == [
        b["trial"]["trial_id"] for b in sorted(trials, key=lambda b: b["trial"]["index"])
    ]
    assert "repetition 1" in heads[0] and "repetition 2" in heads[1]
    assert shown.stdout.count("  input: hello\n") == 2
    assert shown.stdout.count("  output: hello\n") == 2
    assert shown.stdout.count("  score exact: passed (1.0)\n") == 2


def test_a_sample_id_with_quotes_and_non_ascii_is_found(run: Path) -> None:
    shown = run_cli("show", run, 'naïve "quoted" 名', "--json")
    assert shown.returncode == 0, shown.stderr
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [r["bundle"]["trial"]["sample_id"] for r in records] == ['naïve "quoted" 名'] * 2


@pytest.mark.doc(
    "docs/cli.md",
    "one trial (`ID` = its `t-…` id) or every trial of a sample (`ID` = the sample id): "
    "state, attempts, input, expected, output, each score and its reason; each part checked "
    "against its digest first",
)
def test_a_trial_id_shows_that_trial_with_its_score_and_reason(run: Path) -> None:
    bundle = bundles_by_sample(run)["7"]  # an integer id in the dataset
    trial_id = bundle["trial"]["trial_id"]
    shown = run_cli("show", run, trial_id)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"{trial_id}  target t · sample 7 ·")
    (score,) = [s for s in read_jsonl(run / "scores.jsonl") if s["trial_id"] == trial_id]
    assert f"  score exact: failed (0.0) — {score['reason']}" in lines
    assert "  output: not it" in lines and "  expected: right" in lines
    assert "  input: wrong" in lines
    assert lines[1] == "  state: completed (answered); attempts: 1 (succeeded)"
    checked = f"  bundle {bundle['digest']}: matches its digest, and so do its output and scores"
    assert lines[-1] == checked


@pytest.mark.doc(
    "docs/cli.md", '`--json` prints one line per trial: `{"bundle", "sample", "output", "scores"}`.'
)
def test_json_prints_the_records_themselves(run: Path) -> None:
    shown = run_cli("show", run, "7", "--json")
    assert shown.returncode == 0, shown.stderr
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    assert len(records) == 2
    bundles = {b["trial"]["trial_id"]: b for b in read_jsonl(run / "bundles.jsonl")}
    scores = read_jsonl(run / "scores.jsonl")
    for record in records:
        trial_id = record["bundle"]["trial"]["trial_id"]
        assert record["bundle"] == bundles[trial_id]
        assert record["scores"] == [s for s in scores if s["trial_id"] == trial_id]
        assert record["output"] == "not it" and record["sample"]["input"] == "wrong"
        assert set(record) == {"bundle", "sample", "output", "scores"}


@pytest.mark.doc(
    "docs/cli.md",
    "Text from a target is printed with control and bidirectional characters escaped "
    "(`\\x1b`, `\\u202e`)",
)
def test_a_targets_text_cannot_drive_the_terminal(run: Path) -> None:
    shown = run_cli("show", run, "terminal")
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\u202e" not in shown.stdout
    assert "  output: \\x1b[31mred\\x1b[0m and \\u202egnp.exe" in shown.stdout.splitlines()


@pytest.mark.doc("docs/cli.md", "and cut at 2,000 characters unless `--full`.")
def test_a_long_output_is_cut_unless_full(run: Path) -> None:
    cut = run_cli("show", run, "long")
    assert f"  output: {'x' * 2000} … 3000 more characters (--full shows all)" in cut.stdout
    full = run_cli("show", run, "long", "--full")
    assert f"  output: {'x' * 5000}\n" in full.stdout


@pytest.mark.doc("docs/cli.md", "An id the run does not have is exit 2.")
def test_an_unknown_id_or_a_folder_that_is_no_run_is_one_line(run: Path, tmp_path: Path) -> None:
    unknown = run_cli("show", run, "nope")
    assert unknown.returncode == 2
    assert "has no trial or sample 'nope'" in error_line(unknown)
    missing = run_cli("show", run, "t-" + "0" * 24)
    assert missing.returncode == 2
    assert f"has no trial or sample '{'t-' + '0' * 24}'" in error_line(missing)
    not_a_run = run_cli("show", tmp_path, "plain")
    assert not_a_run.returncode == 4 and "not an assay run" in error_line(not_a_run)


@pytest.mark.doc(
    "docs/cli.md",
    "`show RUN ID` reads a sealed run through its indexes (a trial in under a millisecond) "
    "and an unsealed one, or a sample id, with one pass over `bundles.jsonl`.",
)
def test_a_sealed_run_is_read_through_its_index_an_unsealed_one_by_scanning(
    run: Path, tmp_path: Path
) -> None:
    """Reversed lines of ``bundles.jsonl`` tell the two apart: the index's offset for a
    trial then holds (part of) another trial's line: refused, exit 4; a scan finds the
    trial anywhere."""
    trial_id = bundles_by_sample(run)["plain"]["trial"]["trial_id"]
    for name, sealed in (("sealed", True), ("unsealed", False)):
        copy = tmp_path / name
        shutil.copytree(run, copy)
        if not sealed:
            for index in [copy / "bundles.idx", *(copy / "artifacts").glob("*.idx")]:
                index.unlink()
        lines = (copy / "bundles.jsonl").read_bytes().splitlines(keepends=True)
        assert lines[0] != lines[-1]
        (copy / "bundles.jsonl").write_bytes(b"".join(reversed(lines)))
        by_sample = run_cli("show", copy, "plain")  # a sample id: always one pass
        assert by_sample.returncode == 0 and "  output: hello" in by_sample.stdout
        shown = run_cli("show", copy, trial_id)
        if sealed:
            assert shown.returncode == 4, shown.stdout + shown.stderr
            line = error_line(shown)  # another trial's line, or half of one
            assert "does not verify" in line and ("bundles.idx" in line or "digest" in line)
        else:
            assert shown.returncode == 0, shown.stderr
            assert "  output: hello" in shown.stdout.splitlines()


def test_an_index_that_gives_another_trials_line_is_refused(run: Path, tmp_path: Path) -> None:
    """A sealed run whose bundle line was swapped for another trial's (padded with
    blanks to the same length, so every offset stays right and each line still hashes
    to its digest): showing the first trial is refused as changed evidence, not answered
    with 'no such trial'."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    lines = (copy / "bundles.jsonl").read_bytes().splitlines()
    longest = max(range(len(lines)), key=lambda i: len(lines[i]))
    other = min(range(len(lines)), key=lambda i: len(lines[i]))
    lines[longest] = lines[other].ljust(len(lines[longest]))
    (copy / "bundles.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    trial_id = json.loads(run.joinpath("bundles.jsonl").read_bytes().splitlines()[longest])[
        "trial"
    ]["trial_id"]
    shown = run_cli("show", copy, trial_id)
    assert shown.returncode == 4, shown.stdout + shown.stderr
    assert f"bundles.idx: the line it gives for {trial_id} is another trial's" in error_line(shown)


@pytest.mark.doc(
    "docs/cli.md",
    "A bundle is shown only if it still hashes to its digest, its output and sample only if "
    "their bytes hash to the digests it names, its score lines only if they name it: "
    "otherwise exit 4, naming the file and what changed",
)
def test_edited_evidence_is_refused_not_shown(run: Path, tmp_path: Path) -> None:
    # the output artifact: same length, other bytes
    edited = tmp_path / "output"
    shutil.copytree(run, edited)
    bundle = bundles_by_sample(edited)["7"]
    edit_artifact(edited, bundle["observation"]["output"], lambda b: b.replace(b"not", b"NOT"))
    refused = run_cli("show", edited, "7")
    assert refused.returncode == 4, refused.stdout
    line = error_line(refused)
    assert "does not verify" in line and f"output {bundle['observation']['output']}" in line
    assert "NOT" not in refused.stdout

    # a bundle whose recorded state was changed
    edited = tmp_path / "bundle"
    shutil.copytree(run, edited)
    text = (edited / "bundles.jsonl").read_text()
    (edited / "bundles.jsonl").write_text(text.replace('"expected":"right"', '"expected":"not it"'))
    refused = run_cli("show", edited, "7")
    assert refused.returncode == 4 and "does not match its digest" in error_line(refused)

    # a score line moved onto another trial's bundle
    edited = tmp_path / "score"
    shutil.copytree(run, edited)
    scores = read_jsonl(edited / "scores.jsonl")
    target = bundles_by_sample(edited)["plain"]["trial"]["trial_id"]
    for score in scores:
        if score["trial_id"] == target:
            score["bundle_digest"] = "sha256:" + "0" * 64
    (edited / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))
    refused = run_cli("show", edited, target)
    assert refused.returncode == 4 and "names another bundle" in error_line(refused)


@pytest.mark.doc(
    "docs/cli.md",
    "A Python task's trial shows its conversation, one line per message (`role: text`, a "
    "tool call as `assistant → name(arguments)`), then the final answer as `output`.",
)
def test_a_python_tasks_trial_shows_its_conversation(tmp_path: Path) -> None:
    out = tmp_path / "run"
    ran = run_cli("run", f"{REPO}/examples/tools/task.py@arithmetic_tools", "-o", out)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    bundle = read_jsonl(out / "bundles.jsonl")[0]
    shown = run_cli("show", out, bundle["trial"]["trial_id"])
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    messages = state_of(out, bundle)["messages"]
    start = lines.index("  messages:") + 1
    for message, line in zip(messages, lines[start:], strict=False):
        assert line.startswith(f"    {message['role']}"), (message, line)
    calls = [c for m in messages for c in m.get("tool_calls") or []]
    assert calls and all(f"assistant → {c['function']}(" in shown.stdout for c in calls)
    assert f"  output: {messages[-1]['content']}" in lines


# A program that fails the way real ones do: non-zero exit with half a line of stdout,
# or with none at all. Both are product failures, recorded as produced.
FAILING_PROGRAM = """
import sys

text = sys.stdin.read()
if "half" in text:
    sys.stdout.write('{"answer": "unfinish')
    sys.exit(3)
if "silent" in text:
    sys.exit(2)
print('"fine"')
"""


@pytest.mark.doc(
    "docs/cli.md",
    "An output whose bytes are not the JSON its media type says (a program that exited "
    "non-zero with empty or non-JSON stdout: a product failure, recorded as produced) is "
    "shown as the text recorded, with the failure, and `show` exits 0.",
)
def test_a_program_that_exited_non_zero_with_bad_output_is_shown(tmp_path: Path) -> None:
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "prog.py").write_text(FAILING_PROGRAM)
    samples = [
        {"id": "half", "input": "half", "expected": "x"},
        {"id": "silent", "input": "silent", "expected": "x"},
    ]
    spec = simple_spec(spec_dir, samples=samples, targets=[{"id": "p", "script": "prog.py"}])
    run = tmp_path / "run"
    assert run_cli("run", spec, "-o", run).returncode == 1  # both fail the gate
    for sample, output, code in [("half", '{"answer": "unfinish', 3), ("silent", "", 2)]:
        shown = run_cli("show", run, sample)
        assert shown.returncode == 0, shown.stderr
        assert shown.stderr == ""
        lines = shown.stdout.splitlines()
        assert lines[1] == "  state: completed (product_failure); attempts: 1 (succeeded)"
        assert f"  output: {output}" in lines, lines
        assert f"  failure: exited with code {code}" in lines, lines
        as_json = run_cli("show", run, sample, "--json")
        assert as_json.returncode == 0, as_json.stderr
        assert json.loads(as_json.stdout)["output"] == output
