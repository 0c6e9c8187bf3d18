"""Model-call retries and the adaptive gate, end to end: Python tasks on ``openai/...``
against a server that fails in a scripted order. Every trial completes, every failed
call is a ``model_call_failed`` event matching the script, client errors are not
retried, exhausted retries hand over to the trial's attempts, and the gate shrinks
under 429s and grows back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from assay import Sample, Task, eval, generate, includes
from assay.evidence import verify_run
from assay.model import GenerateConfig, get_model
from tests.helpers import bundles_by_sample, events_of, wait_for
from tests.servers.openai_compat import OpenAICompatServer, cut, drop, slow, status

FAST = {"retry_backoff": 0.01, "timeout": 0.5}
TRANSPORTS = [
    "direct",
    "aiohttp",
    "httpx",
]  # assay's own and the SDK's: each fails in its own words


def echo_task(count: int) -> Task:
    samples = [Sample(input=f"word{i}", target=f"word{i}", id=f"s{i}") for i in range(count)]
    return Task(dataset=samples, solver=generate(), scorer=includes(), name="echo")


def run(server: OpenAICompatServer, tmp_path: Path, count: int, **options: Any) -> Path:
    args = {**FAST, **options.pop("model_args", {})}
    (result,) = eval(
        echo_task(count),
        model="openai/tiny",
        model_base_url=server.url,
        model_args=args,
        log_dir=tmp_path,
        **options,
    )
    assert result.path is not None
    assert verify_run(result.path).ok
    return result.path


def failed_calls(path: Path) -> list[dict[str, Any]]:
    return [e["data"] for e in events_of(path, "model_call_failed")]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_retries_in_the_evidence_match_the_script(
    openai_server: OpenAICompatServer, tmp_path: Path, transport: str
) -> None:
    openai_server.push(
        status(429, retry_after="0"),
        status(500),
        slow(2.0),  # beyond the 0.5 s timeout
        drop(),
        status(503),
        status(429, retry_after="0.05"),
    )
    # one trial, so the order is fixed (with more, another would start while the first
    # waits to retry); six failures need six retries
    args = {"max_retries": 6, "transport": transport}
    path = run(openai_server, tmp_path, 1, max_samples=1, model_args=args)
    bundles = bundles_by_sample(path)
    assert {b["state"] for b in bundles.values()} == {"completed"}
    assert all(len(b["attempts"]) == 1 for b in bundles.values())  # the model retried
    calls = failed_calls(path)
    assert [(c["reason"], c.get("status")) for c in calls] == [
        ("rate_limited", 429),
        ("http_500", 500),
        ("timeout", None),
        ("connection", None),
        ("http_503", 503),
        ("rate_limited", 429),
    ]
    assert {c["action"] for c in calls} == {"retry"}
    assert [c["call"] for c in calls] == [1, 2, 3, 4, 5, 6]  # all in the one trial
    # Retry-After is honoured exactly; the rest back off from 0.01 s, doubling
    assert (calls[0]["retry_after"], calls[0]["delay"]) == (0.0, 0.0)
    assert (calls[5]["retry_after"], calls[5]["delay"]) == (0.05, 0.05)
    for k, call in enumerate(calls[1:5], start=2):
        assert 0.0 <= call["delay"] <= 0.01 * 2 ** (k - 1)  # full jitter
    assert len(openai_server.requests) == 1 + 6
    assert len([e for e in events_of(path, "sampling") if "model" in e["data"]]) == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_trial_completes_under_concurrent_faults(
    openai_server: OpenAICompatServer, tmp_path: Path, transport: str
) -> None:
    script = [status(429, retry_after="0"), status(502), drop(), slow(1.0), cut()] * 4
    openai_server.push(*script)
    path = run(openai_server, tmp_path, 24, max_samples=8, model_args={"transport": transport})
    bundles = bundles_by_sample(path)
    assert len(bundles) == 24
    assert {b["state"] for b in bundles.values()} == {"completed"}
    reasons = sorted(c["reason"] for c in failed_calls(path))
    expected = ["rate_limited", "http_502", "connection", "timeout", "connection"] * 4
    assert reasons == sorted(expected)
    assert len(openai_server.requests) == 24 + len(script)


def test_exhausted_retries_fail_the_attempt_and_the_trial_tries_again(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    openai_server.push(status(500), status(500), status(500))
    path = run(openai_server, tmp_path, 1, model_args={"max_retries": 2})
    (bundle,) = bundles_by_sample(path).values()
    assert bundle["state"] == "completed"
    assert [(a["status"], a["reason"]) for a in bundle["attempts"]] == [
        ("infra_failed", "http_500"),
        ("succeeded", None),
    ]
    assert [c["action"] for c in failed_calls(path)] == ["retry", "retry", "give_up"]
    (error,) = events_of(path, "error")
    assert "3 calls failed" in error["data"]["detail"]


def test_client_errors_are_not_retried_and_the_sample_says_why(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    openai_server.push(status(401, "invalid key"), status(404, "model 'tiny' not found"))
    path = run(openai_server, tmp_path, 2, max_samples=1, fail_on_error=False)
    assert len(openai_server.requests) == 2  # one call per sample, none retried
    failures = sorted(b["observation"]["failure"] for b in bundles_by_sample(path).values())
    assert failures == [
        f"model error: 401 from {openai_server.url}: invalid key",
        f"model error: 404 from {openai_server.url}: model 'tiny' not found",
    ]
    calls = failed_calls(path)
    assert [(c["status"], c["action"], c["detail"]) for c in calls] == [
        (401, "stop", "invalid key"),
        (404, "stop", "model 'tiny' not found"),
    ]
    bundles = bundles_by_sample(path).values()
    assert all(a["status"] == "errored" for b in bundles for a in b["attempts"])


def test_the_gate_shrinks_under_rate_limits_and_grows_back(
    openai_server: OpenAICompatServer,
) -> None:
    openai_server.latency = 0.02
    openai_server.push(*[status(429, retry_after="0")] * 32)
    model = get_model(
        "openai/tiny",
        GenerateConfig(max_connections=8, max_retries=40, retry_backoff=0.01),
        base_url=openai_server.url,
    )

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for i in range(80):
                group.start_soon(model.generate, f"q{i}")
        await model.aclose()

    anyio.run(main)
    seen = openai_server.requests
    assert len(seen) == 80 + 32
    assert [r.action.kind for r in seen[:8]] == ["status"] * 8  # 8 at once, all refused
    assert max(r.in_flight for r in seen[:8]) == 8
    assert model.gate.decreases == 1  # one burst of 429s: one halving, not one per 429
    # Each refusal frees its slot for a waiter (one 429 is not a burst); the 33rd call
    # started after 25 or more refusals came back, more than half of the first window
    # (17 of 32): the limit was halved by then
    assert seen[32].action.kind == "ok"
    assert seen[32].in_flight <= 4  # multiplicative decrease
    assert max(r.in_flight for r in seen[-20:]) == 8  # additive increase, back to the cap
    assert model.gate.limit == 8.0


def test_a_run_closes_its_model_connections(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    openai_server.latency = 0.02
    model = get_model("openai/tiny", GenerateConfig(max_connections=4), base_url=openai_server.url)
    for _ in range(2):  # the same Model in two runs: closed after each, reopened on use
        (result,) = eval(echo_task(8), model=model, log_dir=tmp_path, max_samples=4)
        assert result.status == "success", result.error
        assert wait_for(lambda: openai_server.open_connections == 0)
    assert openai_server.max_in_flight == 4  # max_connections bounds what the server sees


def test_an_edited_retry_event_is_caught_by_verify(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    openai_server.push(status(503))
    path = run(openai_server, tmp_path, 1)
    events = path / "events.jsonl"
    data = events.read_bytes()
    assert data.count(b'"http_503"') == 1
    events.write_bytes(data.replace(b'"http_503"', b'"http_502"'))  # same length
    result = verify_run(path)
    assert not result.ok
    assert any("events.jsonl" in problem for problem in result.problems), result.problems
