"""The ``assay`` command line; each command lives in its own module."""

from assay.cli._main import cli, main

__all__ = ["cli", "main"]
