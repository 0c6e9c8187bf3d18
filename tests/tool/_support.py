"""Running a tool the way the tool loop does, in a real sandbox bound with sandbox_scope."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from assay.sandbox import SandboxEnvironment, make_sandbox, sandbox_scope
from assay.solver import Tool, ToolError

PROVIDERS = ["local", "bwrap"]
T = TypeVar("T")


async def answer(tool: Tool, **arguments: Any) -> str:
    """What the model is shown for this call: the answer, or ``Error: ...`` for a
    ToolError (as ``call_tools`` tells it)."""
    try:
        return await tool.execute(arguments)
    except ToolError as exc:
        return f"Error: {exc}"


def in_sandbox(
    provider: str,
    body: Callable[[SandboxEnvironment], Awaitable[T]],
    **options: Any,
) -> T:
    """Run *body* with a new sandbox of *provider* bound as the sample's ``sandbox()``."""

    async def main() -> T:
        async with make_sandbox(provider, **options) as env:
            with sandbox_scope({"default": env}):
                return await body(env)

    return anyio.run(main)
