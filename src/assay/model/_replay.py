"""Replaying recorded model calls: how model-graded scores are re-checked offline.

A grader's calls are evidence like any other: each is a ``sampling`` event naming the
model, the prompt artifact and the output artifact. ``assay score`` re-scores with a
``Replay`` in place: ``Model.generate`` then answers every call from the recorded
output whose model and prompt bytes match, and refuses (``ReplayMiss``) a call the
evidence does not hold, so re-scoring never reaches a model.

A grader's calls are also replayed per trial, in the order the trial made them: the
``score_sampling`` event itself comes back (its usage, cost and whether the cache
answered it), so a re-scored score record counts exactly the grading usage the run's
did, even when one prompt was asked in several trials (epochs), live in one and
answered by the response cache in another.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import msgspec

from assay.evidence import count_call
from assay.model._output import ModelOutput

TrialCalls = dict[str, dict[tuple[str, str], deque[dict[str, Any]]]]


class ReplayMiss(Exception):
    """A model call that the run's evidence does not hold."""

    def __init__(self, model: str, prompt_sha256: str) -> None:
        self.model, self.prompt_sha256 = model, prompt_sha256
        super().__init__(f"no recorded answer of {model} to prompt {prompt_sha256}")


Calls = dict[tuple[str, str], str]


class Replay:
    """Recorded answers by (model, prompt digest); *read* fetches an artifact's bytes.

    *calls* may be a function that reads them: it is called on the first call that no
    trial's own grader calls answer (rare), so re-scoring a run whose scorers call no
    model never holds a digest per recorded call (~30 MB at 100,000 trials)."""

    def __init__(
        self,
        calls: Calls | Callable[[], Calls],
        read: Callable[[str], bytes],
        graded: TrialCalls | None = None,
    ) -> None:
        self._calls = calls
        self.read = read
        self.graded: TrialCalls = graded or {}
        self.live_fallback = False
        self.trial: str | None = None  # the trial being judged: its grader calls first
        # what each trial's scorers did in its sandbox (assay.sandbox._replayed.Recorded)
        self.sandboxes: dict[str, dict[tuple[str, ...], deque[dict[str, Any]]]] = {}
        # code scorers' sandbox runs (``score_exec`` data), by trial and request digest
        self.execs: dict[str, dict[str, deque[dict[str, Any]]]] = {}

    @property
    def calls(self) -> Calls:
        """Every recorded answer by (model, prompt digest), read on first use."""
        if callable(self._calls):
            self._calls = self._calls()
        return self._calls

    def recorded_exec(self, request: str) -> dict[str, Any] | None:
        """The next recorded sandbox run of the current trial for *request* (a digest of
        the program, tests and limits), or ``None``: re-scoring never runs code again."""
        queued = self.execs.get(self.trial or "", {}).get(request)
        return queued.popleft() if queued else None

    def answer(self, model: str, prompt_sha256: str) -> ModelOutput | None:
        """The recorded output, or ``None`` (live fallback) / ``ReplayMiss``.

        A call the current trial's scorers made in the run is answered by that trial's
        next such event, and counted as the scorer's usage; any other recorded answer
        to the same prompt is used but not counted (the run did not count it either).
        """
        queued = self.graded.get(self.trial or "", {}).get((model, prompt_sha256))
        if queued:
            data = queued.popleft()
            count_call(data)
            return msgspec.json.decode(self.read(data["output"]), type=ModelOutput)
        output = self.calls.get((model, prompt_sha256))
        if output is None:
            if self.live_fallback:
                return None
            raise ReplayMiss(model, prompt_sha256)
        return msgspec.json.decode(self.read(output), type=ModelOutput)


_replay: ContextVar[Replay | None] = ContextVar("assay_replay", default=None)


def current_replay() -> Replay | None:
    """The replay in force in this context, if any."""
    return _replay.get()


def replaying_only() -> bool:
    """True when every model call in this context is answered from evidence and none may
    go live (``assay score``), so a provider need not be able to reach its server."""
    replay = _replay.get()
    return replay is not None and not replay.live_fallback


@contextmanager
def replay_scope(replay: Replay | None) -> Iterator[None]:
    """Answer model calls from *replay* inside the block."""
    token = _replay.set(replay)
    try:
        yield
    finally:
        _replay.reset(token)
