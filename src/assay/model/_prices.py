"""Prices of model calls: USD per million input and output tokens, by ``provider/name``.

Where a price comes from, most specific first: a price file given to the run
(``eval(prices=FILE)``, ``assay run --prices FILE``, or the ``ASSAY_PRICES`` variable,
read when ``eval`` or ``resume`` starts and put in force with ``price_scope``), then
``set_price`` calls, then the small built-in table below. A model found nowhere
has no price: its cost is ``None`` ("unknown"), never 0, so a report cannot claim a
run was free when it simply was not priced.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import msgspec

from assay.errors import ConfigError
from assay.model._output import ModelUsage

PRICES_ENV = "ASSAY_PRICES"
PER = 1_000_000


class Price(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """USD per million tokens read (``input``) and written (``output``)."""

    input: float
    output: float

    def cost(self, usage: ModelUsage) -> float:
        """What *usage* costs at this price."""
        return (usage.input_tokens * self.input + usage.output_tokens * self.output) / PER


# List prices as published by the providers when this table was written: a default to
# check against your own contract, not a promise. Local models cost nothing per token.
BUILTIN_PRICES: dict[str, Price] = {
    "openai/gpt-4o": Price(2.50, 10.00),
    "openai/gpt-4o-mini": Price(0.15, 0.60),
    "openai/gpt-4.1": Price(2.00, 8.00),
    "openai/gpt-4.1-mini": Price(0.40, 1.60),
    "openai/gpt-4.1-nano": Price(0.10, 0.40),
    "openai/o3-mini": Price(1.10, 4.40),
    "anthropic/claude-3-5-haiku-latest": Price(0.80, 4.00),
    "anthropic/claude-3-5-sonnet-latest": Price(3.00, 15.00),
    "anthropic/claude-sonnet-4-0": Price(3.00, 15.00),
    "anthropic/claude-opus-4-0": Price(15.00, 75.00),
    "local/smollm2": Price(0.0, 0.0),
}

_user_prices: dict[str, Price] = {}
_file_prices: ContextVar[Mapping[str, Price] | None] = ContextVar("assay_prices", default=None)


def set_price(model: str, *, input: float, output: float) -> None:
    """Price *model* (``provider/name``) at *input* / *output* USD per million tokens.

    Overrides the built-in table for this process; a price file given to a run wins.
    """
    if min(input, output) < 0:
        raise ConfigError("prices.negative", model=model)
    _user_prices[model] = Price(float(input), float(output))


def get_price(model: str) -> Price | None:
    """The price in force for *model*, or ``None`` when no table names it."""
    table = _file_prices.get()
    price = table.get(model) if table else None
    if price is not None:
        return price
    return _user_prices.get(model) or BUILTIN_PRICES.get(model)


def cost_of(model: str, usage: ModelUsage) -> float | None:
    """The cost of one call to *model* that used *usage*; ``None`` if it has no price."""
    price = get_price(model)
    return None if price is None else price.cost(usage)


def load_prices(path: str | os.PathLike[str]) -> dict[str, Price]:
    """Read a price file: YAML or JSON, ``provider/name: {input: X, output: Y}``."""
    import yaml  # deferred: only runs given a price file need it

    where = str(path)
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        table = msgspec.convert(raw, dict[str, Price])
    except OSError as exc:
        raise ConfigError("prices.file", path=where, reason=exc.strerror or str(exc)) from None
    except (yaml.YAMLError, UnicodeDecodeError, msgspec.ValidationError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError("prices.file", path=where, reason=reason) from None
    for model, price in table.items():
        if min(price.input, price.output) < 0:
            raise ConfigError("prices.negative", model=model)
    return table


def prices_from_env() -> dict[str, Price] | None:
    """The table the ``ASSAY_PRICES`` variable names, or ``None`` when it is not set.

    Read by ``eval`` and ``resume`` when they start (not per call: looking the variable
    up costs more than pricing the call), then put in force with ``price_scope``.
    """
    path = os.environ.get(PRICES_ENV)
    return load_prices(path) if path else None


def current_prices() -> Mapping[str, Price] | None:
    """The run's price table in force here (``price_scope``'s), or ``None``: what a run
    on a cluster sends its workers, so their calls are priced as the driver's would be."""
    return _file_prices.get()


@contextmanager
def price_scope(table: Mapping[str, Price] | None) -> Iterator[None]:
    """Price calls made inside the block from *table* first (a run's price file)."""
    token = _file_prices.set(table)
    try:
        yield
    finally:
        _file_prices.reset(token)
