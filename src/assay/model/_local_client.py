"""A minimal OpenAI chat-completions client for the local server (through the SDK).

Interim: the ``openai`` provider (another branch) replaces this once it is merged; the
interface is the same (``generate``, ``aclose``, ``base_url``).
"""

from __future__ import annotations

import json
from typing import Any

from assay.model._config import GenerateConfig
from assay.model._messages import ChatMessage, ToolCall, assistant_message
from assay.model._output import ModelOutput, ModelUsage, StopReason
from assay.target import InfrastructureError

LOCAL_KEY = "local"
"""The key sent to the local server: it needs none, and a real key must not go there."""

_STOP: dict[str | None, StopReason] = {
    "stop": "stop",
    "length": "max_tokens",
    "tool_calls": "tool_calls",
}


class LocalClient:
    """Chat completions against ``base_url`` with the SDK's retries off."""

    def __init__(self, name: str, config: GenerateConfig, base_url: str) -> None:
        from openai import AsyncOpenAI  # deferred: a heavy import

        self.name = name
        self.base_url = base_url
        timeout = config.timeout if config.timeout is not None else 600.0
        self._client = AsyncOpenAI(
            api_key=LOCAL_KEY, base_url=base_url, max_retries=0, timeout=timeout
        )

    async def generate(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
    ) -> ModelOutput:
        import openai

        params: dict[str, Any] = {
            "model": self.name,
            "messages": [_message(m) for m in messages],
        }
        if tools:
            params["tools"] = tools
        for field in ("temperature", "top_p", "max_tokens", "stop", "seed"):
            value = getattr(config, field)
            if value is not None:
                params[field] = value
        try:
            reply = await self._client.chat.completions.create(**params)
        except openai.APITimeoutError:
            raise InfrastructureError("timeout", self.base_url) from None
        except openai.APIConnectionError as exc:
            raise InfrastructureError("connection", f"{self.base_url}: {exc}") from None
        except openai.APIStatusError as exc:
            if exc.status_code == 429 or exc.status_code >= 500:
                raise InfrastructureError(f"http_{exc.status_code}", str(exc)) from None
            raise
        choice = reply.choices[0]
        calls = [
            ToolCall(c.id, c.function.name, json.loads(c.function.arguments or "{}"))
            for c in choice.message.tool_calls or []
            if c.type == "function"
        ]
        usage = ModelUsage(
            reply.usage.prompt_tokens if reply.usage else 0,
            reply.usage.completion_tokens if reply.usage else 0,
        )
        return ModelOutput(
            f"local/{self.name}",
            assistant_message(choice.message.content or "", calls or None),
            _STOP.get(choice.finish_reason, "unknown"),
            usage,
        )

    async def aclose(self) -> None:
        await self._client.close()


def _message(message: ChatMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function, "arguments": json.dumps(c.arguments)},
            }
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out
