"""A model call that finds a connection slot free and has no timeout makes its first
try in ``Model.generate`` itself (one frame less a call); when that try fails, the call
goes on exactly as ``call_with_retries`` goes on after a failed try of its own: the
same retries and events, the slot given back, a refusal not retried."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from assay._infra import InfrastructureError
from assay.model import (
    ChatMessage,
    GenerateConfig,
    Model,
    ModelError,
    ModelOutput,
    ModelUsage,
    user_message,
)


class Script:
    """A provider that fails as scripted (one exception or None a try), then answers."""

    def __init__(self, *failures: BaseException | None) -> None:
        self.failures = list(failures)
        self.tries = 0

    async def generate(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
    ) -> ModelOutput:
        self.tries += 1
        failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            raise failure
        return ModelOutput.from_content("script/m", "ok", ModelUsage(1, 1))


def _ask(model: Model) -> ModelOutput:
    async def go() -> ModelOutput:
        return await model.generate([user_message("hi")])

    return anyio.run(go)


def _model(api: Script, **config: Any) -> Model:
    return Model("script/m", api, GenerateConfig(retry_backoff=0.001, **config))


def test_a_failed_first_try_is_retried_and_its_slot_given_back() -> None:
    api = Script(InfrastructureError("server", "503", status=503), None)
    model = _model(api)
    assert _ask(model).completion == "ok"
    assert api.tries == 2
    assert model.gate.in_flight == 0 and model.gate.failures_in_a_row == 0


def test_a_rate_limited_first_try_counts_as_the_gates_429() -> None:
    api = Script(InfrastructureError("rate_limit", "429", status=429), None)
    model = _model(api)
    gate = model.gate
    assert _ask(model).completion == "ok"
    assert (api.tries, gate.in_flight, gate.failures_in_a_row) == (2, 0, 0)
    assert gate._returned == 2 and gate._refused == 1  # the 429 and the success, one window


def test_retries_after_a_failed_first_try_stop_at_max_retries() -> None:
    api = Script(*[InfrastructureError("server", "503", status=503)] * 3)
    model = _model(api, max_retries=1)
    with pytest.raises(InfrastructureError, match="2 calls failed"):
        _ask(model)
    assert api.tries == 2 and model.gate.in_flight == 0


@pytest.mark.parametrize("failure", [ModelError(400, "script/m", "bad"), KeyError("k")])
def test_a_first_try_that_no_retry_fixes_raises_at_once(failure: BaseException) -> None:
    api = Script(failure)
    model = _model(api)
    with pytest.raises(type(failure)):
        _ask(model)
    assert api.tries == 1 and model.gate.in_flight == 0


def test_a_call_with_a_timeout_or_no_free_slot_takes_the_retry_loop_alike() -> None:
    api = Script(InfrastructureError("server", "503", status=503), None)
    model = _model(api, timeout=5.0)
    assert _ask(model).completion == "ok"
    assert api.tries == 2 and model.gate.in_flight == 0
