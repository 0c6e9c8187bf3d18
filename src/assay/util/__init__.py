"""Inspect's ``inspect_ai.util`` names that assay has: the sample's sandbox and typed
views of a trial's store (see docs/inspect.md for what differs and what is missing)."""

from assay.sandbox import SandboxEnvironment, sandbox
from assay.util._store import StoreModel, store_as

__all__ = ["SandboxEnvironment", "StoreModel", "sandbox", "store_as"]
