"""Inspect's ``inspect_ai.util`` names that assay has: the sample's sandbox and the
trial's store, plain (``store()``) or typed (``StoreModel``, ``store_as``),
``json_schema`` for a ``ResponseSchema``, and ``span`` / ``subtask``, named parts of a
trial nested in its evidence. See
docs/inspect.md for what differs and what is missing."""

from assay.sandbox import SandboxEnvironment, sandbox
from assay.util._json_schema import json_schema
from assay.util._span import span, subtask
from assay.util._store import Store, StoreModel, store, store_as

__all__ = [
    "SandboxEnvironment",
    "Store",
    "StoreModel",
    "json_schema",
    "sandbox",
    "span",
    "store",
    "store_as",
    "subtask",
]
