"""``assay._registry``: a product rebuilt for a new trial is a new product of the same
factory and arguments, and remembers the same name and arguments as the original."""

from __future__ import annotations

from typing import Any

from assay._registry import rebuild, registered, registry_info

made: list[tuple[str, int]] = []


class Counter:
    """A stateful product: what a fresh solver per trial exists for."""

    def __init__(self, label: str, step: int) -> None:
        self.label, self.step, self.seen = label, step, 0


@registered("solver", "test_counter")
def counter(label: str, step: int = 1, **extra: Any) -> Counter:
    made.append((label, step))
    return Counter(label, step)


def test_a_rebuilt_product_is_new_and_carries_the_same_info() -> None:
    made.clear()
    first = counter("a", step=3, note="kept")
    first.seen = 5
    again = rebuild(first)
    assert isinstance(again, Counter) and again is not first
    assert (again.label, again.step, again.seen) == ("a", 3, 0)
    assert made == [("a", 3), ("a", 3)]  # the factory ran again
    info = registry_info(again)
    assert info == registry_info(first)
    assert info is not None
    assert (info.kind, info.name, info.args) == (
        "solver",
        "test_counter",
        {"label": "a", "step": 3, "note": "kept"},
    )
    third = rebuild(again)  # a rebuilt product can be rebuilt in turn
    assert isinstance(third, Counter) and registry_info(third) == info


def test_what_no_registered_factory_made_is_not_rebuilt() -> None:
    assert rebuild(Counter("b", 1)) is None
