"""An attacker's forgery of a run, as the issue describes it: only json, hashlib and the
standard library, no assay code, written from docs/evidence.md alone.

    python forge_run.py RUN

Finds a trial whose score failed, re-points it at the output of another target's trial of
the same sample, flips its score to that trial's verdict, re-chains the event log and
re-digests bundles, scores, match events, metrics, gate, reports, indexes and manifest.
It cannot re-sign: attestation.dsse.json is left as it was.
"""

import hashlib
import json
import sys
from pathlib import Path


def sha(data):
    return hashlib.sha256(data).hexdigest()


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def compact(value):  # event records keep their field order
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def lines(path):
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def choose_victim(run):
    """(victim bundle, donor bundle, donor score): a failed trial and a passed trial of
    another target on the same sample."""
    bundles = {b["trial"]["trial_id"]: b for b in lines(run / "bundles.jsonl")}
    scores = lines(run / "scores.jsonl")
    by_trial = {s["trial_id"]: s for s in scores}
    for score in scores:
        if score["status"] != "failed":
            continue
        victim = bundles[score["trial_id"]]
        for other in scores:
            donor = bundles[other["trial_id"]]
            same_sample = donor["trial"]["sample_id"] == victim["trial"]["sample_id"]
            if other["status"] == "passed" and same_sample:
                return victim, donor, by_trial[other["trial_id"]]
    raise SystemExit("nothing to forge")


def forge_bundle(bundle, renamed, victim, donor):
    bundle = dict(bundle)
    bundle["events"] = [[n, renamed.get(h, h)] for n, h in bundle["events"]]
    if bundle["trial"]["trial_id"] == victim["trial"]["trial_id"]:
        output = donor["observation"]["output"]
        bundle["observation"] = {**bundle["observation"], "output": output}
        bundle["artifacts"] = {**bundle["artifacts"], "output": output}
    bundle.pop("digest")
    bundle["digest"] = "sha256:" + sha(canonical(bundle))
    return bundle


def forge_score(score, bundle, victim, donor_score):
    score = dict(score, bundle_digest=bundle["digest"])
    if score["trial_id"] == victim["trial"]["trial_id"]:
        for field in ("status", "value", "reason", "answer"):
            score[field] = donor_score[field]
    return score


def forge_metrics(data, victim, donor):
    for estimate in data["estimates"]:
        if estimate["target_id"] == victim["trial"]["target_id"]:
            better = next(
                e for e in data["estimates"] if e["target_id"] == donor["trial"]["target_id"]
            )
            for key in ("value", "passed", "statuses", "ci_low", "ci_high", "stderr"):
                estimate[key] = better[key]
    return data


def forge_report(report, victim, donor):
    gate = report["gate"]
    loser, winner = victim["trial"]["target_id"], donor["trial"]["target_id"]
    good = next(t for t in gate["targets"] if t["target_id"] == winner)
    for target in gate["targets"]:
        if target["target_id"] == loser:
            fields = ("status", "numbers", "pass_rates", "reasons")
            target.update({field: good[field] for field in fields})
    gate["status"] = "passed"
    gate["reasons"] = [r.replace(winner, loser) for r in gate["reasons"] if r.startswith(winner)]
    gate["reasons"] += [r.replace(loser, winner) for r in gate["reasons"]]
    return report


def forge(run):
    victim, donor, donor_score = choose_victim(run)
    bundles = {b["trial"]["trial_id"]: b for b in lines(run / "bundles.jsonl")}
    scores = {s["score_id"]: s for s in lines(run / "scores.jsonl")}
    new_bundles, new_scores, score_hash = {}, {}, {}
    renamed = {}  # old event hash -> new
    head = "0" * 64
    out = []
    raw = (run / "events.jsonl").read_bytes().splitlines()
    events = [json.loads(line) for line in raw]
    for old_line, event in zip(raw[:-1], events[:-1], strict=True):  # last: rebuilt below
        old_hash = sha(old_line)
        data, trial = event["data"], event["trial"]
        # a batch line ("events") lists the trial's events up to its bundle
        inner = data["events"] if event["type"] == "events" else [event]
        for each in inner:
            if trial == victim["trial"]["trial_id"] and each["type"] == "sampling":
                each["data"]["output"] = donor["observation"]["output"]
        if event["type"] == "match":  # the bundle is sealed by now: forge it and its score
            bundle = forge_bundle(bundles[trial], renamed, victim, donor)
            new_bundles[trial] = bundle
            score_id = trial + "/" + data["scorer"]
            score = forge_score(scores[score_id], bundle, victim, donor_score)
            line = canonical(score)
            new_scores[score_id], score_hash[score_id] = line, sha(line)
            data.update(bundle=bundle["digest"], record=sha(line), status=score["status"])
        if event["type"] == "metrics":
            forge_metrics(data, victim, donor)
        if event["type"] == "gate":
            data["status"] = "passed"
        event["prev"] = head
        line = compact(event)
        head = sha(line)
        renamed[old_hash] = head
        out.append(line)
    # bundles.jsonl, scores.jsonl and bundles.idx, in their original order
    bundle_lines, offsets, offset = [], [], 0
    for trial in [b["trial"]["trial_id"] for b in lines(run / "bundles.jsonl")]:
        line = (
            canonical(
                new_bundles.get(trial) or forge_bundle(bundles[trial], renamed, victim, donor)
            )
            + b"\n"
        )
        offsets.append((bytes.fromhex(trial[2:]), offset))
        offset += len(line)
        bundle_lines.append(line)
    (run / "bundles.jsonl").write_bytes(b"".join(bundle_lines))
    (run / "scores.jsonl").write_bytes(
        b"".join(new_scores[s["score_id"]] + b"\n" for s in lines(run / "scores.jsonl"))
    )
    (run / "bundles.idx").write_bytes(
        b"".join(k + o.to_bytes(8, "big") for k, o in sorted(offsets))
    )
    report = forge_report(json.loads((run / "report.json").read_bytes()), victim, donor)
    (run / "report.json").write_bytes(json.dumps(report, indent=2).encode())
    for name in ("report.md", "report.html"):
        text = (run / name).read_text(encoding="utf-8")
        (run / name).write_text(text.replace("failed", "passed"), encoding="utf-8")
    # the manifest, repeated by a new last event whose hash it holds
    manifest = json.loads((run / "manifest.json").read_bytes())
    manifest["files"] = {
        name: "sha256:" + sha((run / name).read_bytes()) for name in manifest["files"]
    }
    last = events[-1]
    last["prev"] = head
    last["data"] = {
        k: v for k, v in manifest.items() if k not in ("schema", "events", "events_head")
    }
    line = compact(last)
    out.append(line)
    (run / "events.jsonl").write_bytes(b"".join(each + b"\n" for each in out))
    manifest["events_head"] = sha(line)
    (run / "manifest.json").write_bytes(canonical(manifest))
    print(victim["trial"]["trial_id"])


if __name__ == "__main__":
    forge(Path(sys.argv[1]))
