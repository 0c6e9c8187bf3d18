"""The ``mock`` provider: deterministic answers with no network, for tests and examples.

``mock/<anything>`` answers ``default_output`` to everything, or, given ``outputs``, a
function of the messages (returning text or a ModelOutput) or an iterable of answers
used in turn. Token usage is counted as whitespace-separated words, so budgets and
usage reports work offline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from assay.model._config import GenerateConfig
from assay.model._messages import ChatMessage
from assay.model._mock_api import DEFAULT_OUTPUT, MockAPI
from assay.model._output import ModelOutput
from assay.model._registry import modelapi

__all__ = ["DEFAULT_OUTPUT", "MOCKLLM_OUTPUT", "MockAPI", "mock_provider", "mockllm_provider"]


@modelapi("mock")
def mock_provider(
    name: str,
    config: GenerateConfig,
    *,
    default_output: str = DEFAULT_OUTPUT,
    outputs: Callable[[list[ChatMessage]], Any] | Iterable[Any] | None = None,
) -> MockAPI:
    """Make a mock model API (its arguments spelt out, so a wrong one is a ConfigError)."""
    return MockAPI(name, config, default_output, outputs)


MOCKLLM_OUTPUT = "Default output from mockllm/model"


@modelapi("mockllm")
def mockllm_provider(
    name: str,
    config: GenerateConfig,
    *,
    custom_outputs: Callable[..., ModelOutput] | Iterable[ModelOutput] | None = None,
) -> MockAPI:
    """Inspect's ``mockllm/model``: *custom_outputs* are its answers in turn, or a function
    of ``(input, tools, tool_choice, config)`` giving each; without them, a fixed answer."""
    outputs: Callable[[list[ChatMessage]], Any] | Iterable[Any] | None = custom_outputs
    if callable(custom_outputs):
        function = custom_outputs
        outputs = lambda messages: function(messages, [], "auto", config)  # noqa: E731
    return MockAPI(f"mockllm/{name}", config, MOCKLLM_OUTPUT, outputs)
