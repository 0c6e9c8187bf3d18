"""Sharded runs without a cluster: ``assay run SPEC --shard K/N`` on as many machines as
wanted, then ``assay merge SHARD... -o RUN``, all through the real CLI.

A shard holds whole samples (round robin in plan order), its gate is partial; the merge
checks the shards make exactly one whole run, and the merged run concludes what one
unsharded run of the spec concludes and verifies, shards included.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import error_line, read_jsonl, run_cli, unique_callable_spec

SAMPLES = 7
REPETITIONS = 2
WRONG = "q3"  # the one sample the target answers wrongly: the gate has something to judge

SOURCE = f"""
def answer(text):
    return "nope" if text == {WRONG!r} else text
"""


def _spec(folder: Path, **extra: object) -> Path:
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(SAMPLES)]
    return unique_callable_spec(folder, SOURCE, samples=samples, repetitions=REPETITIONS, **extra)


def _bundle_trials(run: Path) -> list[dict[str, object]]:
    return [bundle["trial"] for bundle in read_jsonl(run / "bundles.jsonl")]


def _shards(tmp_path: Path, spec: Path, count: int) -> list[Path]:
    """Run every shard K/count of *spec*; each must conclude inconclusive (exit 3)."""
    runs = []
    for index in range(1, count + 1):
        run = tmp_path / f"shard-{index}"
        proc = run_cli("run", spec, "--shard", f"{index}/{count}", "-o", run)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        runs.append(run)
    return runs


@pytest.fixture
def sharded(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A spec and its three shard runs."""
    spec = _spec(tmp_path / "spec")
    return spec, _shards(tmp_path, spec, 3)


@pytest.mark.doc("docs/cli.md", "run only part K of N of the plan, on any machine")
@pytest.mark.doc(
    "docs/cli.md",
    "run only part K of N of the plan: the samples at plan positions K-1, K-1+N, "
    "K-1+2N, … (counting from 0), each with every target and repetition.",
    "The N parts are disjoint and together are the plan",
)
def test_shards_take_whole_samples_round_robin_and_cover_the_plan(
    sharded: tuple[Path, list[Path]],
) -> None:
    _, runs = sharded
    plan = read_jsonl(runs[0] / "plan.jsonl")
    per_sample = REPETITIONS
    seen: set[str] = set()
    for index, run in enumerate(runs, 1):
        trials = _bundle_trials(run)
        expected = {t["trial_id"] for t in plan if (t["index"] // per_sample) % 3 == index - 1}
        ids = {str(t["trial_id"]) for t in trials}
        assert ids == expected
        assert not ids & seen  # disjoint
        seen |= ids
    assert seen == {t["trial_id"] for t in plan}


@pytest.mark.doc(
    "docs/cli.md",
    "Its metrics count its own trials, and its gate is `inconclusive` (exit 3), the "
    "gate line saying the gate is partial: a gate needs every sample.",
    "its manifest records `shard: {index, count, trials}`",
)
def test_a_shard_is_judged_on_its_own_trials_and_its_gate_is_partial(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "spec", gate={"minimum": 0.1})  # whole or part: it would pass
    run = tmp_path / "shard"
    proc = run_cli("run", spec, "--shard", "2/3", "-o", run)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "gate: inconclusive: shard 2/3 holds part of the plan" in proc.stdout
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["shard"] == {"index": 2, "count": 3, "trials": 2 * REPETITIONS}
    report = json.loads((run / "report.json").read_text())
    assert report["gate"]["status"] == "inconclusive"
    assert "shard 2/3 holds part of the plan" in (run / "report.md").read_text()
    (estimate,) = report["metrics"]["estimates"]
    assert estimate["denominator"] == 2 * REPETITIONS  # samples 1 and 4
    assert report["metrics"]["targets"][0]["states"]["not_run"] == 0


@pytest.mark.doc(
    "docs/cli.md",
    "The shard's run folder is a run like any other (`verify` checks it holds exactly its part)",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "A shard run (`--shard K/N`) must hold a bundle for each trial of its part and none "
    "of another part's.",
)
def test_verify_checks_a_shard_holds_exactly_its_part(
    sharded: tuple[Path, list[Path]],
) -> None:
    _, runs = sharded
    first, second = runs[0], runs[1]
    proc = run_cli("verify", first)
    assert proc.returncode == 0, proc.stdout
    # a bundle of shard 2 in shard 1: the manifest's file digest aside, verify names it
    foreign = (second / "bundles.jsonl").read_bytes().splitlines(keepends=True)[0]
    with open(first / "bundles.jsonl", "ab") as handle:
        handle.write(foreign)
    proc = run_cli("verify", first)
    assert proc.returncode == 4, proc.stdout
    assert "is not in shard 1/3's part of the plan" in proc.stdout
    # and a shard missing one of its trials
    lines = (second / "bundles.jsonl").read_bytes().splitlines(keepends=True)
    (second / "bundles.jsonl").write_bytes(b"".join(lines[1:]))
    proc = run_cli("verify", second)
    assert proc.returncode == 4, proc.stdout
    assert f"{len(lines) - 1} bundles for {len(lines)} planned trials" in proc.stdout


@pytest.mark.doc(
    "docs/cli.md",
    "verify the shards of one sharded run, then write one run gated over all their trials",
)
@pytest.mark.doc(
    "docs/cli.md",
    "join the shards of one sharded run into the run `RUN`, gated over all their trials",
    "its metrics, gate and reports are those of an unsharded run of the spec (the same "
    "trials, the same scores), and it exits as `run` does.",
    "`verify`, `score`, `gate`, `show`, `export` and `compare` read it as one run",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "`assay merge` writes a run whose folder holds a copy of each shard, whole, as `shards/K`",
)
def test_merged_run_concludes_what_an_unsharded_run_concludes(
    tmp_path: Path, sharded: tuple[Path, list[Path]]
) -> None:
    spec, runs = sharded
    whole = tmp_path / "whole"
    unsharded = run_cli("run", spec, "-o", whole)
    merged = tmp_path / "merged"
    proc = run_cli("merge", *reversed(runs), "-o", merged)  # any order
    assert proc.returncode == unsharded.returncode, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[:-1] == unsharded.stdout.splitlines()[:-1]
    ours, theirs = (json.loads((r / "report.json").read_text()) for r in (merged, whole))
    for field in ("metrics", "gate", "planned", "comparisons", "spec_digest"):
        assert ours[field] == theirs[field], field
    assert [r["trial_id"] for r in ours["trials"]] == [r["trial_id"] for r in theirs["trials"]]
    assert sorted(p.name for p in (merged / "shards").iterdir()) == ["1", "2", "3"]
    for command in ("verify", "gate", "score"):
        proc = run_cli(command, merged)
        expected = unsharded.returncode if command == "gate" else 0  # score: scores equal
        assert proc.returncode == expected, (command, proc.stdout, proc.stderr)
    assert f"verified {merged}: {SAMPLES * REPETITIONS} trials" in (
        run_cli("verify", merged).stdout
    )
    exported = run_cli("export", merged, "--format", "jsonl")
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [r["index"] for r in rows] == list(range(SAMPLES * REPETITIONS))
    shown = run_cli("show", merged, "s3")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("score exact: failed") == REPETITIONS
    compared = run_cli("compare", whole, merged, "--json")
    assert compared.returncode == 0, compared.stderr


@pytest.mark.doc(
    "docs/cli.md",
    "Otherwise nothing is written and one line names the first problem (a missing or "
    "repeated shard, a shard that does not verify or is not a shard, another spec): "
    "exit 4.",
    "Each shard must be a shard run, sealed complete and verifying; together they must "
    "share one spec digest and one N, with each part 1..N exactly once.",
)
@pytest.mark.parametrize(
    "case",
    ["missing", "repeated", "tampered", "other_spec", "not_a_shard", "other_count"],
)
def test_merge_refuses_shards_that_are_not_one_whole_run(
    tmp_path: Path, sharded: tuple[Path, list[Path]], case: str
) -> None:
    spec, runs = sharded
    expected = {
        "missing": "shard 3/3 missing",
        "repeated": "shard 2/3 is given twice",
        "tampered": "does not verify",
        "other_spec": "ran another spec than",
        "not_a_shard": "is not a shard run",
        "other_count": "which splits the plan otherwise than",
    }[case]
    if case == "missing":
        given = runs[:2]
    elif case == "repeated":
        copy = tmp_path / "shard-2-again"
        shutil.copytree(runs[1], copy)
        given = [*runs, copy]
    elif case == "tampered":
        scores = runs[2] / "scores.jsonl"
        scores.write_bytes(scores.read_bytes().replace(b'"passed"', b'"failed"', 1))
        given = runs
    elif case == "other_spec":
        other = _spec(tmp_path / "other", description="another evaluation text")
        proc = run_cli("run", other, "--shard", "3/3", "-o", tmp_path / "other-3")
        assert proc.returncode == 3, proc.stderr
        given = [*runs[:2], tmp_path / "other-3"]
    elif case == "not_a_shard":
        proc = run_cli("run", spec, "-o", tmp_path / "whole")
        given = [*runs, tmp_path / "whole"]
    else:
        proc = run_cli("run", spec, "--shard", "1/2", "-o", tmp_path / "half")
        given = [*runs, tmp_path / "half"]
    merged = tmp_path / "merged"
    proc = run_cli("merge", *given, "-o", merged)
    assert proc.returncode == 4, proc.stdout + proc.stderr  # the CLI's one line, below
    line = error_line(proc)
    assert line.startswith("assay: cannot merge: "), line
    assert expected in line, line
    assert not merged.exists()


@pytest.mark.doc(
    "docs/evidence.md",
    "`verify` of a merged run checks its own files (the spec and its digest, the plan, "
    "the reports, its short event chain, which opens with `run_merged` naming every "
    "shard and closes with `run_finished` repeating the manifest), then each shard "
    "through it",
    "the shard's `manifest.json` must have the SHA-256 the chain pinned and its event "
    "chain the pinned head, and the shard must verify; its problems are listed under "
    "`shards/K`.",
    "A shard replaced whole, even by a run that verifies on its own, no longer has the "
    "pinned manifest digest (exit 4).",
)
@pytest.mark.parametrize(
    "case", ["edited_shard", "replaced_shard", "edited_report", "garbled_chain"]
)
def test_verify_rechecks_the_shards_through_the_merged_run(
    tmp_path: Path, sharded: tuple[Path, list[Path]], case: str
) -> None:
    spec, runs = sharded
    merged = tmp_path / "merged"
    assert run_cli("merge", *runs, "-o", merged).returncode in (0, 1, 3)
    if case == "edited_shard":
        bundles = merged / "shards" / "2" / "bundles.jsonl"
        bundles.write_bytes(bundles.read_bytes().replace(b'"completed"', b'"blocked"', 1))
        expected = "shards/2: bundles.jsonl"
    elif case == "replaced_shard":
        again = tmp_path / "again"
        assert run_cli("run", spec, "--shard", "2/3", "-o", again).returncode == 3
        assert run_cli("verify", again).returncode == 0
        shutil.rmtree(merged / "shards" / "2")
        shutil.copytree(again, merged / "shards" / "2")
        expected = "shards/2: the shard's manifest.json is not the one the merged run pinned"
    elif case == "edited_report":
        report = merged / "report.md"
        report.write_text(report.read_text() + "\nall good\n")
        expected = "report.md: "
    else:  # not even JSON: a finding, not a traceback
        events = merged / "events.jsonl"
        events.write_bytes(b"{not json\n" + events.read_bytes())
        expected = "events.jsonl: cannot be checked"
    proc = run_cli("verify", merged)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert expected in proc.stdout, proc.stdout


@pytest.mark.doc(
    "docs/cli.md",
    "A malformed `K/N`, a Python task or a sequential gate (`gate.sequential`) is refused "
    "(exit 2).",
)
@pytest.mark.parametrize("given", ["0/2", "3/2", "2", "a/b"])
def test_a_malformed_shard_is_refused(tmp_path: Path, given: str) -> None:
    spec = _spec(tmp_path / "spec")
    proc = run_cli("run", spec, "--shard", given, "-o", tmp_path / "run")
    assert proc.returncode == 2, proc.stderr
    assert "--shard: " in error_line(proc)
    assert not (tmp_path / "run").exists()


def test_a_shard_of_a_sequential_gate_or_a_python_task_is_refused(tmp_path: Path) -> None:
    stopping = {"minimum": 0.5, "confidence": 0.95, "sequential": {"every": 2, "seed": 1}}
    spec = _spec(tmp_path / "spec", gate=stopping)
    proc = run_cli("run", spec, "--shard", "1/2", "-o", tmp_path / "run")
    assert proc.returncode == 2, proc.stderr
    assert "sequential gate" in error_line(proc)
    task = tmp_path / "task.py"
    task.write_text("from assay import Task\n\ndef t():\n    return None\n")
    proc = run_cli("run", task, "--shard", "1/2")
    assert proc.returncode == 2, proc.stderr
    assert "--shard: sharded runs are for YAML specs" in error_line(proc)


@pytest.mark.doc("docs/cli.md", "`RUN` must not exist yet (exit 5, as for `run`).")
def test_merge_into_an_existing_folder_is_refused(
    tmp_path: Path, sharded: tuple[Path, list[Path]]
) -> None:
    _, runs = sharded
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine\n")
    proc = run_cli("merge", *runs, "-o", taken)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "already holds a run" in error_line(proc)
    assert sorted(p.name for p in taken.iterdir()) == ["notes.txt"]  # left as it was


@pytest.mark.doc(
    "docs/evidence.md",
    "The copies make the merged run self-contained: it can be moved, signed and verified "
    "without the shard folders it was made from.",
)
def test_a_merged_run_moves_and_signs_without_its_sources(
    tmp_path: Path, sharded: tuple[Path, list[Path]]
) -> None:
    _, runs = sharded
    merged = tmp_path / "merged"
    assert run_cli("merge", *runs, "-o", merged).returncode == 1  # minimum 1, q3 wrong
    for run in runs:
        shutil.rmtree(run)
    moved = tmp_path / "elsewhere" / "merged"
    moved.parent.mkdir()
    merged.rename(moved)
    key = tmp_path / "key.pem"
    assert run_cli("keygen", key).returncode == 0
    assert run_cli("sign", moved, "--key", key).returncode == 0
    proc = run_cli("verify", moved, "--trust", f"{key}.pub")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "a trusted key" in proc.stdout


@pytest.mark.doc(
    "docs/evidence.md",
    "its manifest's `shard` field, bound to the chain like every field, says which part it holds.",
)
def test_a_shard_field_edited_in_the_manifest_is_caught(
    sharded: tuple[Path, list[Path]],
) -> None:
    _, runs = sharded
    manifest_path = runs[0] / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["shard"]["index"] == 1
    manifest["shard"]["index"] = 2  # claim another part
    manifest_path.write_text(json.dumps(manifest, sort_keys=True, separators=(",", ":")))
    proc = run_cli("verify", runs[0])
    assert proc.returncode == 4, proc.stdout
    assert "manifest.json" in proc.stdout and "shard" in proc.stdout


CRASHING = f"""
import os, pathlib

def answer(text):
    if text == "q4" and not pathlib.Path(os.environ["SHARD_GO_ON"]).exists():
        os.kill(os.getpid(), 9)  # the machine dies mid-shard
    return "nope" if text == {WRONG!r} else text
"""


@pytest.mark.doc("docs/cli.md", "`assay resume` finishes it as the same shard")
def test_resume_finishes_a_killed_shard_as_the_same_shard(tmp_path: Path) -> None:
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(SAMPLES)]
    spec = unique_callable_spec(
        tmp_path / "spec", CRASHING, samples=samples, repetitions=REPETITIONS
    )
    go_on = tmp_path / "go-on"
    env = {"SHARD_GO_ON": str(go_on)}
    run = tmp_path / "shard"
    proc = run_cli("run", spec, "--shard", "2/3", "-o", run, "-j", "1", env=env)
    assert proc.returncode == -9, proc.stdout + proc.stderr
    assert json.loads((run / "manifest.json").read_text())["status"] == "running"
    unfinished = run_cli("verify", run)
    assert unfinished.returncode == 3, unfinished.stdout
    assert f"of {2 * REPETITIONS} trials finished" in unfinished.stdout  # its part, not the plan
    go_on.touch()
    proc = run_cli("resume", run, env=env)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "gate: inconclusive: shard 2/3 holds part of the plan" in proc.stdout
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["shard"] == {"index": 2, "count": 3, "trials": 2 * REPETITIONS}
    samples_run = sorted({str(t["sample_id"]) for t in _bundle_trials(run)})
    assert samples_run == ["s1", "s4"]
    assert run_cli("verify", run).returncode == 0


@pytest.mark.doc(
    "docs/cli.md",
    "its metrics, gate and reports are those of an unsharded run of the spec (the same "
    "trials, the same scores), and it exits as `run` does.",
)
def test_merged_no_regression_gate_pairs_every_shard_with_the_baseline(
    tmp_path: Path,
) -> None:
    gate = {"no_regression": {"margin": 0.5}}  # 7 samples can show that much
    spec = _spec(tmp_path / "spec", gate=gate)
    baseline = tmp_path / "baseline"
    assert run_cli("run", spec, "-o", baseline, "--baseline", baseline).returncode == 3
    whole = run_cli("run", spec, "-o", tmp_path / "whole", "--baseline", baseline)
    runs = _shards_with(tmp_path, spec, 2, "--baseline", baseline)
    merged = tmp_path / "merged"
    proc = run_cli("merge", *runs, "-o", merged, "--baseline", baseline)
    assert proc.returncode == whole.returncode == 0, proc.stdout + proc.stderr + whole.stdout
    ours = json.loads((merged / "report.json").read_text())["gate"]
    theirs = json.loads((tmp_path / "whole" / "report.json").read_text())["gate"]
    assert ours["status"] == theirs["status"] == "passed"
    assert ours["targets"] == theirs["targets"]
    assert f"over {SAMPLES} paired sample(s)" in proc.stdout + str(ours["targets"])
    assert run_cli("gate", merged, "--baseline", baseline).returncode == 0


def _shards_with(tmp_path: Path, spec: Path, count: int, *options: object) -> list[Path]:
    runs = []
    for index in range(1, count + 1):
        run = tmp_path / f"shard-{index}"
        proc = run_cli("run", spec, "--shard", f"{index}/{count}", "-o", run, *options)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        runs.append(run)
    return runs


@pytest.mark.doc("docs/evidence.md", "Its `plan.jsonl` is compacted as a sealed run's is")
def test_a_merged_runs_plan_is_compacted_as_a_runs_and_verifies(
    tmp_path: Path, sharded: tuple[Path, list[Path]]
) -> None:
    """Its plan is the merged run's one big file: compacted at seal like a run's (the
    threshold lowered to one byte), its digest still over the plain bytes."""
    _, runs = sharded
    merged = tmp_path / "merged"
    proc = run_cli("merge", *runs, "-o", merged, env={"ASSAY_COMPACT_BYTES": "1"})
    assert proc.returncode == 1, proc.stdout + proc.stderr  # q3 is answered wrongly
    assert (merged / "plan.jsonl.zst").is_file()
    assert not (merged / "plan.jsonl").exists()
    assert run_cli("verify", merged).returncode == 0
    assert run_cli("score", merged).returncode == 0
    assert run_cli("gate", merged).returncode == 1
    frames = merged / "plan.jsonl.zst"
    data = bytearray(frames.read_bytes())
    data[len(data) // 3] ^= 0x40
    frames.write_bytes(bytes(data))
    proc = run_cli("verify", merged)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "plan.jsonl: " in proc.stdout, proc.stdout
