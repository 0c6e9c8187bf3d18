"""Sandboxes: where model-written code runs, one per sample.

``make_sandbox("bwrap")`` (the default, isolating) or ``make_sandbox("local")`` (no
isolation) gives a ``SandboxEnvironment``; ``async with`` creates and removes it.
See docs/sandbox.md for the API and the threat model.
"""

import typing as _typing

from assay._import_path import lazy_exports as _lazy_exports
from assay.sandbox._context import current_sandboxes, sandbox, sandbox_scope
from assay.sandbox._environment import SandboxEnvironment
from assay.sandbox._limits import Limits
from assay.sandbox._registry import (
    ENTRY_POINT_GROUP,
    make_sandbox,
    register_sandbox,
    sandbox_providers,
)
from assay.sandbox._result import ExecResult

if _typing.TYPE_CHECKING:
    from assay.sandbox._bwrap import BwrapSandbox
    from assay.sandbox._local import LocalSandbox

# the built-in providers, imported when first used (``make_sandbox`` too): a run whose
# samples have no sandbox never loads them
_PROVIDERS = {"BwrapSandbox": "assay.sandbox._bwrap", "LocalSandbox": "assay.sandbox._local"}
__getattr__ = _lazy_exports(__name__, _PROVIDERS, globals())

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
