"""Hooks: code called as every run starts, finishes a sample and ends (Inspect's
``inspect_ai.hooks``).

A hook is a subclass of ``Hooks`` whose methods are called with a payload of plain
values (copies: a hook holds no handle on the run's evidence, so it cannot change it).
It is found either from code (``@hooks("name")`` on the class, in a module the run
imports) or from an installed package, as an entry point of the ``assay.hooks`` group
(``audit = "acme_assay:AuditHooks"``; see ``assay._plugins``). Each class is made once
per process. A hook that raises is one line on stderr naming it; the run goes on and
its evidence is the same as without the hook.

Methods may be ``async`` or plain; each run calls, in order, ``on_run_start`` once,
``on_sample_start`` and ``on_sample_end`` for each trial it runs (a sample × target ×
epoch), and ``on_run_end`` once, after the evidence is sealed, whatever the run's end.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import msgspec

from assay._messages import say

RunStatus = Literal["complete", "interrupted", "stopped", "error"]


class RunStart(msgspec.Struct, frozen=True):
    """A run is starting: its evaluation, spec digest, trials planned, folder (``None``
    on a dry run) and whether it resumes an earlier one."""

    evaluation: str
    spec_digest: str
    planned: int
    path: str | None
    resumed: bool


class SampleStart(msgspec.Struct, frozen=True):
    """One trial (a sample for a target, in one epoch) is starting."""

    evaluation: str
    trial_id: str
    sample_id: str
    target_id: str
    epoch: int


class SampleEnd(msgspec.Struct, frozen=True):
    """One trial ended and was scored: its state (``completed``, ``errored``, ...) and,
    by scorer id, the status (``passed``, ``failed``, ...) and value of its score."""

    evaluation: str
    trial_id: str
    sample_id: str
    target_id: str
    epoch: int
    state: str
    scores: dict[str, dict[str, Any]]


class RunEnd(msgspec.Struct, frozen=True):
    """A run ended: ``complete``, ``interrupted`` (Ctrl-C), ``stopped`` (a fatal error
    after some trials: reports written) or ``error``; the gate's decision when there was
    one, and the error's one line when there was one."""

    evaluation: str
    path: str | None
    status: RunStatus
    gate: str | None = None
    error: str | None = None


class Hooks:
    """Override the methods you need; each is called with the payload of its event."""

    def enabled(self) -> bool:
        """Whether this hook takes part in runs at all (e.g. only when a key is set)."""
        return True

    async def on_run_start(self, data: RunStart) -> None:
        """A run starts (after its plan is written, before any trial)."""

    async def on_sample_start(self, data: SampleStart) -> None:
        """A trial starts."""

    async def on_sample_end(self, data: SampleEnd) -> None:
        """A trial's evidence and scores are written."""

    async def on_run_end(self, data: RunEnd) -> None:
        """A run's evidence is sealed and closed (and its reports written, if it has them)."""


H = TypeVar("H", bound=type[Hooks])
_registered: dict[str, type[Hooks]] = {}
_made: dict[str, Hooks] | None = None


def hooks(name: str, description: str | None = None) -> Callable[[H], H]:
    """Register a Hooks subclass under *name* (*description* is for people reading it)."""

    def register(cls: H) -> H:
        global _made
        _registered[name] = cls
        _made = None  # made again, with this one, at the next run
        return cls

    return register


class HookSet:
    """The hooks of one run: each event goes to each enabled hook, in name order."""

    def __init__(self, named: list[tuple[str, Hooks]]) -> None:
        self.named = named

    def __bool__(self) -> bool:
        return bool(self.named)

    async def emit(self, event: str, data: msgspec.Struct) -> None:
        """Call *event* on every hook; a hook's exception is one line on stderr."""
        encoded = msgspec.json.encode(data)
        for name, hook in self.named:
            own = msgspec.json.decode(encoded, type=type(data))  # one hook's edits stay its own
            try:
                result = getattr(hook, event)(own)
                if inspect.isawaitable(result):
                    await result
            except (Exception, SystemExit) as exc:  # sys.exit() in a hook ends no run
                _report_failure(name, event, exc)


def _report_failure(name: str, event: str, exc: BaseException) -> None:
    """One line on stderr: the hook, where it failed, and why."""
    error = f"{type(exc).__name__}: {exc}"
    print(say("plugin.hook_failed", name=name, event=event, error=error), file=sys.stderr)


def active_hooks() -> HookSet:
    """The hooks of a run starting now: those registered in code and those installed,
    made once per process, less any whose ``enabled()`` says no (or raises)."""
    named: list[tuple[str, Hooks]] = []
    for name, hook in load_hooks().items():
        try:
            if hook.enabled():
                named.append((name, hook))
        except (Exception, SystemExit) as exc:
            _report_failure(name, "enabled", exc)
    return HookSet(named)


def load_hooks() -> dict[str, Hooks]:
    """Every hook, made on first use: a plugin that is not a Hooks class, or fails to
    import, is a ConfigError here (``eval`` asks before any unit, so it is exit 2)."""
    global _made
    if _made is None:
        _made = _make_all()
    return _made


def _make_all() -> dict[str, Hooks]:
    from assay._plugins import load_plugins
    from assay.errors import ConfigError

    found: dict[str, Any] = dict(load_plugins("hooks"))
    found.update(_registered)
    made: dict[str, Hooks] = {}
    for name in sorted(found):
        cls = found[name]
        if not (isinstance(cls, type) and issubclass(cls, Hooks)):
            raise ConfigError("plugin.hook_type", name=name, kind=type(cls).__name__)
        try:
            made[name] = cls()
        except (Exception, SystemExit) as exc:  # its own setup failed: as if it raised
            _report_failure(name, "__init__", exc)
    return made


__all__ = [
    "HookSet",
    "Hooks",
    "RunEnd",
    "RunStart",
    "SampleEnd",
    "SampleStart",
    "active_hooks",
    "hooks",
    "load_hooks",
]
