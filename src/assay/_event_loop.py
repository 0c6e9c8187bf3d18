"""The event loop assay's blocking entry points run on: uvloop's when it is installed.

uvloop (libuv's loop, in C) runs a callback, a timer and a socket read or write with
less Python around them than asyncio's selector loop, and a run at high concurrency is
mostly those: on the network bench (``bench/network.py``: 5,000 samples against a
local server at 500 connections) a sample cost 5 % less CPU on it, the trivial task
(mock model) 2-3 % less. Everything assay does on a loop (subprocesses, signals,
``add_reader``, threads through ``to_thread``) works on both; the tests run on the one
installed. ``ASSAY_EVENT_LOOP=asyncio`` keeps asyncio's own loop (to compare, or for a
library that needs it); ``uvloop`` (the default) falls back to asyncio's when uvloop is
not installed (it is a dependency on Linux and macOS, not on Windows).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import anyio

from assay.errors import ConfigError

T = TypeVar("T")
CHOICES = ("uvloop", "asyncio")


def run(function: Callable[[], Awaitable[T]]) -> T:
    """``anyio.run(function)`` on the loop ``ASSAY_EVENT_LOOP`` chooses (module doc).

    The result comes back in a ``_Box``: as the loop closes, asyncio's runner checks
    its SIGINT handler (``signal.getsignal``), which formats that handler with ``%r``,
    and so the main task with its result. An eval's results written out in full took
    2-3 ms each time (twice, after the last answer); a box's repr costs nothing."""

    async def boxed() -> _Box[T]:
        return _Box(await function())

    return anyio.run(boxed, backend_options=backend_options()).value


class _Box(Generic[T]):
    """A value whose repr does not show it (``run``)."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


def backend_options() -> dict[str, Any]:
    """anyio's asyncio-backend options for the chosen loop."""
    return {"use_uvloop": loop_name() == "uvloop"}


def loop_name() -> str:
    """``uvloop`` or ``asyncio``: the loop a run gets here (``ConfigError`` for a value
    of ``ASSAY_EVENT_LOOP`` that names neither)."""
    wanted = os.environ.get("ASSAY_EVENT_LOOP", "") or "uvloop"
    if wanted not in CHOICES:
        raise ConfigError("run.event_loop", value=wanted, choices=", ".join(CHOICES))
    if wanted == "uvloop" and importlib.util.find_spec("uvloop") is None:
        return "asyncio"
    return wanted
