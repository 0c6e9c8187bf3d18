"""One model call with its retries: every provider gets the same policy.

A provider raises ``InfrastructureError`` for what a retry may fix (429, 5xx, a timeout,
a dropped connection) and ``ModelError`` for what it cannot (400, 401, 404, ...). Here
the first kind is retried up to ``max_retries`` times, honouring ``Retry-After`` exactly
or else backing off with full jitter. The backoff doubles with the call's failures in a
row, but only as far as the server's own failures in a row go (the gate's
``failures_in_a_row``, any call's, until one succeeds), up to ``MAX_BACKOFF`` seconds: a
server that is down fails every call and the backoff grows as the call's failures do; a
server failing a share of calls at random answers the others meanwhile, so a call's run
of failures is its bad luck and each retry waits about like a first one (at most
``retry_backoff``). Doubling it made a faulted trial at the end of the plan the run's last
seconds (about 3 s of a 46 s run at 25 % random faults). After the last retry the
InfrastructureError goes up, so the trial's attempt is ``infra_failed`` and the trial's
own retry policy applies. The second kind goes up at once. Every failed call is a
``model_call_failed`` event, so the evidence shows each call the provider refused, why,
and how long assay waited. While a call waits to retry, its trial's slot goes to another
trial (``assay._slots``).
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any

import anyio

from assay._infra import InfrastructureError, backoff_delay
from assay._slots import retry_wait
from assay.evidence import current_recorder
from assay.model._bound import bound_now
from assay.model._config import GenerateConfig
from assay.model._gate import AdaptiveGate
from assay.model._messages import ChatMessage
from assay.model._output import ModelOutput

if TYPE_CHECKING:
    from assay.model._model import ModelAPI

DEFAULT_MAX_RETRIES = 5
DEFAULT_BACKOFF = 1.0
MAX_BACKOFF = 4.0
"""The longest backoff between a call's retries, in seconds: a call that fails five times
in a row must not hold its trial (and the run's end) for half a minute. A server that is
over its rate says so with 429s, and the connection gate backs off for it."""
_DETAIL = 300  # characters of a server's message kept in an event


class ModelError(Exception):
    """A model refused a call for a reason no retry fixes: a bad request (400), a wrong
    key (401), an unknown model (404), ... The sample errors with this message."""

    def __init__(self, status: int | None, where: str, message: str) -> None:
        self.status, self.where, self.detail = status, where, message
        head = f"{status} from {where}" if status is not None else f"error from {where}"
        super().__init__(f"{head}: {message}" if message else head)


async def call_with_retries(
    api: ModelAPI,
    gate: AdaptiveGate,
    model: str,
    messages: list[ChatMessage],
    tools: list[dict[str, Any]],
    config: GenerateConfig,
    rng: random.Random,
    failure: InfrastructureError | None = None,
) -> ModelOutput:
    """Ask *api* through *gate*, retrying infrastructure failures; see the module doc.
    With *failure*, the call's first try was made by the caller (``Model.generate``'s
    fast path, settled with ``settle_try``) and failed so: the retries follow it.
    A call that finds a slot free at once has waited for nothing: the clock and the
    trial's budget are read only when it must wait (for a slot or a retry)."""
    failed = 0
    while True:
        if failure is not None:
            failed += 1
            step = max(1, min(failed, gate.failures_in_a_row))  # the server's, not the call's
            delay = _next_delay(model, failed, step, config, failure, rng)
            await retry_wait(delay)  # the trial's slot goes to another meanwhile
            _waited(delay)
        generation = gate.enter()
        if generation is None:
            started = time.monotonic()
            generation = await gate.acquire()
            _waited(time.monotonic() - started)
        try:  # no timeout: the provider's coroutine awaited here, not through _ask's
            if config.timeout is None:
                output = await api.generate(messages, tools, config)
            else:
                output = await _ask(api, messages, tools, config)
        except BaseException as exc:
            failure = settle_try(gate, generation, model, failed + 1, exc)
        else:
            gate.answered(generation)
            return output


def settle_try(
    gate: AdaptiveGate, generation: int, model: str, call: int, exc: BaseException
) -> InfrastructureError:
    """After try number *call* (of the window *generation*) raised *exc*: tell the gate,
    give its slot back, and return *exc* if a retry may fix it (an InfrastructureError);
    otherwise raise it again (a ``ModelError`` recorded first: the call stops)."""
    try:
        if isinstance(exc, InfrastructureError):
            if exc.status == 429:
                gate.throttled(generation)
            else:
                gate.failed()
            return exc
        if isinstance(exc, ModelError):
            _record(model, call, "stop", exc)
        raise exc
    finally:
        gate.release()


def _waited(seconds: float) -> None:
    """Count *seconds* spent waiting (a slot, a backoff) in the trial's budget, which
    the working limit leaves out."""
    budget = bound_now().budget  # current_budget(), without a frame around it
    if budget is not None:
        budget.waited += seconds


def _next_delay(
    model: str,
    failed: int,
    step: int,
    config: GenerateConfig,
    failure: InfrastructureError,
    rng: random.Random,
) -> float:
    """Record the failed call; return the seconds to wait before the next one (the
    server's ``Retry-After``, else the backoff at *step*), or raise once the retries are
    spent (``config.max_retries``, else ``DEFAULT_MAX_RETRIES``)."""
    retries = DEFAULT_MAX_RETRIES if config.max_retries is None else config.max_retries
    initial = DEFAULT_BACKOFF if config.retry_backoff is None else config.retry_backoff
    if failed > retries:
        _record(model, failed, "give_up", failure)
        raise InfrastructureError(
            failure.reason,
            f"{model}: {failed} calls failed, the last: {failure.detail}",
            failure.retry_after,
            failure.status,
        )
    delay = failure.retry_after
    if delay is None:
        delay = backoff_delay(initial, MAX_BACKOFF, step, rng)
    _record(model, failed, "retry", failure, delay)
    return delay


async def _ask(
    api: ModelAPI, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
) -> ModelOutput:
    """One call, cut off after ``config.timeout`` seconds whatever the provider does."""
    assert config.timeout is not None  # without one the caller awaits the provider
    try:
        with anyio.fail_after(config.timeout):
            return await api.generate(messages, tools, config)
    except TimeoutError:
        raise InfrastructureError("timeout", f"no answer within {config.timeout:g} s") from None


def _record(
    model: str,
    call: int,
    action: str,
    failure: InfrastructureError | ModelError,
    delay: float | None = None,
) -> None:
    """One ``model_call_failed`` event: which call, why, and what assay does next
    (``retry`` after ``delay`` seconds, ``give_up`` after the last retry, ``stop``)."""
    recorder = current_recorder()
    if recorder is None:
        return
    data: dict[str, Any] = {
        "model": model,
        "call": call,
        "reason": failure.reason if isinstance(failure, InfrastructureError) else "refused",
        "action": action,
        "detail": failure.detail[:_DETAIL],
    }
    if failure.status is not None:
        data["status"] = failure.status
    if isinstance(failure, InfrastructureError) and failure.retry_after is not None:
        data["retry_after"] = failure.retry_after
    if delay is not None:
        data["delay"] = round(delay, 6)
    recorder.record_if_open("model_call_failed", data)
