"""The ``protocol: jsonl`` wire as one process of it is read: an answer line, a call
waiting for its line, the markers a call is settled with when no line comes, and the
outcome an answer line makes. Kept apart from the process (``_persistent_program``),
which only moves bytes and fails.
"""

from __future__ import annotations

import asyncio

import msgspec

from assay.target._base import InfrastructureError, TargetOutcome

_JSON = "application/json"
_decode = msgspec.json.Decoder().decode


class Answer(msgspec.Struct):
    """One stdout line: the call it answers, and its output or its error (raw JSON)."""

    id: int
    output: msgspec.Raw = msgspec.Raw()
    error: msgspec.Raw = msgspec.Raw()


decode_answer = msgspec.json.Decoder(Answer).decode


class Ended:
    """What a call in flight gets when stdout closes (the failure is worked out after:
    it needs the exit code, which the callback that saw the end cannot wait for), or
    when its timer runs out."""


ENDED = Ended()
TIMED_OUT = Ended()  # what a call's timer settles it with
Result = TargetOutcome | InfrastructureError | Ended


class Call:
    """A request in flight: the future its answer settles, its stderr window, and the
    timer that times it out."""

    __slots__ = ("future", "stderr", "timer")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.future: asyncio.Future[Result] = loop.create_future()
        self.stderr = bytearray()
        self.timer: asyncio.TimerHandle | None = None

    def settle(self, result: Result) -> None:
        if not self.future.done():
            self.future.set_result(result)


def outcome(answer: Answer, line: bytes, stderr: bytes) -> TargetOutcome:
    """The product's result: its output (exact bytes) or the error it answered."""
    if len(answer.error):
        why = f"the program answered an error: {bytes(answer.error).decode(errors='replace')}"
        return TargetOutcome("product_failure", line, _JSON, failure=why, stderr=stderr)
    if not len(answer.output):
        why = "the answer has neither 'output' nor 'error'"
        return TargetOutcome("product_failure", line, _JSON, failure=why, stderr=stderr)
    output = bytes(answer.output)
    return TargetOutcome("answered", output, _JSON, value=_decode(output), stderr=stderr)
