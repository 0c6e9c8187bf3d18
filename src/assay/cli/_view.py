"""``assay view [DIR]``: serve the local web viewer over the runs under DIR.

DIR defaults to ``runs``, where ``assay run`` writes its runs; DIR may also be one run.
The server binds 127.0.0.1 unless ``--host`` says otherwise, prints its URL (``--port 0``
picks a free port) and opens it in a browser unless ``--no-browser``; Ctrl-C stops it.
"""

from __future__ import annotations

import errno
from pathlib import Path

import click

from assay.errors import ConfigError


@click.command()
@click.argument("root", metavar="DIR", required=False, type=click.Path(path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=7575, show_default=True, type=int, help="Port (0: any free port).")
@click.option("--no-browser", is_flag=True, help="Do not open the viewer in a browser.")
def view(root: Path | None, host: str, port: int, no_browser: bool) -> None:
    """Browse the runs under DIR (default: runs) in a local web viewer."""
    import importlib.util

    if importlib.util.find_spec("aiohttp") is None:  # the server: the 'view' extra
        raise ConfigError("extra.missing", feature="assay view", package="aiohttp", extra="view")
    from assay.view import serve

    folder = root if root is not None else Path("runs")
    if not folder.is_dir():
        raise ConfigError("view.no_folder", path=str(folder))
    try:
        serve(folder, host, port, open_browser=not no_browser, started=_announce)
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
            raise ConfigError("view.no_port", host=host, port=port, reason=exc.strerror) from None
        raise


def _announce(url: str) -> None:
    click.echo(f"assay view: serving on {url} (Ctrl-C stops it)")
