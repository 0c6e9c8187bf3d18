"""Sandboxes: where model-written code runs, one per sample.

``make_sandbox("bwrap")`` (the default, isolating) or ``make_sandbox("local")`` (no
isolation) gives a ``SandboxEnvironment``; ``async with`` creates and removes it.
See docs/sandbox.md for the API and the threat model.
"""

from assay.sandbox._bwrap import BwrapSandbox
from assay.sandbox._context import current_sandboxes, sandbox, sandbox_scope
from assay.sandbox._environment import SandboxEnvironment
from assay.sandbox._limits import Limits
from assay.sandbox._local import LocalSandbox
from assay.sandbox._registry import (
    ENTRY_POINT_GROUP,
    make_sandbox,
    register_sandbox,
    sandbox_providers,
)
from assay.sandbox._result import ExecResult

__all__ = [
    "ENTRY_POINT_GROUP",
    "BwrapSandbox",
    "ExecResult",
    "Limits",
    "LocalSandbox",
    "SandboxEnvironment",
    "current_sandboxes",
    "make_sandbox",
    "register_sandbox",
    "sandbox",
    "sandbox_providers",
    "sandbox_scope",
]
