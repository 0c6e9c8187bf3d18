"""assay: evaluate LLMs, agents and any program that answers inputs.

Every score points at the exact output bytes it judged, every digest can be re-derived
offline, and the release gate says ``inconclusive`` rather than guess.
"""

__version__ = "0.1.0"

from assay.evidence import record_event

__all__ = ["__version__", "record_event"]
