"""``MockAPI``, the mock provider's model API: deterministic answers with no network.

Apart from ``_mock`` (the ``mock``/``mockllm`` factories, registered by name): this module
is on every trivial trial's path and may be compiled (pyproject's mypyc hook), and the
registry reads a factory's parameters with ``inspect.signature``, which a compiled
function does not offer.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from assay.model._config import GenerateConfig
from assay.model._messages import ChatMessage
from assay.model._output import ModelOutput, ModelUsage

DEFAULT_OUTPUT = "Default output from the mock model"


class MockAPI:
    """Answers without a network."""

    base_url: str | None = None
    """None: a mock has no endpoint (``Model.endpoint``), unless a test gives it one."""

    def __init__(
        self,
        name: str,
        config: GenerateConfig,
        default_output: Any = DEFAULT_OUTPUT,  # ``-M`` values are YAML: maybe not text
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
