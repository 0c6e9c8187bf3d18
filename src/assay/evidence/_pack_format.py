"""A pack record's header and where the packs are (the format: ``_pack``), apart from
the rest of ``_pack``: the pack pass of ``verify`` runs in a process of its own that
needs only this, not msgspec (whose import is ~20 ms of CPU there)."""

from __future__ import annotations

import os
from pathlib import Path

MAGIC = b"assay-artifact "

# magic, 64 hex digits, a space, a size of at most 20 digits and the newline
HEADER_MAX = len(MAGIC) + 64 + 1 + 20 + 1


def pack_names(root: Path) -> list[str]:
    """The pack files under *root*, in order, by their plain names (a compacted
    ``pack-NNNN.bin.zst`` is listed as ``pack-NNNN.bin``: read it with ``open_evidence``)."""
    if not root.is_dir():
        return []
    names = {n.removesuffix(".zst") for n in os.listdir(root) if n.startswith("pack-")}
    return sorted(n for n in names if n.endswith(".bin"))
