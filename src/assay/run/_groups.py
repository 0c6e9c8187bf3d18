"""Turning an exception group from a task group back into the one error that matters."""

from __future__ import annotations

from assay.errors import AssayError


def first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first non-group exception inside *group*, preferring assay's own errors.

    Several workers often fail at once for one reason (a sink over its failure rate);
    the caller wants that reason, not a group of copies.
    """
    leaves: list[BaseException] = []

    def walk(error: BaseException) -> None:
        if isinstance(error, BaseExceptionGroup):
            for inner in error.exceptions:
                walk(inner)
        else:
            leaves.append(error)

    walk(group)
    ours = [e for e in leaves if isinstance(e, AssayError)]
    return (ours or leaves)[0]
