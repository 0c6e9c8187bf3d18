"""What the sample table is asked for and what it answers: a query, its rows, a page.

Kept apart from the table itself (``_table``) because the first pages of a big run are
served before its table is built (``_quick``), in the same shapes.
"""

from __future__ import annotations

from typing import Any

import msgspec

PENDING = "pending"
NOT_SCORED = "-"
PREVIEW_CHARS = 160
PER_PAGE = 50
SORTS = ("index", "sample", "target", "state", "score")


class Query(msgspec.Struct, frozen=True):
    """What the sample table was asked for (from the page's query parameters)."""

    target: str = ""
    state: str = ""
    scorer: str = ""
    status: str = ""
    q: str = ""
    sort: str = "index"
    page: int = 1
    per: int = PER_PAGE

    def filters(self) -> tuple[str, str, str, str, str]:
        """The part of the query that selects rows (not the search, not the page)."""
        return (self.target, self.state, self.scorer, self.status, self.sort)


class Row(msgspec.Struct):
    """One trial as the table shows it."""

    index: int
    trial_id: str
    sample_id: str
    target_id: str
    repetition: int
    state: str
    scores: list[tuple[str, str, float | None]]
    input: str = ""
    output: str = ""


class Page(msgspec.Struct):
    """One page of rows; ``total`` is None when a search stopped once the page was full."""

    rows: list[Row]
    total: int | None
    more: bool


def as_text(value: Any) -> str:
    """A value as a row shows it: a string as is, anything else as JSON."""
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def cut(text: str) -> str:
    """*text* cut to PREVIEW_CHARS for a row of the table."""
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "…"
