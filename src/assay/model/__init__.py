"""Models: messages, generation config, providers, retries, budgets, the response cache
and prices.

A provider raises ``InfrastructureError`` for a failure a retry may fix and
``ModelError`` for one it cannot; ``Model`` does the retrying (see docs/models.md).
"""

from assay._infra import InfrastructureError
from assay.model._budget import Budget, LimitExceeded, Limits, budget_scope, current_budget
from assay.model._cache import (
    DEFAULT_EXPIRY,
    CacheEntry,
    ResponseCache,
    cache_scope,
    current_cache,
    default_cache_dir,
    parse_expiry,
)
from assay.model._cache_key import cache_key, current_epoch, epoch_scope
from assay.model._calls import ModelError
from assay.model._config import (
    EFFORTS,
    REASONING_EFFORTS,
    REASONING_SUMMARIES,
    TOOL_CHOICES,
    VERBOSITIES,
    GenerateConfig,
    ResponseSchema,
)
from assay.model._content import Content, ContentImage, ContentReasoning, ContentText
from assay.model._gate import AdaptiveGate
from assay.model._messages import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Role,
    ToolCall,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)
from assay.model._mock import MockAPI
from assay.model._model import Model, ModelAPI
from assay.model._output import (
    ChatCompletionChoice,
    Logprob,
    ModelOutput,
    ModelUsage,
    StopReason,
    TopLogprob,
)
from assay.model._prices import (
    BUILTIN_PRICES,
    Price,
    cost_of,
    get_price,
    load_prices,
    price_scope,
    prices_from_env,
    set_price,
)
from assay.model._registry import get_model, modelapi, models_built
from assay.model._replay import Replay, ReplayMiss, current_replay, replay_scope

__all__ = [
    "BUILTIN_PRICES",
    "DEFAULT_EXPIRY",
    "EFFORTS",
    "REASONING_EFFORTS",
    "REASONING_SUMMARIES",
    "TOOL_CHOICES",
    "VERBOSITIES",
    "AdaptiveGate",
    "Budget",
    "CacheEntry",
    "ChatCompletionChoice",
    "ChatMessage",
    "ChatMessageAssistant",
    "ChatMessageSystem",
    "ChatMessageTool",
    "ChatMessageUser",
    "Content",
    "ContentImage",
    "ContentReasoning",
    "ContentText",
    "GenerateConfig",
    "InfrastructureError",
    "LimitExceeded",
    "Limits",
    "Logprob",
    "MockAPI",
    "Model",
    "ModelAPI",
    "ModelError",
    "ModelOutput",
    "ModelUsage",
    "Price",
    "Replay",
    "ReplayMiss",
    "ResponseCache",
    "ResponseSchema",
    "Role",
    "StopReason",
    "ToolCall",
    "TopLogprob",
    "assistant_message",
    "budget_scope",
    "cache_key",
    "cache_scope",
    "cost_of",
    "current_budget",
    "current_cache",
    "current_epoch",
    "current_replay",
    "default_cache_dir",
    "epoch_scope",
    "get_model",
    "get_price",
    "load_prices",
    "modelapi",
    "models_built",
    "parse_expiry",
    "price_scope",
    "prices_from_env",
    "replay_scope",
    "set_price",
    "system_message",
    "tool_message",
    "user_message",
]
