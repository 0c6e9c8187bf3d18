"""HTTP targets against a real server on 127.0.0.1: answers, retries, refusals, secrets."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from assay.evidence import verify_run
from tests.helpers import read_jsonl, run_spec_at, write_dataset, write_spec

SECRET = "sk-test-do-not-store-0123456789"


class Script:
    """What the server answers, per sample id, attempt by attempt."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.order: list[str] = []  # sample ids in the order their requests arrived
        self.headers: list[str] = []
        self.plans: dict[str, list[tuple[int, dict[str, str], bytes]]] = {}


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            sample = str(body["id"])
            script.headers.append(self.headers.get("authorization", ""))
            attempt = script.calls[sample]
            script.calls[sample] += 1
            script.order.append(sample)
            plan = script.plans.get(sample, [])
            if attempt < len(plan):
                status, headers, payload = plan[attempt]
            else:
                status, headers = 200, {}
                payload = json.dumps({"answer": body["input"]["q"] * 2}).encode()
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/answer", script
    finally:
        httpd.shutdown()
        httpd.server_close()


def _spec(folder: Path, url: str, attempts: int = 4) -> Path:
    folder.mkdir()
    samples = [{"id": f"s{i}", "input": {"q": i}, "expected": {"answer": i * 2}} for i in range(4)]
    write_dataset(folder, samples)
    return write_spec(
        folder,
        {
            "evaluation": "http",
            "dataset": "data.jsonl",
            "targets": [
                {
                    "id": "api",
                    "url": url,
                    "timeout": 5,
                    "headers_from_env": {"Authorization": "ASSAY_TEST_TOKEN"},
                }
            ],
            "scorers": [{"id": "answer", "type": "field_match", "field": "answer"}],
            "retry": {"max_attempts": attempts, "initial_backoff": 0.01, "max_backoff": 0.02},
            "gate": {"minimum": 1.0},
        },
    )


@pytest.mark.doc(
    "docs/spec.md",
    "It has no field for a secret: targets read credentials from the environment when they run.",
    "Credentials are read from the environment when the call is made (`headers_from_env`), "
    "so they never enter the spec or the evidence.",
    "408, 429 (honouring `Retry-After`), 5xx, timeouts and connection failures are "
    "infrastructure failures (retried)",
)
def test_infrastructure_answers_are_retried_and_recorded(
    server: tuple[str, Script], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = server
    script.plans["s1"] = [(429, {"Retry-After": "0"}, b"slow down"), (503, {}, b"busy")]
    script.plans["s2"] = [(500, {}, b"oops")]
    script.plans["s3"] = [(408, {}, b"request timeout"), (502, {}, b"bad gateway")]
    monkeypatch.setenv("ASSAY_TEST_TOKEN", SECRET)
    out = tmp_path / "run"
    outcome = run_spec_at(_spec(tmp_path / "spec", url), out)
    assert outcome.gate.status == "passed"
    assert script.calls == Counter({"s0": 1, "s1": 3, "s2": 2, "s3": 3})
    attempts = {
        b["trial"]["sample_id"]: [a["reason"] or a["status"] for a in b["attempts"]]
        for b in read_jsonl(out / "bundles.jsonl")
    }
    assert attempts["s1"] == ["rate_limited", "http_503", "succeeded"]
    assert attempts["s2"] == ["http_500", "succeeded"]
    assert attempts["s3"] == ["http_408", "http_502", "succeeded"]
    assert verify_run(out).ok
    assert set(script.headers) == {SECRET}  # the key was sent ...
    for path in out.rglob("*"):  # ... and written nowhere
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_a_trial_waiting_out_retry_after_lets_the_next_one_run(
    server: tuple[str, Script], tmp_path: Path
) -> None:
    """One trial at a time (-j 1): s0 is told to come back in 2 s; meanwhile the other
    three run, and s0's second attempt waits exactly what the server asked."""
    url, script = server
    script.plans["s0"] = [(429, {"Retry-After": "2"}, b"slow down")]
    out = tmp_path / "run"
    outcome = run_spec_at(_spec(tmp_path / "spec", url), out, max_concurrency=1)
    assert outcome.gate.status == "passed"
    assert script.order == ["s0", "s1", "s2", "s3", "s0"]
    bundles = {b["trial"]["sample_id"]: b for b in read_jsonl(out / "bundles.jsonl")}
    assert [a["status"] for a in bundles["s0"]["attempts"]] == ["infra_failed", "succeeded"]
    assert all(len(bundles[s]["attempts"]) == 1 for s in ("s1", "s2", "s3"))
    assert verify_run(out).ok


@pytest.mark.doc(
    "docs/spec.md",
    "another 4xx or a body that is not JSON is a product failure.",
)
def test_a_refusal_is_a_product_failure_and_not_retried(
    server: tuple[str, Script], tmp_path: Path
) -> None:
    url, script = server
    script.plans["s0"] = [(400, {}, b'{"error": "bad input"}')]
    script.plans["s3"] = [(200, {}, b"not json")]
    out = tmp_path / "run"
    outcome = run_spec_at(_spec(tmp_path / "spec", url), out)
    assert script.calls["s0"] == 1 and script.calls["s3"] == 1
    bundles = {b["trial"]["sample_id"]: b for b in read_jsonl(out / "bundles.jsonl")}
    assert bundles["s0"]["observation"]["failure"] == "HTTP 400"
    assert "not JSON" in bundles["s3"]["observation"]["failure"]
    assert outcome.gate.status == "failed"


@pytest.mark.doc(
    "docs/spec.md",
    "timeouts and connection failures are infrastructure failures (retried)",
)
def test_an_unreachable_endpoint_blocks_the_trials(tmp_path: Path) -> None:
    out = tmp_path / "run"
    outcome = run_spec_at(_spec(tmp_path / "spec", "http://127.0.0.1:9/none", attempts=2), out)
    assert {b["state"] for b in read_jsonl(out / "bundles.jsonl")} == {"blocked"}
    assert outcome.gate.status == "inconclusive"
