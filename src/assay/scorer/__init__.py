"""``assay.scorer``: Inspect's module name for scorers and metrics (``inspect_ai.scorer``).

The same objects as ``assay.score``, under the name an Inspect task imports, so porting
one changes only ``inspect_ai`` to ``assay`` in its imports; with ``Target``, which
Inspect's scorer module exports too.
"""

from collections.abc import Callable

from assay.score import *  # noqa: F403  (the whole public API, re-exported as it is)
from assay.score import __all__ as _score_all
from assay.score._score import ScoreValue
from assay.solver import Target

Value = ScoreValue
"""Inspect's name for what a ``Score`` holds: a letter, number, bool, list or dict."""

ValueToFloat = Callable[[ScoreValue], float]
"""Inspect's name for what ``value_to_float()`` returns."""

__all__ = [*_score_all, "Target", "Value", "ValueToFloat"]
