"""Full speed under rate limits (issue 18, item 5), end to end: Python tasks on
``openai/...`` against the fault server on 127.0.0.1. What is asserted is what the
server saw at once (``Seen.in_flight``) and what the evidence holds, never timing.

- While one call waits out its ``Retry-After``, its trial's slot goes to another trial,
  so the other calls fill every connection.
- Isolated 429s leave the connection limit where it was; a burst halves it.
- Nothing is lost or counted twice: verify passes, every trial has one attempt (the
  model retried), and every refused call is one ``model_call_failed`` event.
- A call's backoff doubles with its failures only while the server fails every call;
  while the others get through, each retry waits like a first one.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from assay import Sample, Task, eval, generate, includes
from assay.evidence import verify_run
from assay.model import GenerateConfig, get_model
from tests.helpers import bundles_by_sample, events_of
from tests.servers.openai_compat import Action, OpenAICompatServer, Seen, drop, ok, slow, status


def echo_task(count: int) -> Task:
    samples = [Sample(input=f"word{i}", target=f"word{i}", id=f"s{i}") for i in range(count)]
    return Task(dataset=samples, solver=generate(), scorer=includes(), name="echo")


def asked(seen: Seen) -> str:
    """The sample's text a request asked about (the last message)."""
    content = seen.body["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def checked_run(path: Path | None, count: int, refused: int) -> dict[str, dict[str, Any]]:
    """The run verifies; each trial completed in one attempt; one event per refusal."""
    assert path is not None
    assert verify_run(path).ok
    bundles = bundles_by_sample(path)
    assert len(bundles) == count
    assert {b["state"] for b in bundles.values()} == {"completed"}
    assert all(len(b["attempts"]) == 1 for b in bundles.values())  # retried in the model
    calls = [e["data"] for e in events_of(path, "model_call_failed")]
    assert [(c["reason"], c["action"]) for c in calls] == [("rate_limited", "retry")] * refused
    return bundles


@pytest.mark.doc(
    "docs/cli.md",
    "While a trial waits out a `Retry-After` or a backoff before a retry, another trial "
    "takes its place, and it goes on as soon as its wait ends",
)
def test_while_a_call_waits_out_retry_after_the_others_fill_every_connection(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    # 4 trial slots, 4 connections. The first call is refused for 1 s; the next four
    # take 1.5 s each. Had the refused trial kept its slot while it waited, only three
    # others could start before its retry.
    openai_server.push(status(429, retry_after="1"), *[slow(1.5)] * 4)
    (result,) = eval(
        echo_task(5),
        model="openai/tiny",
        model_base_url=openai_server.url,
        model_args={"timeout": 30},
        log_dir=tmp_path,
        max_samples=4,
        max_connections=4,
    )
    assert result.status == "success", result.error
    checked_run(result.path, 5, refused=1)
    seen = openai_server.requests
    assert len(seen) == 5 + 1  # one call per sample, and the one retry
    refused = asked(seen[0])
    retry = next(i for i, s in enumerate(seen) if i > 0 and asked(s) == refused)
    waiting = seen[1:retry]  # what arrived while the refused call waited
    assert len(waiting) == 4  # every other trial started
    assert max(s.in_flight for s in waiting) == 4  # all four connections busy at once
    assert max(s.in_flight for s in seen) == 4  # and never more than max_connections


def test_isolated_rate_limits_keep_the_connections_a_burst_halves_them(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    # One call in five refused, over 240 calls: two refusals in a window of eight calls
    # happen all the time; they are chance, not a server over its rate.
    openai_server.latency = 0.02
    openai_server.push(*[status(429, retry_after="0"), *[ok()] * 4] * 40)
    model = get_model(
        "openai/tiny", GenerateConfig(max_connections=8, timeout=30), base_url=openai_server.url
    )
    (result,) = eval(echo_task(200), model=model, log_dir=tmp_path, max_samples=8)
    assert result.status == "success", result.error
    checked_run(result.path, 200, refused=40)
    assert model.gate.decreases == 0  # forty isolated 429s: the limit stays
    assert model.gate.window == 8
    assert max(s.in_flight for s in openai_server.requests) == 8
    assert len(openai_server.requests) == 200 + 40

    # A burst: the first 32 calls refused. A model of its own: the first one's last
    # window may still be open, and refusals of calls started in an older window are part
    # of a decision already made (not counted).
    openai_server.requests.clear()
    openai_server.push(*[status(429, retry_after="0")] * 32)
    fresh = get_model(
        "openai/tiny",
        GenerateConfig(max_connections=8, max_retries=40, timeout=30),
        base_url=openai_server.url,
    )
    (again,) = eval(echo_task(16), model=fresh, log_dir=tmp_path, max_samples=8)
    assert again.status == "success", again.error
    checked_run(again.path, 16, refused=32)
    assert fresh.gate.decreases >= 1  # halved (then it grows again as calls succeed)
    # The 33rd call started after 25 or more refusals came back (8 in flight at most):
    # more than half of the first window (17 of 32), so the limit was 4 by then, and
    # no success had grown it yet.
    seen = openai_server.requests
    assert [s.action.kind for s in seen[:33]] == ["status"] * 32 + ["ok"]
    assert seen[32].in_flight <= 4
    assert len(seen) == 16 + 32


class _Top(random.Random):
    """Every jitter draw at its top, so each recorded delay shows its backoff's ceiling."""

    def random(self) -> float:
        return 0.999


def backoff_delays(
    server: OpenAICompatServer, folder: Path, count: int, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[int, float]]:
    """The failed calls of a run of *count* samples, 8 at a time, retrying from 0.05 s
    with every jitter draw at its top: (which failure of its call, the delay), sorted."""
    config = GenerateConfig(retry_backoff=0.05, max_connections=8)
    model = get_model("openai/tiny", config, base_url=server.url)
    monkeypatch.setattr(model, "_rng", _Top())
    (result,) = eval(echo_task(count), model=model, log_dir=folder, max_samples=8)
    checked_path = result.path
    assert checked_path is not None and verify_run(checked_path).ok
    events = events_of(checked_path, "model_call_failed")
    return sorted((e["data"]["call"], round(e["data"]["delay"], 5)) for e in events)


def test_the_backoff_doubles_only_while_the_server_fails_every_call(
    openai_server: OpenAICompatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a server that is down: the one call fails three times in a row, and so does the
    # server; the backoff doubles, 0.05 s, 0.1 s, 0.2 s (times the jitter's 0.999)
    top = [0.04995, 0.0999, 0.1998]
    openai_server.push(status(500), status(502), drop())
    delays = backoff_delays(openai_server, tmp_path / "down", 1, monkeypatch)
    assert delays == list(zip([1, 2, 3], top, strict=True))
    # eight calls at once, each failing three times before any succeeds: the same
    openai_server.push(*[status(503)] * 24)
    delays = backoff_delays(openai_server, tmp_path / "all", 8, monkeypatch)
    assert delays == [(k, top[k - 1]) for k in (1, 2, 3) for _ in range(8)]
    # one call fails three times in a row while the others (seven at a time) get
    # through: its bad luck, not the server's trouble; each retry waits like a first
    refusals = [status(500), status(502), drop()]

    def first_sample_refused(body: dict[str, Any]) -> Action | None:
        if body["messages"][-1]["content"] == "word0" and refusals:
            return refusals.pop(0)
        return None

    openai_server.latency = 0.005
    openai_server.action_for = first_sample_refused
    delays = backoff_delays(openai_server, tmp_path / "random", 200, monkeypatch)
    assert (delays, refusals) == ([(1, top[0]), (2, top[0]), (3, top[0])], [])
