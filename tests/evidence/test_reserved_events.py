"""``record_event`` refuses the event types assay writes itself: its readers act on them
(``assay score`` replays a ``sampling`` or ``score_*`` event, every reader expands an
``events`` batch, ``verify`` looks up a ``tool_call``'s artifacts), so one a task's code
made up would change what the run's evidence says or stop it verifying."""

from __future__ import annotations

from pathlib import Path

import pytest

import assay
from assay.errors import ConfigError
from assay.evidence import verify_run
from assay.evidence._recorder import RESERVED_TYPES
from tests.helpers import log_events, run_spec_at, unique_callable_spec

SOURCE = """
import assay


def answer(text):
    assay.record_event({kind!r}, {{"model": "m", "prompt": "p", "output": "o"}})
    return text
"""


@pytest.mark.doc(
    "docs/evidence.md",
    "`assay.record_event` refuses the types assay writes itself (those above, and any that "
    "starts with `score_` or `sandbox_`) with a one-line error:",
)
@pytest.mark.parametrize("kind", [*sorted(RESERVED_TYPES), "score_sampling", "sandbox_exec"])
def test_every_type_assay_writes_is_refused(kind: str) -> None:
    with pytest.raises(ConfigError) as raised:
        assay.record_event(kind, {})
    assert raised.value.key == "event.reserved"
    assert f"{kind!r} is an event type assay writes itself" in raised.value.one_line()


@pytest.mark.doc(
    "docs/evidence.md",
    "The error ends the call like any exception of the task's code, and the made-up event "
    "is not logged.",
)
@pytest.mark.parametrize("kind", ["match", "score_sampling", "sampling", "events"])
def test_a_trial_cannot_forge_what_assay_reads(tmp_path: Path, kind: str) -> None:
    """The refused event is not in the log; the trial says why; the run still verifies."""
    spec = unique_callable_spec(
        tmp_path, SOURCE.format(kind=kind), samples=[{"id": "a", "input": "q", "expected": "q"}]
    )
    out = tmp_path / "run"
    run_spec_at(spec, out)
    events = log_events(out)
    made_up = [e for e in events if e.get("data", {}).get("prompt") == "p"]
    assert made_up == []
    assert verify_run(out).ok
    text = (out / "report.json").read_text(encoding="utf-8") + (out / "report.md").read_text(
        encoding="utf-8"
    )
    assert "is an event type assay writes itself" in text


def test_a_name_of_ones_own_is_recorded(tmp_path: Path) -> None:
    spec = unique_callable_spec(
        tmp_path,
        SOURCE.format(kind="my_sampling"),
        samples=[{"id": "a", "input": "q", "expected": "q"}],
    )
    out = tmp_path / "run"
    run_spec_at(spec, out)
    mine = [e for e in log_events(out) if e["type"] == "my_sampling"]
    assert [e["data"]["prompt"] for e in mine] == ["p"]
    assert verify_run(out).ok
