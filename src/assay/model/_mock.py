"""The ``mock`` provider: deterministic answers with no network, for tests and examples.

``mock/<anything>`` answers ``default_output`` to everything, or, given ``outputs``, a
function of the messages (returning text or a ModelOutput) or an iterable of answers
used in turn. Token usage is counted as whitespace-separated words, so budgets and
usage reports work offline.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from assay.model._config import GenerateConfig
from assay.model._messages import ChatMessage
from assay.model._output import ModelOutput, ModelUsage
from assay.model._registry import modelapi

DEFAULT_OUTPUT = "Default output from the mock model"


class MockAPI:
    """Answers without a network."""

    def __init__(
        self,
        name: str,
        config: GenerateConfig,
        default_output: str = DEFAULT_OUTPUT,
        outputs: Callable[[list[ChatMessage]], Any] | Iterable[Any] | None = None,
    ) -> None:
        self.name = name if "/" in name else f"mock/{name}"
        self.default_output = default_output
        self._function: Callable[[list[ChatMessage]], Any] | None = None
        self._queue: Iterator[Any] | None = None
        if callable(outputs):
            self._function = outputs
        elif outputs is not None:
            self._queue = iter(outputs)

    async def generate(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
    ) -> ModelOutput:
        """The next answer: from the function, the iterable, or the default."""
        answer: Any = self.default_output
        if self._function is not None:
            answer = self._function(messages)
            if not isinstance(answer, str) and inspect.isawaitable(answer):  # str: the common
                answer = await answer
        elif self._queue is not None:
            answer = next(self._queue, self.default_output)
        if isinstance(answer, ModelOutput):
            return answer
        text = str(answer)
        words_in = 0
        for message in messages:  # a loop, not sum(genexpr): once a call
            content = message.content  # text: its ``text``, without the property
            words_in += len((content if type(content) is str else message.text).split())
        usage = ModelUsage(words_in, len(text.split()))
        return ModelOutput(self.name, ChatMessage("assistant", text), usage=usage)  # from_content


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
