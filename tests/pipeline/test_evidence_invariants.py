"""Invariants 4, 5 and 6 on a real run: the event log, bundles, scores and hidden fields.

One run mixes every kind of trial (answered, retried, wrong, crashed, blocked) and a
target that records its own ``extra`` events; the tests read its run directory back the
way an auditor would, recomputing every hash themselves.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from assay.evidence import bundle_digest, verify_run
from assay.evidence._log import events_in
from tests.helpers import (
    FAST_RETRY,
    REPO,
    SHIPPING,
    artifact_bytes,
    bundles_by_sample,
    log_events,
    read_jsonl,
    run_cli,
    run_spec_at,
    simple_spec,
    unique_callable_spec,
    wait_for,
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


@pytest.mark.doc(
    "docs/evidence.md",
    "`prev` chains each record to the bytes of the one before (64 zeros for the first);",
    "`n` numbers events within their trial from 1; `parent` names an earlier `n` of the same "
    "trial (only `n = 1` has none).",
    "Run-level events have `trial: null`.",
)
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
        for each in events_in(event):  # a batch line's events, numbered as lines are
            trial, n, parent = each["trial"], each["n"], each["parent"]
            seen = numbers.setdefault(trial, [])
            assert n == len(seen) + 1, f"trial {trial}: event {n} after {seen[-1:]}"
            if n == 1:
                assert parent is None
            else:
                assert parent in seen, f"trial {trial}: parent {parent} of {n} does not exist"
            seen.append(n)
            kinds.setdefault(trial, {})[n] = each["type"]
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


# Every event type docs/evidence.md lists ("Types: ...").
DOCUMENTED_TYPES = {
    "run_started",
    "run_resumed",
    "trial_started",
    "attempt_started",
    "sampling",
    "model_call_failed",
    "error",
    "postprocessor",
    "tool_call",
    "tool_result",
    "approval",
    "attempt_finished",
    "trial_finished",
    "match",
    "score_sampling",
    "metrics",
    "gate",
    "extra",
    "run_finished",
    "run_interrupted",
}
TYPES_RULE = (
    "- Types: `run_started` / `run_resumed`, `trial_started`, `attempt_started`, `sampling`"
)


def test_the_documented_types_are_the_ones_listed_in_the_doc() -> None:
    """The set above is the doc's list: each type is named there, in backticks."""
    text = " ".join((REPO / "docs" / "evidence.md").read_text(encoding="utf-8").split())
    item = text[text.index(TYPES_RULE) :].split(" ## ")[0]
    assert [t for t in sorted(DOCUMENTED_TYPES) if f"`{t}`" not in item] == []


@pytest.mark.doc(
    "docs/evidence.md",
    "- Types: `run_started` / `run_resumed`, `trial_started`, `attempt_started`, `sampling`",
)
def test_every_event_has_a_documented_type_and_the_last_binds_the_manifest(
    mixed_run: Path,
) -> None:
    lines = (mixed_run / "events.jsonl").read_bytes().splitlines()
    records = [json.loads(line) for line in lines]
    assert {record["type"] for record in records} - {"events"} <= DOCUMENTED_TYPES
    events = [event for record in records for event in events_in(record)]
    types = {event["type"] for event in events}
    assert types <= DOCUMENTED_TYPES, types - DOCUMENTED_TYPES
    # this run has retries, a crash, a blocked trial and the target's own events
    assert {"error", "extra", "sampling", "match", "metrics", "gate"} <= types
    for event in events:
        if event["type"] == "sampling":  # a target call: its artifacts and outcome
            data = event["data"]
            assert {"prompt", "outcome"} <= set(data), data
            assert data["outcome"] != "answered" or "output" in data, data
        if event["type"] == "match":  # scorer, status, bundle digest, score line's hash
            assert set(event["data"]) == {"scorer", "status", "bundle", "record"}
    last = records[-1]
    assert last["type"] == "run_finished"
    assert [e["type"] for e in events].count("run_finished") == 1
    manifest = json.loads((mixed_run / "manifest.json").read_bytes())
    assert manifest["events_head"] == hashlib.sha256(lines[-1]).hexdigest()
    repeated = {k: v for k, v in manifest.items() if k not in ("schema", "events", "events_head")}
    assert last["data"] == repeated


def test_attempt_events_nest_under_their_attempt(mixed_run: Path) -> None:
    events = log_events(mixed_run)
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


@pytest.mark.doc(
    "docs/evidence.md",
    "`digest` is the SHA-256 of the canonical JSON of every other field.",
    "The events listed are all of the trial's events except `match`",
)
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
        # recomputed here: canonical JSON (keys sorted, compact, UTF-8) of the rest
        rest = {key: value for key, value in bundle.items() if key != "digest"}
        canonical = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert bundle["digest"] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
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
        for e in log_events(mixed_run)
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
    "docs/evidence.md", "Scorers read only `observation` and the output artifact's bytes."
)
def test_scorers_read_only_the_observation_and_the_output(
    mixed_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``assay score`` over the mixed run, watched: the only artifacts it reads are the
    bundles' outputs (never a sample, a prompt or stderr), and each scorer is handed the
    bundle's ``observation`` with the output decoded, nothing else."""
    from assay.evidence import ArtifactStore
    from assay.pipeline import _judge, rescore_run

    run = tmp_path / "run"
    shutil.copytree(mixed_run, run)
    read: list[str] = []
    seen: list[object] = []
    real_get, real_score = ArtifactStore.get, _judge.score_observation

    def get(store: ArtifactStore, sha: str) -> bytes:
        read.append(sha)
        return real_get(store, sha)

    async def score(scorer: object, observation: object) -> object:
        seen.append(observation)
        return await real_score(scorer, observation)  # type: ignore[arg-type]

    monkeypatch.setattr(ArtifactStore, "get", get)
    monkeypatch.setattr(_judge, "score_observation", score)
    rescored = rescore_run(run)
    assert rescored.differing == []
    bundles = read_jsonl(run / "bundles.jsonl")
    outputs = {b["observation"]["output"] for b in bundles if b["observation"].get("output")}
    assert set(read) == outputs
    expected = []
    for bundle in bundles:
        seen_by_scorer = dict(bundle["observation"])
        sha = seen_by_scorer.pop("output", None)
        media = seen_by_scorer.pop("media", None)
        value = None  # a product failure's output is not judged, only its failure
        if sha and seen_by_scorer["outcome"] in ("answered", "error"):
            value = artifact_bytes(run, sha).decode()
            value = json.loads(value) if media == "application/json" else value
        expected += [
            (
                seen_by_scorer["expected"],
                seen_by_scorer["outcome"],
                value,
                seen_by_scorer.get("failure"),
            )
        ] * 2  # two scorers
    got = [(o.expected, o.outcome, o.output, o.failure) for o in seen]  # type: ignore[attr-defined]
    assert sorted(map(repr, got)) == sorted(map(repr, expected))


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


@pytest.mark.doc(
    "docs/spec.md",
    "`hidden_fields` names keys (e.g. `customer`) removed, at any depth, from the sample as "
    "it is recorded",
    "Targets still receive them, since they may need them to answer",
)
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


@pytest.mark.doc(
    "docs/spec.md",
    "Targets still receive them, since they may need them to answer; what a target *outputs* "
    "is evidence and is recorded as produced, so a target that repeats a hidden value puts "
    "it in its output artifact (and scorer reasons that quote the output).",
)
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
import pathlib
import time

import assay

STARTED, TRIED, MANIFEST = (pathlib.Path(p) for p in %r)


def sealed():
    return MANIFEST.exists() and b'"status":"complete"' in MANIFEST.read_bytes()


def answer(text):
    (STARTED / text).touch()
    n = int(text[1:])
    # even calls wake once the next trial's call began (if it ever does), the others
    # once the run is sealed: each long after its own trial timed out
    woken = (STARTED / f"q{n + 1}").exists if n %% 2 == 0 else (lambda: False)
    deadline = time.monotonic() + 60  # bounded, should the run never be sealed
    while not (woken() or sealed()) and time.monotonic() < deadline:
        time.sleep(0.005)
    try:
        assay.record_event("extra", {"late": text})
    finally:  # the test waits for every abandoned thread to have tried
        (TRIED / text).touch()
    return text
"""


def test_a_timed_out_sync_callable_cannot_write_into_a_sealed_trial(tmp_path: Path) -> None:
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(8)]
    started, tried, out = tmp_path / "started", tmp_path / "tried", tmp_path / "run"
    started.mkdir()
    tried.mkdir()
    paths = (str(started), str(tried), str(out / "manifest.json"))
    spec = unique_callable_spec(
        tmp_path / "spec",
        LATE % (paths,),
        samples=samples,
        # long enough for a loaded machine to start the worker thread (a call timed out
        # before its thread picked it up never runs); the calls outlive it regardless
        target={"timeout": 0.5},
        retry={"max_attempts": 1, "initial_backoff": 0.01, "max_backoff": 0.02},
    )
    outcome = run_spec_at(spec, out, max_concurrency=1)
    assert outcome.gate.status == "inconclusive"  # every call timed out
    # every call that began has woken and tried to record its late event
    assert wait_for(lambda: _names(tried) == _names(started)), (_names(started), _names(tried))
    assert _names(started), "no call began: the run tested nothing"
    result = verify_run(out)
    assert result.ok, result.problems


def _names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())
