"""What each kind of target is given and what it may answer or raise (docs/spec.md, Targets).

Real targets each time: a Python program run as a script, a function in the spec's
folder, an HTTP server on 127.0.0.1. The dataset's samples carry an ``expected`` value
and metadata; the targets report back exactly what reached them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import (
    FAST_RETRY,
    artifact_bytes,
    bundles_by_sample,
    read_jsonl,
    run_spec_at,
    simple_spec,
    trial_events,
    unique_callable_spec,
    write_module,
)

SAMPLES = [
    {
        "id": "order-1",
        "input": {"amount": 100, "note": "x"},
        "expected": {"fee": "EXPECTED-VALUE"},
        "metadata": {"region": "eu"},
    },
    {"id": 7, "input": "plain text", "expected": "EXPECTED-VALUE"},
]
WHAT_A_PROGRAM_SEES = {
    "order-1": {
        "id": "order-1",
        "input": {"amount": 100, "note": "x"},
        "metadata": {"region": "eu"},
    },
    "7": {"id": 7, "input": "plain text"},  # no metadata: no key
}

ECHO_STDIN = """
import sys

sys.stdout.write(sys.stdin.read())
"""


def _outputs(run: Path) -> dict[str, Any]:
    """Each trial's output artifact, decoded, by sample id."""
    return {
        sample: json.loads(artifact_bytes(run, bundle["observation"]["output"]))
        for sample, bundle in bundles_by_sample(run).items()
    }


@pytest.mark.doc(
    "docs/spec.md",
    '- **script / argv** — a program per attempt: the sample `{"id", "input", "metadata"}` '
    "as JSON on stdin (`metadata` only when the sample has some), JSON on stdout.",
    "Targets never see `expected`.",
)
def test_a_program_gets_the_sample_without_expected_on_stdin(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    write_module(folder, "echo_stdin", ECHO_STDIN)
    spec = simple_spec(folder, samples=SAMPLES, targets=[{"id": "t", "script": "echo_stdin.py"}])
    run = tmp_path / "run"
    run_spec_at(spec, run)
    assert _outputs(run) == WHAT_A_PROGRAM_SEES
    assert {b["observation"]["outcome"] for b in bundles_by_sample(run).values()} == {"answered"}


@pytest.fixture
def echo_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An HTTP endpoint that answers each POSTed JSON body with itself, and keeps them."""
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers["content-length"]))
            bodies.append({"content-type": self.headers["content-type"], "body": json.loads(raw)})
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/answer", bodies
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.doc(
    "docs/spec.md",
    '- **url** — an HTTP endpoint: the sample `{"id", "input", "metadata"}` POSTed as JSON '
    "(`metadata` only when the sample has some), JSON back.",
    "Targets never see `expected`.",
)
def test_an_endpoint_gets_the_sample_without_expected_posted_as_json(
    tmp_path: Path, echo_server: tuple[str, list[dict[str, Any]]]
) -> None:
    url, bodies = echo_server
    spec = simple_spec(tmp_path / "spec", samples=SAMPLES, targets=[{"id": "t", "url": url}])
    run = tmp_path / "run"
    run_spec_at(spec, run)
    received = {str(b["body"]["id"]): b["body"] for b in bodies}
    assert received == WHAT_A_PROGRAM_SEES
    assert {b["content-type"] for b in bodies} == {"application/json"}
    assert _outputs(run) == WHAT_A_PROGRAM_SEES  # the JSON answer is the output


@pytest.mark.doc(
    "docs/spec.md",
    "- **callable** — `module:function` called with the sample's input.",
    "Targets never see `expected`.",
)
def test_a_function_is_called_with_the_samples_input_alone(tmp_path: Path) -> None:
    source = "def answer(*args, **kwargs):\n    return {'args': list(args), 'kwargs': kwargs}\n"
    spec = unique_callable_spec(tmp_path / "spec", source, samples=SAMPLES)
    run = tmp_path / "run"
    run_spec_at(spec, run)
    assert _outputs(run) == {
        "order-1": {"args": [{"amount": 100, "note": "x"}], "kwargs": {}},
        "7": {"args": ["plain text"], "kwargs": {}},
    }


RETURNS = """
class Completions:
    def get_completions(self):
        return ["first", "second"]


def answer(kind):
    return {
        "string": "some text",
        "strings": ["one", "two"],
        "json": {"fee": 0, "tags": [1, 2.5, None, True]},
        "completions": Completions(),
        "not-json": object(),
    }[kind]
"""


@pytest.mark.doc(
    "docs/spec.md",
    "It may return a string, a list of strings, any JSON value, or an object with "
    "`get_completions()`.",
)
def test_what_a_function_may_return(tmp_path: Path) -> None:
    kinds = ["string", "strings", "json", "completions", "not-json"]
    samples = [{"id": kind, "input": kind, "expected": None} for kind in kinds]
    spec = unique_callable_spec(tmp_path / "spec", RETURNS, samples=samples)
    run = tmp_path / "run"
    run_spec_at(spec, run)
    bundles = bundles_by_sample(run)
    stored = {
        kind: artifact_bytes(run, bundles[kind]["observation"]["output"]) for kind in kinds[:-1]
    }
    assert stored["string"] == b"some text"
    assert json.loads(stored["strings"]) == ["one", "two"]
    assert json.loads(stored["json"]) == {"fee": 0, "tags": [1, 2.5, None, True]}
    assert json.loads(stored["completions"]) == ["first", "second"]
    assert {bundles[k]["observation"]["outcome"] for k in kinds[:-1]} == {"answered"}
    refused = bundles["not-json"]["observation"]  # anything else is the product's failure
    assert refused["outcome"] == "product_failure" and "not JSON" in refused["failure"]


WHERE = """
import threading

import anyio
import sniffio

import assay


def _where():
    try:
        library = sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        library = None
    return {"main_thread": threading.current_thread() is threading.main_thread(),
            "event_loop": library}


def sync_answer(text):
    assay.record_event("extra", _where())
    return text


async def async_answer(text):
    await anyio.sleep(0)
    assay.record_event("extra", _where())
    return text
"""


@pytest.mark.parametrize(
    ("function", "where"),
    [
        ("sync_answer", {"main_thread": False, "event_loop": None}),
        ("async_answer", {"main_thread": True, "event_loop": "asyncio"}),
    ],
)
@pytest.mark.doc(
    "docs/spec.md",
    "Sync functions run in a worker thread; async ones on the event loop.",
    "Code inside a target can add to the trial's evidence with "
    '`assay.record_event("extra", {...})`.',
)
def test_sync_functions_run_in_a_worker_thread_async_ones_on_the_loop(
    tmp_path: Path, function: str, where: dict[str, Any]
) -> None:
    spec = unique_callable_spec(tmp_path / "spec", WHERE, function)
    run = tmp_path / "run"
    run_spec_at(spec, run)  # in this thread, which runs the event loop
    extras = [
        e["data"] for trial, events in trial_events(run).items() if trial for e in events
        if e["type"] == "extra"
    ]  # fmt: skip
    assert extras == [where] * 3


RAISES = """
from assay.target import InfrastructureError

calls = {}


def answer(kind):
    calls[kind] = calls.get(kind, 0) + 1
    if kind == "connection":
        raise ConnectionError("refused")
    if kind == "timeout":
        raise TimeoutError("the database did not answer")
    if kind == "infrastructure":
        raise InfrastructureError("quota", "the dependency is over its quota")
    if kind == "value":
        raise ValueError("a bug in the product")
    if kind == "key":
        raise KeyError("fee")
    return kind
"""


@pytest.mark.doc(
    "docs/spec.md",
    "Raising `ConnectionError`, `TimeoutError` or `assay.target.InfrastructureError` means "
    '"could not reach a dependency" (retried); any other exception is a product failure.',
)
def test_what_a_raised_exception_means(tmp_path: Path) -> None:
    kinds = ["connection", "timeout", "infrastructure", "value", "key"]
    samples = [{"id": kind, "input": kind, "expected": kind} for kind in kinds]
    spec = unique_callable_spec(tmp_path / "spec", RAISES, samples=samples, retry=FAST_RETRY)
    run = tmp_path / "run"
    outcome = run_spec_at(spec, run)
    bundles = bundles_by_sample(run)
    for kind in ("connection", "timeout", "infrastructure"):  # retried to the end, then blocked
        assert bundles[kind]["state"] == "blocked", kind
        attempts = bundles[kind]["attempts"]
        assert [a["status"] for a in attempts] == ["infra_failed"] * FAST_RETRY["max_attempts"]
    for kind in ("value", "key"):  # one attempt, recorded, scored failed
        bundle = bundles[kind]
        assert (bundle["state"], len(bundle["attempts"])) == ("completed", 1), kind
        assert bundle["observation"]["outcome"] == "product_failure"
    scores = {s["sample_id"]: s["status"] for s in read_jsonl(run / "scores.jsonl")}
    assert (scores["value"], scores["key"]) == ("failed", "failed")
    assert outcome.gate.status == "inconclusive"  # blocked trials: no verdict
