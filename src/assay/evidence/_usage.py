"""Token usage and cost summed over ``sampling`` events: per trial, per target, per run.

The trial's recorder adds up every ``sampling`` event it appends, so a bundle's
``usage`` is the sum of exactly the calls its event list holds; reports then add up
bundles. Cost is ``None`` as soon as one call had no price: an unknown part makes the
total unknown, and a report must not show it as a smaller number.

Grading is counted apart: while one scorer judges one trial, ``counting_calls`` collects
the ``score_sampling`` calls it makes (the recorder's, in a run; the replayed ones, in a
re-score), and that usage goes on the scorer's score record, never into the bundle's.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import msgspec


class Usage(msgspec.Struct):
    """Tokens, calls and cost of some model calls.

    Attributes:
        input_tokens: tokens read.
        output_tokens: tokens written.
        total_tokens: the two together.
        calls: model calls.
        cached_calls: of those, answered from the response cache.
        cost: price-table cost of all calls (a cached one at what it cost when made);
            ``None`` when a call's model has no price.
        cached_cost: the part of ``cost`` the cache answered (not spent again).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0
    cost: float | None = 0.0
    cached_cost: float | None = 0.0

    def add_sampling(self, data: dict[str, Any]) -> None:
        """Count one ``sampling`` event's data (a model call names its ``model``)."""
        tokens = data.get("usage")
        if isinstance(tokens, dict):  # _tokens, inlined (once a model call)
            read, written = int(tokens.get("input_tokens", 0)), int(tokens.get("output_tokens", 0))
            self.input_tokens += read
            self.output_tokens += written
            self.total_tokens += read + written
        if "model" not in data:
            return  # a target's own answer, not a model call
        cached = bool(data.get("cached"))
        self.calls += 1
        self.cached_calls += cached
        cost = data.get("cost")
        self.cost = _plus(self.cost, cost)
        if cached:
            self.cached_cost = _plus(self.cached_cost, cost)

    def add(self, other: Usage) -> None:
        """Add *other*'s totals to these."""
        self._tokens(other.input_tokens, other.output_tokens)
        self.calls += other.calls
        self.cached_calls += other.cached_calls
        self.cost = _plus(self.cost, other.cost)
        self.cached_cost = _plus(self.cached_cost, other.cached_cost)

    def add_record(self, record: dict[str, Any]) -> None:
        """Add a bundle's usage record (``record()``'s form): ``add(Usage.of(record))``
        without the ``Usage`` made for it (a report sums every trial's)."""
        get = record.get  # an older bundle's record may lack a field: its default
        read, written = int(get("input_tokens", 0)), int(get("output_tokens", 0))
        self.input_tokens += read  # _tokens, inlined (once a trial)
        self.output_tokens += written
        self.total_tokens += read + written
        self.calls += int(get("calls", 0))
        self.cached_calls += int(get("cached_calls", 0))
        self.cost = _plus(self.cost, get("cost", 0.0))
        self.cached_cost = _plus(self.cached_cost, get("cached_cost", 0.0))

    def _tokens(self, read: int, written: int) -> None:
        self.input_tokens += read
        self.output_tokens += written
        self.total_tokens += read + written

    @property
    def empty(self) -> bool:
        """True when nothing was counted."""
        return self.calls == 0 and self.total_tokens == 0

    def record(self) -> dict[str, Any]:
        """The plain record a bundle holds."""
        return msgspec.structs.asdict(self)

    @staticmethod
    def of(record: dict[str, Any] | None) -> Usage:
        """A Usage from a bundle's record (empty without one)."""
        return Usage() if not record else msgspec.convert(record, Usage)


def _plus(total: float | None, cost: Any) -> float | None:
    if total is None or cost is None:
        return None
    return total + float(cost)


_counting: ContextVar[Usage | None] = ContextVar("assay_grading_usage", default=None)


class counting_calls:  # lower case: used like a function, ``with counting_calls() as used``
    """Collect the usage of the model calls a scorer makes inside the block.

    A context variable rather than an argument: the calls happen deep inside a user's
    scorer, and each trial's scoring runs in its own task, so trials never mix. A class,
    not ``@contextmanager``: it runs once per scorer per trial (1 µs, not 2.3).
    """

    __slots__ = ("_token", "usage")

    def __init__(self) -> None:
        self.usage = Usage()

    def __enter__(self) -> Usage:
        self._token = _counting.set(self.usage)
        return self.usage

    def __exit__(self, *exc: object) -> None:
        _counting.reset(self._token)


def count_call(data: dict[str, Any]) -> None:
    """Count one grader call (a ``score_sampling`` event's data) where it is collected."""
    usage = _counting.get()
    if usage is not None:
        usage.add_sampling(data)
