"""The cyclic garbage collector around a run's start and end.

CPython collects its young generation every 700 net allocations, and the older ones
every 10 young collections. A run's start allocates mostly objects that live as long
as the run or the process (the ~400 modules it imports, the dataset, the plan); each
collection walks them again and frees nothing: 10-25 ms of a network run's start and
end at 5,000 samples (``bench/net_timeline.py``: ``gc_start``, ``gc_end``). So:

- a package's lazy imports (``assay.eval`` importing the pipeline) run with the
  collector paused and freeze what they made (``collection_paused``): the young
  collection that would follow would walk every object they made;
- once the plan is written the run's survivors are frozen (``gc.freeze``): the young
  collections while the trials run (made rare by ``run._gc``) and the full ones no
  longer walk them; a run's call unfreezes everything as it returns
  (``survivors_frozen``), so garbage among them is freed by the collections after it.

Reference counting is untouched: only cycles among frozen objects wait (a process that
imports the pipeline and never runs keeps what the import made frozen, as modules
live on anyway).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_frozen = 0  # runs inside survivors_frozen now (runs can nest or overlap)


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block, and what exists at its end frozen
    (unless the collector was off already)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def freeze_survivors() -> None:
    """Move every object alive now out of the collector's sight (``gc.freeze``); only
    inside ``survivors_frozen``, which gives them back."""
    if _frozen:
        gc.freeze()


@contextlib.contextmanager
def survivors_frozen() -> Iterator[None]:
    """Allow ``freeze_survivors`` in the block; when the last such block ends, every
    object goes to the oldest generation (frozen, then unfrozen: the young generation
    left empty, so restoring a lower threshold does not set off a collection of what
    the run's end made, ~4 ms, on the way out)."""
    global _frozen
    _frozen += 1
    try:
        yield
    finally:
        _frozen -= 1
        if not _frozen:
            gc.freeze()
            gc.unfreeze()
