"""``fail_on_error``: how many errored samples a Python task tolerates.

``True`` (the default) fails on the first error, ``False`` never; a number below 1 is a
fraction of the planned trials, 1 or more a count. Once passed, the run stops at once
(sealed as interrupted, finished trials kept) unless ``continue_on_fail`` lets it finish
first; either way the unit's result is ``error``. Errors are samples whose solver raised;
limits are not errors.
"""

from __future__ import annotations

from typing import Any

from assay.errors import RunError


class ErrorBudget:
    """Counts errored trials against the spec's ``fail_on_error``."""

    def __init__(self, errors: dict[str, Any] | None, planned: int) -> None:
        policy = errors or {}
        limit = policy.get("fail_on_error")
        self.limit: bool | float = True if limit is None else limit
        self.continue_on_fail = bool(policy.get("continue_on_fail", False))
        self.retry_on_error = int(policy.get("retry_on_error", 0))
        self.planned = max(planned, 1)
        self.errored = 0
        self.failed = False
        self.first: str = ""

    def add_error(self, failure: str | None = None) -> None:
        """Count one errored trial; raise RunError when the limit is passed (see module).

        The first *failure* is kept and shown, so that a wrong key or an unknown model
        ("401 from http://...: invalid key") is on the screen, not only in the events.
        """
        self.errored += 1
        if not self.first and failure:
            self.first = failure[:300]
        if not self._exceeded():
            return
        self.failed = True
        if not self.continue_on_fail:
            raise RunError("run.errors", count=self.errored, limit=self.limit, first=self.first)

    def _exceeded(self) -> bool:
        if self.limit is True or self.limit is False:
            return bool(self.limit)
        if 0 < self.limit < 1:
            return self.errored / self.planned > self.limit
        return self.errored > self.limit

    def message(self) -> str | None:
        """Why the unit failed, if it did."""
        if not self.failed:
            return None
        first = f" (the first: {self.first})" if self.first else ""
        return f"{self.errored} errored trial(s), over fail_on_error={self.limit}{first}"
