"""Invariants 4, 5 and 6 on a real run: the event log, bundles, scores and hidden fields.

One run mixes every kind of trial (answered, retried, wrong, crashed, blocked) and a
target that records its own ``extra`` events; the tests read its run directory back the
way an auditor would, recomputing every hash themselves.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest

from assay.evidence import bundle_digest, verify_run
from tests.helpers import (
    FAST_RETRY,
    SHIPPING,
    artifact_bytes,
    bundles_by_sample,
    read_jsonl,
    run_cli,
    run_spec_at,
    simple_spec,
    unique_callable_spec,
)

GENESIS = "0" * 64

MIXED = """
import assay

calls = {}


def answer(text):
    calls[text] = calls.get(text, 0) + 1
    assay.record_event("extra", {"call": calls[text], "text": text})
    if text == "flaky" and calls[text] == 1:
        raise ConnectionError("reset by peer")
    if text == "down":
        raise ConnectionError("refused")
    if text == "crash":
        raise ValueError("boom")
    if text == "wrong":
        return "nope"
    return text
"""

KINDS = ["ok", "flaky", "wrong", "crash", "down"]


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mixed")
    samples = [{"id": kind, "input": kind, "expected": kind} for kind in KINDS]
    scorers = [{"id": "exact", "type": "exact"}, {"id": "has", "type": "includes"}]
    spec = unique_callable_spec(
        folder / "spec", MIXED, samples=samples, retry=FAST_RETRY, scorers=scorers
    )
    out = folder / "run"
    run_spec_at(spec, out, max_concurrency=5)
    return out


def test_the_mixed_run_verifies_and_has_every_kind_of_trial(mixed_run: Path) -> None:
    assert verify_run(mixed_run).ok
    bundles = bundles_by_sample(mixed_run)
    assert {k: b["state"] for k, b in bundles.items()} == {
        "ok": "completed",
        "flaky": "completed",
        "wrong": "completed",
        "crash": "completed",
        "down": "blocked",
    }
    assert len(bundles["flaky"]["attempts"]) == 2
    assert bundles["crash"]["observation"]["outcome"] == "product_failure"


def test_events_are_chained_numbered_and_parented(mixed_run: Path) -> None:
    lines = (mixed_run / "events.jsonl").read_bytes().splitlines()
    manifest = json.loads((mixed_run / "manifest.json").read_text())
    prev = GENESIS
    numbers: dict[str | None, list[int]] = {}
    kinds: dict[str | None, dict[int, str]] = {}
    for seq, line in enumerate(lines):
        event = json.loads(line)
        assert event["seq"] == seq
        assert event["prev"] == prev, f"line {seq + 1} is not chained to the one before"
        prev = hashlib.sha256(line).hexdigest()
        trial, n, parent = event["trial"], event["n"], event["parent"]
        seen = numbers.setdefault(trial, [])
        assert n == len(seen) + 1, f"trial {trial}: event {n} after {seen[-1:]}"
        if n == 1:
            assert parent is None
        else:
            assert parent in seen, f"trial {trial}: parent {parent} of {n} does not exist"
        seen.append(n)
        kinds.setdefault(trial, {})[n] = event["type"]
    assert prev == manifest["events_head"]
    assert len(lines) == manifest["events"]
    run_level = list(kinds[None].values())
    assert run_level[0] == "run_started"
    assert {"metrics", "gate"} <= set(run_level)
    trials = {t: k for t, k in kinds.items() if t is not None}
    assert len(trials) == len(KINDS)
    for per_trial in trials.values():
        assert per_trial[1] == "trial_started"
        assert "trial_finished" in per_trial.values()


def test_attempt_events_nest_under_their_attempt(mixed_run: Path) -> None:
    events = read_jsonl(mixed_run / "events.jsonl")
    by_trial: dict[str, dict[int, dict[str, object]]] = {}
    for event in events:
        if event["trial"]:
            by_trial.setdefault(event["trial"], {})[event["n"]] = event
    for per_trial in by_trial.values():
        for event in per_trial.values():
            if event["type"] in ("sampling", "error", "attempt_finished", "extra"):
                parent = per_trial[event["parent"]]
                assert parent["type"] == "attempt_started", event
                assert parent["data"]["attempt"] == event["data"].get(
                    "attempt", parent["data"]["attempt"]
                )
            if event["type"] in ("attempt_started", "trial_finished", "match"):
                assert event["parent"] == 1


def test_bundle_digest_covers_its_events_and_artifacts(mixed_run: Path) -> None:
    lines = (mixed_run / "events.jsonl").read_bytes().splitlines()
    logged: dict[str, list[list[object]]] = {}
    for line in lines:
        event = json.loads(line)
        if event["trial"] and event["type"] != "match":
            logged.setdefault(event["trial"], []).append(
                [event["n"], hashlib.sha256(line).hexdigest()]
            )
    for bundle in read_jsonl(mixed_run / "bundles.jsonl"):
        tid = bundle["trial"]["trial_id"]
        assert bundle_digest(bundle) == bundle["digest"]
        assert bundle["events"] == logged[tid]
        for sha in bundle["artifacts"].values():
            assert hashlib.sha256(artifact_bytes(mixed_run, sha)).hexdigest() == sha
        observation = bundle["observation"]
        if bundle["state"] == "completed":
            assert observation["output"] == bundle["artifacts"]["output"]
            canonical = bundle["canonical_attempt"]
            assert canonical["attempt"] == len(bundle["attempts"])
            assert bundle["attempts"][-1]["status"] == "succeeded"
        else:
            assert bundle["canonical_attempt"] is None
        # each bound part changes the digest
        for key, value in [
            ("events", bundle["events"][:-1]),
            ("artifacts", {**bundle["artifacts"], "sample": "0" * 64}),
            ("observation", {**observation, "expected": "other"}),
            ("state", "invalid"),
        ]:
            assert bundle_digest({**bundle, key: value}) != bundle["digest"], key


def test_score_records_carry_bundle_digest_and_scorer_id(mixed_run: Path) -> None:
    bundles = {b["trial"]["trial_id"]: b for b in read_jsonl(mixed_run / "bundles.jsonl")}
    scores = read_jsonl(mixed_run / "scores.jsonl")
    assert len(scores) == 2 * len(KINDS)
    assert {(s["trial_id"], s["scorer_id"]) for s in scores} == {
        (tid, scorer) for tid in bundles for scorer in ("exact", "has")
    }
    matches = {
        (e["trial"], e["data"]["scorer"]): e["data"]
        for e in read_jsonl(mixed_run / "events.jsonl")
        if e["type"] == "match"
    }
    for score in scores:
        bundle = bundles[score["trial_id"]]
        assert score["bundle_digest"] == bundle["digest"]
        assert score["score_id"] == f"{score['trial_id']}/{score['scorer_id']}"
        assert score["sample_id"] == bundle["trial"]["sample_id"]
        match = matches[(score["trial_id"], score["scorer_id"])]
        assert (match["bundle"], match["status"]) == (bundle["digest"], score["status"])
    by_sample = {(s["sample_id"], s["scorer_id"]): s["status"] for s in scores}
    assert by_sample[("ok", "exact")] == "passed"
    assert by_sample[("flaky", "exact")] == "passed"
    assert by_sample[("wrong", "exact")] == "failed"
    assert by_sample[("crash", "exact")] == "failed"
    assert by_sample[("down", "exact")] == "unscorable"


@pytest.mark.doc(
    "docs/cli.md",
    "`score` and `gate` never call a target: they read only the run directory.",
)
def test_score_and_gate_never_call_a_target(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(SHIPPING, spec)
    out = tmp_path / "run"
    run_spec_at(spec / "eval.yaml", out)
    shutil.rmtree(spec)  # no target left to call
    score = run_cli("score", out)
    assert score.returncode == 0, score.stdout + score.stderr
    gate = run_cli("gate", out)
    assert gate.returncode == 1, gate.stdout + gate.stderr  # buggy-release still fails


# --------------------------------------------------------------------------- hidden fields

SECRETS = ["Zed Q. Hiddenname", "S3CR3T-EXPECTED", "S3CR3T-META", "S3CR3T-NESTED"]


def hidden_samples() -> list[dict[str, object]]:
    return [
        {
            "id": f"order-{amount}",
            "input": {"amount": amount, "customer": SECRETS[0], "items": [{"secret": SECRETS[3]}]},
            "expected": {"fee": 0 if amount >= 100 else 10, "secret": SECRETS[1]},
            "metadata": {"secret": SECRETS[2], "region": "eu"},
        }
        for amount in (99, 100, 150)
    ]


def leaked(run: Path) -> list[str]:
    found = []
    for path in run.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.name}: {s}" for s in SECRETS if s.encode() in data]
    return found


def test_hidden_fields_never_reach_the_run_directory(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    folder.mkdir()
    shutil.copy(SHIPPING / "fixed_release.py", folder / "fixed_release.py")
    targets = [{"id": "fixed", "script": "fixed_release.py"}]
    scorers = [{"id": "fee", "type": "field_match", "field": "fee"}]
    spec = simple_spec(
        folder,
        samples=hidden_samples(),
        targets=targets,
        scorers=scorers,
        hidden_fields=["customer", "secret"],
    )
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    assert outcome.gate.status == "passed"  # the target still saw what it needed
    assert leaked(out) == []
    sample = json.loads(
        artifact_bytes(out, read_jsonl(out / "bundles.jsonl")[0]["artifacts"]["sample"])
    )
    assert "customer" not in sample["input"] and sample["metadata"] == {"region": "eu"}


def test_hidden_fields_are_dropped_from_the_sample_but_an_echoed_output_is_evidence(
    tmp_path: Path,
) -> None:
    """Documented in docs/spec.md: hidden fields are removed from the recorded *sample*;
    a target still receives them (it may need them to answer), and whatever it outputs is
    evidence, recorded as produced. So an echoing target's output (and scorer reasons that
    quote it) carry the values, while the sample artifact and the bundle never do."""
    spec = unique_callable_spec(
        tmp_path / "spec",
        "def answer(order):\n    return order\n",
        samples=hidden_samples(),
        hidden_fields=["customer", "secret"],
    )
    out = tmp_path / "run"
    run_spec_at(spec, out)
    outputs = set()
    for bundle in bundles_by_sample(out).values():
        sample = json.loads(artifact_bytes(out, bundle["artifacts"]["sample"]))
        assert not any(secret in json.dumps(sample) for secret in SECRETS)
        assert not any(secret in json.dumps(bundle) for secret in SECRETS)
        outputs.add(bundle["artifacts"]["output"])
    from assay.evidence._pack import PackError, pack_names, scan_pack

    leaking_files = {p.split(":")[0] for p in leaked(out)} - {"scores.jsonl", *REPORT_NAMES}
    packs = set(pack_names(out / "artifacts"))
    assert leaking_files <= outputs | packs, leaking_files
    for name in packs:
        for item in scan_pack(out / "artifacts" / name):
            assert not isinstance(item, PackError)
            record, data = item
            if any(secret.encode() in data for secret in SECRETS):
                assert record.sha256 in outputs, record


REPORT_NAMES = {"report.json", "report.md", "report.html"}


# --------------------------------------------------------------------------- late events

LATE = """
import time

import assay


def answer(text):
    time.sleep(0.15)
    assay.record_event("extra", {"late": text})
    return text
"""


def test_a_timed_out_sync_callable_cannot_write_into_a_sealed_trial(tmp_path: Path) -> None:
    # Eight trials of at least 0.05 s each: the first threads wake while later trials run.
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(8)]
    spec = unique_callable_spec(
        tmp_path / "spec",
        LATE,
        samples=samples,
        target={"timeout": 0.05},
        retry={"max_attempts": 1, "initial_backoff": 0.01, "max_backoff": 0.02},
    )
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out, max_concurrency=1)
    time.sleep(0.3)  # let the abandoned threads finish
    assert outcome.gate.status == "inconclusive"
    result = verify_run(out)
    assert result.ok, result.problems
