"""What every target returns, and the one exception that means "try again".

A target either produces a *product result* (an answer, or a failure of the product:
a crash, a non-zero exit, output that is not JSON) or raises ``InfrastructureError``
(it could not be reached: timed out, failed to start, connection refused, rate limited).
Only the second is retried; a product result ends the trial, good or bad.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import msgspec

from assay._infra import InfrastructureError
from assay.dataset import Sample

__all__ = ["InfrastructureError", "OutcomeKind", "Target", "TargetOutcome", "target_payload"]

OutcomeKind = Literal["answered", "product_failure", "error"]
"""``error``: a Python solver raised; with ``retry_on_error`` the trial is tried again."""


class TargetOutcome(msgspec.Struct):
    """A product result: the exact bytes the target gave and what they mean.

    ``output`` holds the exact bytes (they become an artifact); ``value`` is their decoded
    form for scorers (``None`` when the product failed); ``failure`` says how it failed.
    ``answer``, when set, is the answer text a scorer reading the bytes would find (a
    solver's state record's ``output.completion``): the run's judge uses it instead of
    decoding them; re-scoring from the evidence decodes them and gets the same text.
    """

    kind: OutcomeKind
    output: bytes
    media: str
    value: Any = None
    failure: str | None = None
    stderr: bytes = b""
    exit_code: int | None = None
    usage: dict[str, int] | None = None
    answer: str | None = None


class Target(Protocol):
    """Anything that answers a sample: a program, a function, a model, an endpoint."""

    id: str

    async def call(self, sample: Sample, epoch: int = 1) -> TargetOutcome:
        """Put *sample* (in its *epoch*) to the target; raise ``InfrastructureError`` to be
        retried."""
        ...


def target_payload(sample: Sample) -> dict[str, Any]:
    """What a target is shown of a sample: never the expected value."""
    payload: dict[str, Any] = {"id": sample.id, "input": sample.input}
    if sample.metadata:
        payload["metadata"] = sample.metadata
    return payload
