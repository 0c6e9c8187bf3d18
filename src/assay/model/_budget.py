"""Per-trial budgets: tokens, cost and messages spent so far, and the limits on them.

A limit is not an error: when a trial runs out of budget the solver chain stops, the
trial keeps the state it reached, and that state is scored. ``LimitExceeded`` carries
which limit was hit; the runner records it and moves on to scoring.
"""

from __future__ import annotations

import time

import msgspec

from assay.model._bound import BoundScope, bound_now
from assay.model._output import ModelUsage


class Limits(msgspec.Struct, frozen=True, omit_defaults=True):
    """Per-sample limits; ``None`` means no limit.

    Attributes:
        message_limit: most messages in the conversation.
        token_limit: most tokens (input + output) over all model calls of the trial.
        time_limit: most seconds of wall time for the trial.
        working_limit: most seconds of work, not counting time spent waiting for a
            connection slot or a retry backoff.
        cost_limit: most cost (in the price table's currency) over all calls.
    """

    message_limit: int | None = None
    token_limit: int | None = None
    time_limit: float | None = None
    working_limit: float | None = None
    cost_limit: float | None = None


class LimitExceeded(Exception):
    """A trial ran out of budget: ``kind`` is ``message``, ``token``, ``time``, ``working``
    or ``cost``; ``value`` what was used, ``limit`` what was allowed."""

    def __init__(self, kind: str, value: float, limit: float) -> None:
        self.kind, self.value, self.limit = kind, value, limit
        super().__init__(f"{kind} limit of {limit:g} reached ({value:g})")


_NOTHING_SPENT = ModelUsage()


class Budget:
    """What one trial has spent, checked against its limits after every model call."""

    __slots__ = ("calls", "cost", "limits", "started", "usage", "waited")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.usage = _NOTHING_SPENT  # frozen: ``spend`` replaces it, never changes it
        self.cost = 0.0
        self.calls = 0
        self.waited = 0.0
        self.started = time.monotonic()

    def spend(self, usage: ModelUsage, cost: float) -> None:
        """Add one call's usage; raise LimitExceeded once a limit is passed."""
        spent = self.usage  # ModelUsage.__add__, inlined (a call a model call)
        self.usage = ModelUsage(
            spent.input_tokens + usage.input_tokens, spent.output_tokens + usage.output_tokens
        )
        self.cost += cost
        self.calls += 1
        limits = self.limits
        if limits.token_limit is not None and self.usage.total_tokens > limits.token_limit:
            raise LimitExceeded("token", self.usage.total_tokens, limits.token_limit)
        if limits.cost_limit is not None and self.cost > limits.cost_limit:
            raise LimitExceeded("cost", self.cost, limits.cost_limit)
        if limits.working_limit is not None:
            working = time.monotonic() - self.started - self.waited
            if working > limits.working_limit:
                raise LimitExceeded("working", working, limits.working_limit)


def current_budget() -> Budget | None:
    """The budget of the trial running in this context, if any."""
    return bound_now().budget


def budget_scope(budget: Budget) -> BoundScope[Budget]:
    """Make *budget* the current trial's budget inside the block."""
    return BoundScope("budget", budget)
