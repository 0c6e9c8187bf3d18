"""The recorded model calls of a run, as a ``Replay`` for re-scoring without a model."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

from assay._digest import loads
from assay.evidence import ARTIFACTS, EVENTS, ArtifactStore
from assay.model import Replay

_CALLS = (b'"type":"sampling"', b'"type":"score_sampling"')
_EXEC = b'"type":"score_exec"'  # a code scorer's sandbox run (``python_tests``)


def replay_of_run(path: Path, *, live_fallback: bool = False) -> Replay:
    """Every model call the run recorded (solver and grader calls), by model and prompt;
    grader calls also by trial, in order; and the code scorers' sandbox runs by trial."""
    calls: dict[tuple[str, str], str] = {}
    graded: dict[str, dict[tuple[str, str], deque[dict[str, Any]]]] = {}
    execs: dict[str, dict[str, deque[dict[str, Any]]]] = {}
    first, second = _CALLS
    with open(path / EVENTS, "rb") as handle:
        for line in handle:
            # one C-level search rules out most lines (both markers end in 'sampling"');
            # a call without a model (a callable target's) is not decoded at all
            if b'sampling"' not in line or b'"model"' not in line:
                if _EXEC in line:
                    _add_exec(execs, loads(line))
                continue
            if first not in line and second not in line:
                continue
            event = loads(line)
            data = event["data"]
            if "model" in data and "prompt" in data and "output" in data:
                key = (data["model"], data["prompt"])
                calls.setdefault(key, data["output"])
                if event["type"] == "score_sampling":  # a grader's: replayed per trial
                    graded.setdefault(event["trial"], {}).setdefault(key, deque()).append(data)
    store = ArtifactStore(path / ARTIFACTS, write=False)
    replay = Replay(calls, store.get, graded)
    replay.execs = execs
    replay.live_fallback = live_fallback
    return replay


def _add_exec(execs: dict[str, dict[str, deque[dict[str, Any]]]], event: dict[str, Any]) -> None:
    """Keep a ``score_exec`` event's result under its trial and request digest."""
    data = event["data"]
    if event["type"] == "score_exec" and isinstance(data.get("request"), str):
        execs.setdefault(event["trial"], {}).setdefault(data["request"], deque()).append(data)
