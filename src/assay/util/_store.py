"""``StoreModel``: typed fields over a trial's store, as Inspect's ``StoreModel``.

A trial's store (``TaskState.store``) is a plain dict written to the evidence with the
final state, so solvers and scorers can share values. A ``StoreModel`` subclass names
those values with types and defaults; ``state.store_as(Model)`` (or
``store_as(Model, store=...)``) gives an instance whose fields read from and write to
the store under ``Model:field`` keys, so two models never collide on a field name.
``store()`` and ``store_as(Model)`` find the running trial's store themselves, as
Inspect's do, inside its solvers and scorers.
"""

from __future__ import annotations

from typing import Any, TypeVar

from assay.errors import ConfigError

try:
    from pydantic import BaseModel, ConfigDict, Field
except ImportError:  # the `inspect` extra; say how to install it, not a traceback
    raise ConfigError("util.pydantic_missing") from None

from assay.solver._state import Store, current_state

_OWN = ("store", "instance")


class StoreModel(BaseModel):
    """Subclass with typed fields (pydantic); each field lives in the trial's store.

    Fields already in the store keep their value (a later solver or a scorer sees what
    an earlier one set); the others are written there with their defaults.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: Any = Field(default_factory=dict, exclude=True)
    instance: str | None = Field(default=None, exclude=True)

    def model_post_init(self, context: Any, /) -> None:
        """Bind every field to the store: read what is there, write what is not."""
        for name in _fields(type(self)):
            key = self._store_key(name)
            if key in self.store:
                object.__setattr__(self, name, self.store[key])  # no re-validation
            else:
                self.store[key] = getattr(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in _fields(type(self)):
            self.store[self._store_key(name)] = getattr(self, name)

    def _store_key(self, name: str) -> str:
        prefix = type(self).__name__
        return f"{prefix}:{self.instance}:{name}" if self.instance else f"{prefix}:{name}"


def _fields(model: type[StoreModel]) -> list[str]:
    return [name for name in model.model_fields if name not in _OWN]


T = TypeVar("T", bound=StoreModel)


def store() -> Store:
    """The store of the trial whose solver or scorer is running (Inspect's ``store()``).

    Raises:
        RuntimeError: called outside a trial's solvers and scorers.
    """
    return _current_store()


def store_as(
    model_type: type[T], instance: str | None = None, *, store: dict[str, Any] | None = None
) -> T:
    """The running trial's store (or *store*, a ``TaskState.store``) seen through
    *model_type*: the same as ``state.store_as(model_type, instance)``."""
    return model_type(store=_current_store() if store is None else store, instance=instance)


def _current_store() -> Store:
    state = current_state()
    if state is None:
        raise RuntimeError(
            "store() and store_as() read the running trial's store: call them from a "
            "solver or scorer, or pass store=state.store"
        )
    return state.store
