"""``assay.scorer``: Inspect's module name for scorers and metrics (``inspect_ai.scorer``).

The same objects as ``assay.score``, under the name an Inspect task imports, so porting
one changes only ``inspect_ai`` to ``assay`` in its imports; with ``Target``, which
Inspect's scorer module exports too.
"""

from assay.score import *  # noqa: F403  (the whole public API, re-exported as it is)
from assay.score import __all__ as _score_all
from assay.solver import Target

__all__ = [*_score_all, "Target"]
