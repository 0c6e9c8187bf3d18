"""Inspect's ``inspect_ai.util`` names that assay has: the sample's sandbox and the
trial's store, plain (``store()``) or typed (``StoreModel``, ``store_as``),
``json_schema`` for a ``ResponseSchema``, ``span`` / ``subtask``, named parts of a
trial nested in its evidence, limits on a block (``token_limit``, ``message_limit``,
``time_limit``, ``working_limit``), ``concurrency``, ``subprocess``, ``collect`` and
``resource``. See
docs/inspect.md for what differs and what is missing."""

from assay.model._scoped_limits import (
    LimitExceededError,
    message_limit,
    time_limit,
    token_limit,
    working_limit,
)
from assay.sandbox import ExecResult, SandboxEnvironment, sandbox
from assay.solver._state import Store
from assay.util._concurrency import concurrency
from assay.util._json_schema import json_schema
from assay.util._process import collect, resource, subprocess
from assay.util._span import span, subtask
from assay.util._store import StoreModel, store, store_as

__all__ = [
    "ExecResult",
    "LimitExceededError",
    "SandboxEnvironment",
    "Store",
    "StoreModel",
    "collect",
    "concurrency",
    "json_schema",
    "message_limit",
    "resource",
    "sandbox",
    "span",
    "store",
    "store_as",
    "subprocess",
    "subtask",
    "time_limit",
    "token_limit",
    "working_limit",
]
