"""Registering components by name, with the arguments they were made with.

``@task``, ``@solver``, ``@scorer`` and ``@metric`` all go through ``registered``: the
decorated factory still returns what it returned, but the result remembers the name and
the (JSON-safe) arguments it was built from, so a spec can record it and a run can be
rebuilt from its directory. Built-ins register through the same path as plugins.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

F = TypeVar("F", bound=Callable[..., Any])

_REGISTRY: dict[tuple[str, str], Callable[..., Any]] = {}
_INFO = "__assay_registry__"
_CALL = "__assay_call__"


class RegistryInfo(msgspec.Struct, frozen=True):
    """Which registered factory made an object, and with which arguments."""

    kind: str
    name: str
    args: dict[str, Any]


_WHEN_GIVEN = "__assay_recorded_when_given__"


def recorded_when_given(*names: str) -> Callable[[F], F]:
    """Record the parameters *names* of a factory only when they differ from their defaults.

    For parameters added to a built-in after runs were recorded with it: every other
    argument is recorded with its default, so a new one recorded the same way would change
    the digest of every spec using the factory and older runs would no longer resume. Put
    it under the registering decorator (``@solver`` above it)."""

    def mark(factory: F) -> F:
        setattr(factory, _WHEN_GIVEN, frozenset(names))
        return factory

    return mark


def registered(kind: str, name: str | None = None) -> Callable[[F], F]:
    """Decorate a factory so its products carry ``RegistryInfo`` (kind, name, args)."""

    def decorate(factory: F) -> F:
        label = name or factory.__name__
        signature = inspect.signature(factory)
        when_given: frozenset[str] = getattr(factory, _WHEN_GIVEN, frozenset())

        @functools.wraps(factory)
        def make(*args: Any, **kwargs: Any) -> Any:
            product = factory(*args, **kwargs)
            call = _call_args(signature, args, kwargs)
            for unrecorded in when_given:
                if call.get(unrecorded) == signature.parameters[unrecorded].default:
                    del call[unrecorded]
            info = RegistryInfo(kind, label, json_safe(call))
            # A product that takes no attributes (a builtin) is still used, just not
            # rebuildable by name.
            with contextlib.suppress(AttributeError, TypeError):
                setattr(product, _INFO, info)
                setattr(product, _CALL, (make, args, kwargs))
            return product

        make.__assay_kind__ = kind  # type: ignore[attr-defined]
        make.__assay_name__ = label  # type: ignore[attr-defined]
        _REGISTRY[(kind, label)] = make
        return make  # type: ignore[return-value]

    return decorate


def _call_args(
    signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The call as keyword arguments (``**extra`` flattened), so ``factory(**args)``
    rebuilds it; positional ``*rest`` is kept under ``"*"`` and cannot be rebuilt."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    result: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            result.update(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            if value:
                result["*"] = {"$repr": repr(value)}
        else:
            result[name] = value
    return result


def registry_info(obj: object) -> RegistryInfo | None:
    """The RegistryInfo an object was made with, if it came from a registered factory."""
    info = getattr(obj, _INFO, None)
    return info if isinstance(info, RegistryInfo) else None


def rebuild(obj: object) -> Any | None:
    """A new product from the same factory and the same (live) arguments, or ``None``.

    The factory itself is called (``make``'s ``__wrapped__``) and the new product gets
    *obj*'s own RegistryInfo: the same call gives the same info, and working it out again
    (binding the signature, making the arguments JSON-safe) was most of the cost of a
    fresh solver for every trial."""
    call = getattr(obj, _CALL, None)
    if call is None:
        return None
    make, args, kwargs = call
    product = make.__wrapped__(*args, **kwargs)
    with contextlib.suppress(AttributeError, TypeError):
        setattr(product, _INFO, getattr(obj, _INFO))
        setattr(product, _CALL, call)
    return product


def lookup(kind: str, name: str) -> Callable[..., Any] | None:
    """The registered factory of *kind* named *name*: registered in code, else offered by
    an installed package (``assay.scorers`` / ``assay.solvers`` entry points, read only
    for a name not registered yet)."""
    found = _REGISTRY.get((kind, name))
    if found is None and kind in ("scorer", "solver"):
        from assay._plugins import load_plugin

        found = load_plugin(kind, name)
        if found is not None:
            _REGISTRY[(kind, name)] = found
    return found


def json_safe(value: Any) -> Any:
    """*value* as JSON values; what JSON cannot hold becomes its ``repr`` (marked)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    info = registry_info(value)
    if info is not None:
        return {"$registered": info.kind, "name": info.name, "args": info.args}
    steps = getattr(value, "solvers", None)
    if isinstance(steps, list):  # a chain: its steps, in order
        return [json_safe(step) for step in steps]
    if callable(value) and hasattr(value, "__qualname__"):
        # A plain function: by name, never by memory address, so digests are stable.
        return {"$callable": f"{getattr(value, '__module__', '?')}.{value.__qualname__}"}
    try:
        return msgspec.to_builtins(value)
    except TypeError:
        return {"$repr": repr(value)}
