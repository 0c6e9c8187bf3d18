"""Inspect's ``eval`` options that steer its console and its log writing, which assay
has no counterpart of: ``eval`` prints nothing (progress goes to a ``progress``
callback) and a run's evidence is always written whole.

Those that only change how things are shown (``display="none"``, ``log_level``...) are
taken and change nothing; those asking for less evidence than assay always keeps
(``log_samples=False``, ``score=False``...) are refused in one line, never dropped.
"""

from __future__ import annotations

from typing import Any

from assay.errors import ConfigError

SHOWN_ONLY = frozenset(
    {
        "display",
        "log_level",
        "log_level_transcript",
        "score_display",
        "log_buffer",
        "log_shared",
        "log_realtime",
    }
)
"""Taken with any value: they change what Inspect shows, not what is run or kept."""

ONLY_AS_KEPT = {
    "log_samples": (True, "every sample is kept in the run's evidence"),
    "log_images": (True, "images are kept in the evidence as data URIs"),
    "score": (True, "every trial is scored as it ends ('assay score RUN' scores again)"),
    "trace": (False, "there is no trace console: follow a run with 'assay show'"),
}
"""Taken at the value assay always has; another value is refused, with why."""


def take_display_options(options: dict[str, Any]) -> None:
    """Remove Inspect's display and log-writing options from *options*.

    Raises:
        ConfigError: one asks for something assay does not do (``score=False``).
    """
    for name in [n for n in options if n in SHOWN_ONLY]:
        del options[name]
    for name, (kept, why) in ONLY_AS_KEPT.items():
        if name in options and bool(options.pop(name)) is not kept:
            raise ConfigError("task.option", option=f"eval({name}={not kept})", reason=why)
