"""The sandboxes around each trial of a run, and the run's ``max_sandboxes`` cap.

A run whose task declares sandboxes, or that caps them, wraps every trial in a
``TrialSandboxes`` (``sandbox/_lifecycle``): the sample's own sandboxes are opened there
when an attempt starts, and scorers that make sandboxes of their own (``python_tests``,
``run_python``) take the trial's slot of the same cap. A run with neither never imports
the sandbox machinery (``assay run`` stays fast).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import anyio

from assay._messages import say
from assay._slots import pinned

if TYPE_CHECKING:
    from assay.sandbox._lifecycle import TrialSandboxes


class RunSandboxes:
    """One run's sandbox settings and the cap's limiter, shared by all its trials."""

    def __init__(self, declared: bool, cap: int | None, cleanup: bool) -> None:
        self.declared = declared  # some trial may open sandboxes of its sample
        self.cap = cap
        self.cleanup = cleanup
        self._limiter: anyio.CapacityLimiter | None = None

    @property
    def needed(self) -> bool:
        """Whether any trial may need ``around`` (a run without sandboxes skips it)."""
        return self.declared or self.cap is not None

    @contextlib.asynccontextmanager
    async def around(self, trial_id: str) -> AsyncIterator[TrialSandboxes | None]:
        """The trial's sandboxes for the block (``None`` when the run needs none),
        removed or kept when it ends."""
        if not self.declared and self.cap is None:
            yield None
            return
        from assay.sandbox._lifecycle import trial_sandboxes

        if self._limiter is None and self.cap is not None:
            self._limiter = anyio.CapacityLimiter(self.cap)

        def kept(name: str, path: str) -> None:
            print(say("out.sandbox_kept", name=name, trial=trial_id, path=path), file=sys.stderr)

        # pinned: a trial holding sandboxes keeps its slot while it waits to retry, so
        # no more sandboxes are alive than trials in flight (``assay._slots``)
        async with trial_sandboxes(self._limiter, self.cleanup, kept) as sandboxes:
            with pinned():
                yield sandboxes


def bound(sandboxes: TrialSandboxes | None) -> contextlib.AbstractContextManager[object]:
    """What ``sandbox()`` returns inside the block: the trial's sandboxes, if it has any."""
    if sandboxes is None:
        return contextlib.nullcontext()
    from assay.sandbox import sandbox_scope

    return sandbox_scope(sandboxes.environments)
