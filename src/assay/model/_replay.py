"""Replaying recorded model calls: how model-graded scores are re-checked offline.

A grader's calls are evidence like any other: each is a ``sampling`` event naming the
model, the prompt artifact and the output artifact. ``assay score`` re-scores with a
``Replay`` in place: ``Model.generate`` then answers every call from the recorded
output whose model and prompt bytes match, and refuses (``ReplayMiss``) a call the
evidence does not hold, so re-scoring never reaches a model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import msgspec

from assay.model._output import ModelOutput


class ReplayMiss(Exception):
    """A model call that the run's evidence does not hold."""

    def __init__(self, model: str, prompt_sha256: str) -> None:
        self.model, self.prompt_sha256 = model, prompt_sha256
        super().__init__(f"no recorded answer of {model} to prompt {prompt_sha256}")


class Replay:
    """Recorded answers by (model, prompt digest); *read* fetches an artifact's bytes."""

    def __init__(self, calls: dict[tuple[str, str], str], read: Callable[[str], bytes]) -> None:
        self.calls = calls
        self.read = read
        self.live_fallback = False

    def answer(self, model: str, prompt_sha256: str) -> ModelOutput | None:
        """The recorded output, or ``None`` (live fallback) / ``ReplayMiss``."""
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


@contextmanager
def replay_scope(replay: Replay | None) -> Iterator[None]:
    """Answer model calls from *replay* inside the block."""
    token = _replay.set(replay)
    try:
        yield
    finally:
        _replay.reset(token)
