"""The recorded model calls of a run, as a ``Replay`` for re-scoring without a model."""

from __future__ import annotations

from collections import deque
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._digest import loads
from assay.evidence import ARTIFACTS, EVENTS, ArtifactStore
from assay.evidence._framed import open_evidence
from assay.evidence._log import events_in
from assay.model import Replay

if TYPE_CHECKING:
    from assay.sandbox._replayed import Recorded

_CALLS = (b'"type":"sampling"', b'"type":"score_sampling"')
_GRADED = _CALLS[1]  # a grader's call: replayed per trial
_SANDBOX = b'"type":"score_sandbox_'  # what a scorer did in the sample's sandbox
_EXEC = b'"type":"score_exec"'  # a code scorer's sandbox run (``python_tests``)


def replay_of_run(path: Path, *, live_fallback: bool = False) -> Replay:
    """Every model call the run recorded (solver and grader calls), by model and prompt;
    grader calls also by trial, in order; and by trial, what scorers did in sandboxes
    (``python_tests``' runs, a scorer's commands and reads in the sample's sandbox).

    The calls by model and prompt are read on first use (few re-scorings need any: a
    trial's grader calls are answered by its own events), except with *live_fallback*
    (a resume, whose log grows meanwhile): then at once, as the log stands."""
    graded: dict[str, dict[tuple[str, str], deque[dict[str, Any]]]] = {}
    sandboxes: dict[str, Recorded] = {}
    execs: dict[str, dict[str, deque[dict[str, Any]]]] = {}
    with open_evidence(path / EVENTS) as handle:
        for line in handle:
            # one C-level search rules out most lines (both markers end in 'sampling"')
            if b'sampling"' not in line or b'"model"' not in line:
                if _SANDBOX in line:
                    _add_sandbox_use(sandboxes, loads(line))
                if _EXEC in line:
                    _add_exec(execs, loads(line))
                continue
            if _GRADED not in line:
                continue  # a solver's call: in ``calls`` only
            event = loads(line)
            data = event["data"]
            if event["type"] == "score_sampling" and {"model", "prompt", "output"} <= data.keys():
                key = (data["model"], data["prompt"])
                graded.setdefault(event["trial"], {}).setdefault(key, deque()).append(data)
    store = ArtifactStore(path / ARTIFACTS, write=False)
    replay = Replay(calls_of(path) if live_fallback else partial(calls_of, path), store.get, graded)
    replay.execs = execs
    replay.live_fallback = live_fallback
    replay.sandboxes = sandboxes
    return replay


def calls_of(path: Path) -> dict[tuple[str, str], str]:
    """The first recorded output of each (model, prompt digest) the run's log holds."""
    calls: dict[tuple[str, str], str] = {}
    first, second = _CALLS
    with open_evidence(path / EVENTS) as handle:
        for line in handle:
            # a call without a model (a callable target's) is not decoded at all
            if b'sampling"' not in line or b'"model"' not in line:
                continue
            if first not in line and second not in line:
                continue
            for event in events_in(loads(line)):  # a batch holds a trial's calls
                data = event["data"]
                if "model" in data and "prompt" in data and "output" in data:
                    calls.setdefault((data["model"], data["prompt"]), data["output"])
    return calls


def _add_sandbox_use(sandboxes: dict[str, Recorded], event: dict[str, Any]) -> None:
    """Keep a scorer's sandbox command or file read under its trial, in order."""
    kind = {"score_sandbox_exec": "exec", "score_sandbox_read": "read"}.get(event["type"])
    if kind is not None:
        from assay.sandbox._replayed import recorded_key

        key = recorded_key(kind, event["data"])
        sandboxes.setdefault(event["trial"], {}).setdefault(key, deque()).append(event["data"])


def _add_exec(execs: dict[str, dict[str, deque[dict[str, Any]]]], event: dict[str, Any]) -> None:
    """Keep a ``score_exec`` event's result under its trial and request digest."""
    data = event["data"]
    if event["type"] == "score_exec" and isinstance(data.get("request"), str):
        execs.setdefault(event["trial"], {}).setdefault(data["request"], deque()).append(data)
