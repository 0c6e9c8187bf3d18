"""Models: messages, generation config, providers, retries, budgets.

A provider raises ``InfrastructureError`` for a failure a retry may fix and
``ModelError`` for one it cannot; ``Model`` does the retrying (see docs/models.md).
"""

from assay._infra import InfrastructureError
from assay.model._budget import Budget, LimitExceeded, Limits, budget_scope, current_budget
from assay.model._calls import ModelError
from assay.model._config import GenerateConfig
from assay.model._gate import AdaptiveGate
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
from assay.model._output import Logprob, ModelOutput, ModelUsage, StopReason, TopLogprob
from assay.model._registry import get_model, modelapi
from assay.model._replay import Replay, ReplayMiss, current_replay, replay_scope

__all__ = [
    "AdaptiveGate",
    "Budget",
    "ChatMessage",
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
    "Replay",
    "ReplayMiss",
    "Role",
    "StopReason",
    "ToolCall",
    "TopLogprob",
    "assistant_message",
    "budget_scope",
    "current_budget",
    "current_replay",
    "get_model",
    "modelapi",
    "replay_scope",
    "system_message",
    "tool_message",
    "user_message",
]
