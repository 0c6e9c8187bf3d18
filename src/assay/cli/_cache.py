"""``assay cache list / clear / prune``: look at and tidy the response cache.

Exit codes: 0 done (also when there was nothing to list or remove) · 2 a bad option ·
5 the cache folder could not be read or changed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from assay._messages import say

_MODEL_HELP = "Only entries of this model (a glob: 'openai/*')."
_DIR_HELP = "The cache folder [default: $ASSAY_CACHE_DIR or ~/.cache/assay/responses]."


@click.group(name="cache")
def cache_group() -> None:
    """The response cache that ``assay run --cache`` reads and fills."""


@cache_group.command(name="list")
@click.option("--model", "-m", help=_MODEL_HELP)
@click.option("--dir", "directory", type=click.Path(path_type=Path), help=_DIR_HELP)
def list_entries(model: str | None, directory: Path | None) -> None:
    """One line per entry: model, age, expiry, size and key."""
    from assay.model import ResponseCache

    cache = ResponseCache(directory, expiry=None)
    now = time.time()
    count = size = 0
    with _storage(cache.root):
        for entry in cache.entries(model):
            count += 1
            size += entry.size
            key = entry.path.stem
            if entry.info is None:
                click.echo(say("out.cache_unreadable", size=entry.size, entry=key))
                continue
            info = entry.info
            expires = "never" if info.expires is None else _span(info.expires - now)
            click.echo(
                say(
                    "out.cache_entry",
                    model=info.model,
                    age=_span(now - info.created),
                    expires=expires,
                    size=entry.size,
                    entry=key,
                )
            )
    click.echo(say("out.cache_summary", count=count, size=size, path=cache.root))


@cache_group.command(name="clear")
@click.option("--model", "-m", help=_MODEL_HELP)
@click.option("--dir", "directory", type=click.Path(path_type=Path), help=_DIR_HELP)
def clear(model: str | None, directory: Path | None) -> None:
    """Remove every entry, or only those of --model."""
    from assay.model import ResponseCache

    cache = ResponseCache(directory, expiry=None)
    with _storage(cache.root):
        removed = cache.clear(model)
    click.echo(say("out.cache_removed", count=removed, path=cache.root))


@cache_group.command(name="prune")
@click.option("--dir", "directory", type=click.Path(path_type=Path), help=_DIR_HELP)
def prune(directory: Path | None) -> None:
    """Remove expired entries (and unreadable ones)."""
    from assay.model import ResponseCache

    cache = ResponseCache(directory, expiry=None)
    with _storage(cache.root):
        removed = cache.prune()
    click.echo(say("out.cache_removed", count=removed, path=cache.root))


@contextmanager
def _storage(root: Path) -> Iterator[None]:
    """Turn a file-system failure into one line and exit 5."""
    from assay.errors import RunError

    try:
        yield
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise RunError("cache.storage", path=str(root), reason=reason) from None


def _span(seconds: float) -> str:
    """A duration the way people say it: ``45s``, ``12m``, ``3h``, ``6d``; ``expired`` when past."""
    if seconds < 0:
        return "expired"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"
