"""Flaky infrastructure: targets that fail about 30% of attempts, run by the real CLI.

A subprocess target and an HTTP target follow a fixed script per (sample, attempt):
infrastructure failures (the program sleeps past its timeout, answers half a line and
hangs, closes stdout and hangs; the server times out, resets the connection, answers
429 with Retry-After, 500 or 503) before a product result (a right answer, a crash with
exit 3, text that is not JSON; HTTP 400, a 200 that is not JSON). The script counts
attempts per sample (a counter file per sample; the server counts requests), so the
evidence can be checked against what really happened:

- every trial completes within the retry budget; product failures are never retried;
- each attempt, and the reason of each failed one, is in the evidence;
- with a budget too small the trial is ``blocked`` and the gate ``inconclusive``;
- programs that cannot start at all (missing, not executable, not a program) are
  infrastructure failures, retried, and blocked at the end of the budget.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import log_events, read_jsonl, run_cli, write_dataset, write_module, write_spec

SAMPLES = 40
FAILURES_BEFORE = [0, 1, 0, 0, 2, 0, 0, 1, 0, 0]  # infra failures per sample, cycled
SCRIPT_INFRA = ["sleep", "partial", "closed"]
HTTP_INFRA = ["timeout", "reset", "429", "500", "503"]
REASON = {
    "sleep": "timeout",
    "partial": "timeout",
    "closed": "timeout",
    "timeout": "timeout",
    "reset": "connection",
    "429": "rate_limited",
    "500": "http_500",
    "503": "http_503",
}
RETRY_AFTER = 0.3


def schedule(infra_kinds: list[str], product: tuple[str, str]) -> dict[str, list[str]]:
    """Per sample: its infrastructure failures, then its one product result."""
    plan, kind = {}, 0
    for i in range(SAMPLES):
        actions = []
        for _ in range(FAILURES_BEFORE[i % len(FAILURES_BEFORE)]):
            actions.append(infra_kinds[kind % len(infra_kinds)])
            kind += 1
        if i % 7 == 3:
            actions.append(product[0])
        elif i % 11 == 5:
            actions.append(product[1])
        else:
            actions.append("ok")
        plan[f"s{i:02d}"] = actions
    return plan


SCRIPT_PLAN = schedule(SCRIPT_INFRA, ("crash", "garbage"))
HTTP_PLAN = schedule(HTTP_INFRA, ("400", "notjson"))
PRODUCT = {"crash", "garbage", "400", "notjson"}


def test_about_thirty_percent_of_attempts_fail_on_infrastructure() -> None:
    for plan in (SCRIPT_PLAN, HTTP_PLAN):
        attempts = sum(len(actions) for actions in plan.values())
        infra = sum(a in REASON for actions in plan.values() for a in actions)
        assert 0.25 <= infra / attempts <= 0.35, infra / attempts
        assert sum(a in PRODUCT for actions in plan.values() for a in actions) >= 8


FLAKY = """
import json
import os
import sys
import time

sample = json.load(sys.stdin)
counters, plan_file = sys.argv[1], sys.argv[2]
counter = os.path.join(counters, str(sample["id"]))
with open(counter, "ab") as handle:  # one byte per attempt
    handle.write(b".")
attempt = os.path.getsize(counter)
plan = json.load(open(plan_file))[str(sample["id"])]
action = plan[min(attempt, len(plan)) - 1]
if action == "sleep":
    time.sleep(60)
elif action == "partial":
    sys.stdout.write('{"answer": ')
    sys.stdout.flush()
    time.sleep(60)
elif action == "closed":
    os.close(1)
    time.sleep(60)
elif action == "crash":
    sys.stderr.write("crashed on purpose")
    sys.exit(3)
elif action == "garbage":
    sys.stdout.write("this is not JSON")
else:
    print(json.dumps({"answer": sample["input"]["q"]}))
"""


def _samples() -> list[dict[str, Any]]:
    return [
        {"id": f"s{i:02d}", "input": {"q": i}, "expected": {"answer": i}} for i in range(SAMPLES)
    ]


def _write_spec(folder: Path, targets: list[dict[str, Any]], attempts: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_dataset(folder, _samples())
    return write_spec(
        folder,
        {
            "evaluation": "flaky",
            "dataset": "data.jsonl",
            "targets": targets,
            "scorers": [{"id": "answer", "type": "field_match", "field": "answer"}],
            "gate": {"minimum": 0.0},
            "retry": {"max_attempts": attempts, "initial_backoff": 0.01, "max_backoff": 0.05},
        },
    )


def _script_target(folder: Path, counters: Path) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    write_module(folder, "flaky", FLAKY)
    (folder / "plan.json").write_text(json.dumps(SCRIPT_PLAN))
    counters.mkdir()
    args = [str(counters), str(folder / "plan.json")]
    # 2 s: eight programs starting at once on a loaded machine took up to 0.8 s to start
    # Python (1 s left little room); the sleeping and hanging ones cost it each
    return {"id": "script", "script": "flaky.py", "args": args, "timeout": 2.0}


class Server:
    """Counts requests per (path, sample) and answers by HTTP_PLAN."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()
        self.url = ""


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            sample = str(body["id"])
            with state.lock:
                state.calls[(self.path, sample)] += 1
                attempt = state.calls[(self.path, sample)]
            plan = HTTP_PLAN[sample]
            action = plan[min(attempt, len(plan)) - 1]
            if action == "timeout":
                time.sleep(2.5)  # past the target's 1 s
                return
            if action == "reset":  # RST instead of an answer
                linger = struct.pack("ii", 1, 0)
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                self.connection.close()
                return
            if action in ("429", "500", "503", "400"):
                headers = {"retry-after": str(RETRY_AFTER)} if action == "429" else {}
                self._answer(int(action), b'{"error": "try later"}', headers)
            elif action == "notjson":
                self._answer(200, b"<html>not JSON</html>")
            else:
                self._answer(200, json.dumps({"answer": body["input"]["q"]}).encode())

        def _answer(
            self, status: int, payload: bytes, headers: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    class Quiet(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: object, client_address: object) -> None:
            pass  # the resets and timeouts above are on purpose

    httpd = Quiet(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def _http_target(server: Server, path: str) -> dict[str, Any]:
    # 1 s: room for an answer from this process's server thread on a loaded machine
    return {"id": "http", "url": f"{server.url}{path}", "timeout": 1.0}


@pytest.fixture(scope="module")
def generous(tmp_path_factory: pytest.TempPathFactory, server: Server) -> tuple[Path, Path, Any]:
    """Both flaky targets with a budget of 6 attempts."""
    root = tmp_path_factory.mktemp("flaky")
    counters = root / "counters"
    targets = [_script_target(root / "spec", counters), _http_target(server, "/generous")]
    spec = _write_spec(root / "spec", targets, attempts=6)
    proc = run_cli("run", spec, "-o", root / "run", "-j", "8")
    return root / "run", counters, proc


def _bundles(run: Path, target: str) -> dict[str, dict[str, Any]]:
    return {
        b["trial"]["sample_id"]: b
        for b in read_jsonl(run / "bundles.jsonl")
        if b["trial"]["target_id"] == target
    }


def _events(run: Path) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for event in log_events(run):
        grouped.setdefault(event["trial"] or "", []).append(event)
    return grouped


def _calls(target: str, counters: Path, server: Server, path: str) -> dict[str, int]:
    if target == "script":
        return {f.name: f.stat().st_size for f in counters.iterdir()}
    return {sample: n for (where, sample), n in server.calls.items() if where == path}


def test_every_trial_completes_within_the_retry_budget(generous: tuple[Path, Path, Any]) -> None:
    run, _, proc = generous
    assert proc.returncode == 0, proc.stdout + proc.stderr  # gate passed: nothing blocked
    for target in ("script", "http"):
        bundles = _bundles(run, target)
        assert len(bundles) == SAMPLES
        assert {b["state"] for b in bundles.values()} == {"completed"}, target
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout


@pytest.mark.parametrize(("target", "plan"), [("script", SCRIPT_PLAN), ("http", HTTP_PLAN)])
def test_each_attempt_and_its_reason_is_in_the_evidence(
    generous: tuple[Path, Path, Any], server: Server, target: str, plan: dict[str, list[str]]
) -> None:
    run, counters, _ = generous
    calls = _calls(target, counters, server, "/generous")
    events = _events(run)
    for sample, bundle in _bundles(run, target).items():
        actions = plan[sample]
        infra = actions[:-1]
        assert calls[sample] == len(actions), (sample, calls[sample], actions)
        attempts = bundle["attempts"]
        assert [a["status"] for a in attempts] == ["infra_failed"] * len(infra) + ["succeeded"]
        assert [a["reason"] for a in attempts] == [REASON[a] for a in infra] + [None]
        mine = events[bundle["trial"]["trial_id"]]
        started = [e["data"]["attempt"] for e in mine if e["type"] == "attempt_started"]
        assert started == list(range(1, len(actions) + 1))
        errors = [e["data"] for e in mine if e["type"] == "error"]
        assert [(e["kind"], e["reason"]) for e in errors] == [
            ("infrastructure", REASON[a]) for a in infra
        ]
        outcome = bundle["observation"]["outcome"]
        assert outcome == ("product_failure" if actions[-1] in PRODUCT else "answered"), sample


@pytest.mark.doc(
    "docs/spec.md",
    "a non-zero exit, non-JSON output or too much output are product failures (recorded, "
    "scored `failed`, never retried).",
)
def test_product_failures_are_never_retried(
    generous: tuple[Path, Path, Any], server: Server
) -> None:
    run, counters, _ = generous
    checked = 0
    for target, plan in (("script", SCRIPT_PLAN), ("http", HTTP_PLAN)):
        calls = _calls(target, counters, server, "/generous")
        scores = {
            s["sample_id"]: s for s in read_jsonl(run / "scores.jsonl") if s["target_id"] == target
        }
        for sample, bundle in _bundles(run, target).items():
            if plan[sample][-1] not in PRODUCT:
                assert scores[sample]["status"] == "passed"
                continue
            checked += 1
            assert calls[sample] == len(plan[sample])  # it stopped at the product failure
            assert bundle["canonical_attempt"]["attempt"] == len(plan[sample])
            failure = bundle["observation"]["failure"]
            expected = {
                "crash": "exited with code 3",
                "garbage": "not JSON",
                "400": "HTTP 400",
                "notjson": "not JSON",
            }[plan[sample][-1]]
            assert expected in failure, failure
            assert scores[sample]["status"] == "failed"
    assert checked >= 8


@pytest.mark.doc(
    "docs/spec.md",
    "429 (honouring `Retry-After`)",
)
def test_retry_after_is_honoured(generous: tuple[Path, Path, Any]) -> None:
    run, _, _ = generous
    events = _events(run)
    gaps = []
    for bundle in _bundles(run, "http").values():
        mine = events[bundle["trial"]["trial_id"]]
        for i, event in enumerate(mine):
            if event["type"] == "error" and event["data"]["reason"] == "rate_limited":
                following = next(e for e in mine[i:] if e["type"] == "attempt_started")
                gaps.append(following["at"] - event["at"])
    assert gaps and min(gaps) >= RETRY_AFTER * 0.95, gaps


# -- a budget too small, and programs that cannot start ---------------------------------


@pytest.fixture(scope="module")
def stingy(tmp_path_factory: pytest.TempPathFactory, server: Server) -> tuple[Path, Path, Any]:
    """The same flaky targets with 2 attempts, and three programs that cannot start."""
    root = tmp_path_factory.mktemp("stingy")
    folder, counters = root / "spec", root / "counters"
    targets = [_script_target(folder, counters), _http_target(server, "/stingy")]
    (folder / "not-executable.sh").write_text("#!/bin/sh\necho '{}'\n")  # mode 0644
    (folder / "not-a-program").write_bytes(b"\x00\x01garbage")
    (folder / "not-a-program").chmod(0o755)
    targets += [
        {"id": "missing", "argv": [str(root / "no-such-program")], "timeout": 1.0},
        {"id": "not-executable", "script": "not-executable.sh", "timeout": 1.0},
        {"id": "not-a-program", "script": "not-a-program", "timeout": 1.0},
    ]
    spec = _write_spec(folder, targets, attempts=2)
    proc = run_cli("run", spec, "-o", root / "run", "-j", "8")
    return root / "run", counters, proc


def test_when_the_budget_runs_out_the_trial_is_blocked_and_the_gate_inconclusive(
    stingy: tuple[Path, Path, Any], server: Server
) -> None:
    run, counters, proc = stingy
    assert proc.returncode == 3, proc.stdout + proc.stderr
    report = json.loads((run / "report.json").read_bytes())
    assert report["gate"]["status"] == "inconclusive"
    for target, plan in (("script", SCRIPT_PLAN), ("http", HTTP_PLAN)):
        calls = _calls(target, counters, server, "/stingy")
        decision = next(t for t in report["gate"]["targets"] if t["target_id"] == target)
        assert decision["status"] == "inconclusive"
        blocked = 0
        for sample, bundle in _bundles(run, target).items():
            infra = plan[sample][:-1]
            if len(infra) >= 2:
                blocked += 1
                assert bundle["state"] == "blocked", sample
                assert calls[sample] == 2
                assert [a["reason"] for a in bundle["attempts"]] == [REASON[a] for a in infra[:2]]
                assert bundle["canonical_attempt"] is None
            else:
                assert bundle["state"] == "completed", sample
        assert blocked == SAMPLES // len(FAILURES_BEFORE)
        assert any("blocked" in reason for reason in decision["reasons"]), decision
    assert run_cli("verify", run).returncode == 0


@pytest.mark.parametrize("target", ["missing", "not-executable", "not-a-program"])
@pytest.mark.doc(
    "docs/spec.md",
    "Failing to start and timing out are infrastructure failures (retried)",
)
def test_a_program_that_cannot_start_is_retried_then_blocked(
    stingy: tuple[Path, Path, Any], target: str
) -> None:
    run, _, _ = stingy
    events = _events(run)
    bundles = _bundles(run, target)
    assert len(bundles) == SAMPLES
    for bundle in bundles.values():
        assert bundle["state"] == "blocked"
        assert [a["reason"] for a in bundle["attempts"]] == ["failed_to_start"] * 2
        errors = [e for e in events[bundle["trial"]["trial_id"]] if e["type"] == "error"]
        assert [e["data"]["reason"] for e in errors] == ["failed_to_start"] * 2
