"""Models: messages, generation config, providers, budgets, the response cache, prices
and the ``mock`` provider."""

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
from assay.model._config import GenerateConfig
from assay.model._messages import (
    ChatMessage,
    Role,
    ToolCall,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)
from assay.model._mock import MockAPI
from assay.model._model import Model, ModelAPI
from assay.model._output import ModelOutput, ModelUsage, StopReason
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
from assay.model._registry import get_model, modelapi
from assay.model._replay import Replay, ReplayMiss, current_replay, replay_scope

__all__ = [
    "BUILTIN_PRICES",
    "DEFAULT_EXPIRY",
    "Budget",
    "CacheEntry",
    "ChatMessage",
    "GenerateConfig",
    "LimitExceeded",
    "Limits",
    "MockAPI",
    "Model",
    "ModelAPI",
    "ModelOutput",
    "ModelUsage",
    "Price",
    "Replay",
    "ReplayMiss",
    "ResponseCache",
    "Role",
    "StopReason",
    "ToolCall",
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
    "parse_expiry",
    "price_scope",
    "prices_from_env",
    "replay_scope",
    "set_price",
    "system_message",
    "tool_message",
    "user_message",
]
