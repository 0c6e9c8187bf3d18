"""Compact lists for ``verify`` at 100,000 trials: digests as raw 32-byte strings packed
in one ``bytes``, line numbers in an ``array``, not a tuple and a 64-character string
per entry (a 100k run's event pass names 200,000 artifacts: about 50 MB as tuples, 9 MB
packed, and it crosses from the worker process to the main one).

A digest is packed only if packing loses nothing (``raw(sha)`` is None for anything
that is not exactly 64 lower-case hex digits); whatever else an event names is kept as
it was read, so verify reports it exactly as before.
"""

from __future__ import annotations

import functools
import struct
from array import array
from collections.abc import Iterator
from typing import Any

import msgspec
from msgspec.structs import astuple


def raw(sha: Any) -> bytes | None:
    """The 32 bytes a 64-character lower-case hex digest spells; None for anything else."""
    if type(sha) is not str or len(sha) != 64:
        return None
    try:
        data = bytes.fromhex(sha)
    except ValueError:
        return None
    return data if data.hex() == sha else None


class RefList(msgspec.Struct):
    """(line, field, sha256) entries in the order added (picklable, msgpack-able)."""

    lines: bytes = b""  # array('q') of line numbers
    fields: bytes = b""  # index into ``names`` of each entry's field
    shas: bytes = b""  # 32 bytes per entry
    names: list[str] = []
    odd: list[tuple[int, int, str, Any]] = []  # position, line, field, sha: not packable


class RefBuilder:
    """Builds a ``RefList`` one entry at a time (the event pass's hot loop adds to it).

    Entries are taken as they come and checked a few thousand at a time (``_settle``):
    the usual ones, 64 lower-case hex digits each under a few field names, are packed
    by one ``fromhex`` and one comparison in C; a batch holding anything else is
    settled entry by entry (``_one``), which is what ``add`` did for each before."""

    def __init__(self) -> None:
        self.lines, self.fields, self.shas = array("q"), bytearray(), bytearray()
        self.names: dict[str, int] = {}
        self.odd: list[tuple[int, int, str, Any]] = []
        self.pending_lines: list[int] = []  # entries not settled yet: line, field, sha
        self.pending_fields: list[str] = []
        self.pending_shas: list[Any] = []

    def add(self, number: int, field: str, sha: Any) -> None:
        self.pending_lines.append(number)
        self.pending_fields.append(field)
        self.pending_shas.append(sha)
        if len(self.pending_shas) >= _SETTLE:
            self._settle()

    def add_call(self, number: int, prompt: str, output: str) -> None:
        """``add`` of a model call's ``prompt`` and ``output`` (the most common pair)."""
        self.pending_lines += (number, number)
        self.pending_fields += _CALL
        shas = self.pending_shas
        shas += (prompt, output)
        if len(shas) >= _SETTLE:
            self._settle()

    def _settle(self) -> None:
        """Pack the pending entries, at once when they are all usual ones."""
        lines, fields, shas = self.pending_lines, self.pending_fields, self.pending_shas
        self.pending_lines, self.pending_fields, self.pending_shas = [], [], []
        packed = _packed_all(shas)
        names = self.names
        if packed is not None:
            added = [name for name in dict.fromkeys(fields) if name not in names]
            if len(names) + len(added) <= 256:
                for name in added:
                    names[name] = len(names)
                self.lines.extend(lines)
                self.fields += bytes(map(names.__getitem__, fields))
                self.shas += packed
                return
        for entry in zip(lines, fields, shas, strict=True):
            self._one(*entry)

    def _one(self, number: int, field: str, sha: Any) -> None:
        data = raw(sha)
        index = self.names.get(field)
        if index is None and data is not None and len(self.names) < 256:
            index = self.names[field] = len(self.names)
        if data is None or index is None:  # kept as read (as are file names past 256)
            self.odd.append((len(self.fields), number, field, sha))
            return
        self.lines.append(number)
        self.fields.append(index)
        self.shas += data

    def done(self) -> RefList:
        self._settle()
        fields, shas = bytes(self.fields), bytes(self.shas)
        return RefList(self.lines.tobytes(), fields, shas, list(self.names), self.odd)


def packed_digests(shas: list[Any]) -> bytes:
    """The 32 raw bytes of each of *shas* that ``raw`` packs, end to end, in order
    (the others left out): at once when all are usual (``_packed_all``)."""
    packed = _packed_all(shas)
    if packed is not None:
        return packed
    return b"".join(data for data in map(raw, shas) if data is not None)


_CALL = ("prompt", "output")
_SETTLE = 4096  # entries checked at once by ``RefBuilder`` (memory stays flat)


def _packed_all(shas: list[Any]) -> bytes | None:
    """The raw bytes of *shas* end to end if every one is what ``raw`` packs (64
    lower-case hex digits; a ``str``), else None: one join, ``fromhex`` and ``hex``."""
    try:
        joined = "".join(shas)  # a TypeError for anything but strings
        data = bytes.fromhex(joined)  # a ValueError for what is not hex
    except (TypeError, ValueError):
        return None
    if shas and (set(map(type, shas)) != {str} or set(map(len, shas)) != {64}):
        return None
    return data if data.hex() == joined else None  # no upper case, no white space


def entries(refs: RefList) -> Iterator[tuple[int, str, Any]]:
    """(line, field, sha256) of each entry in the order added: a packed sha256 as its
    32 raw bytes, any other as it was read (a ``str``, or whatever the event held)."""
    lines = array("q")
    lines.frombytes(refs.lines)
    names, fields, shas, odd = refs.names, refs.fields, refs.shas, iter(refs.odd)
    pending = next(odd, None)
    for i, number in enumerate(lines):
        while pending is not None and pending[0] <= i:
            yield pending[1:]
            pending = next(odd, None)
        yield number, names[fields[i]], shas[32 * i : 32 * i + 32]
    while pending is not None:
        yield pending[1:]
        pending = next(odd, None)


class DigestSet:
    """A set of raw digests (``bytes`` of one width), for membership only, kept packed:
    a 100k run's 400,000 artifact digests are 12.8 MB end to end (a ``set`` of 32-byte
    ``bytes``: ~48 MB). A whole list of digests is looked up at once, in C: the queries
    become a set and the held digests are taken out of it a few thousand at a time
    (``struct`` splits them, ``set.difference_update`` removes them); what is left is
    missing. No numpy: its import is ~0.08 s of CPU and 16 MB in verify's process, more
    than the lookups. Anything not of the width is not in it.
    """

    def __init__(self, width: int = 32) -> None:
        self._width = width
        self._parts: list[bytes] = []  # packed digests, end to end, as added
        self._loose = bytearray()  # digests added a few at a time, end to end

    @classmethod
    def of(cls, packed: bytes, width: int = 32) -> DigestSet:
        """The digests of *packed* (*width* bytes each, end to end)."""
        digests = cls(width)
        digests.extend(packed)
        return digests

    def add(self, digest: bytes) -> None:
        self.extend(digest)

    def extend(self, packed: bytes | bytearray) -> None:
        """Add the digests of *packed*, end to end (a last partial one is left out)."""
        whole = len(packed) - len(packed) % self._width
        if whole >= _BIG and whole == len(packed) and type(packed) is bytes:
            self._parts.append(packed)  # taken as it is: no copy of a 100k run's 12.8 MB
        elif whole:
            self._loose += packed[:whole]

    def _packed(self) -> list[bytes | bytearray]:
        return [*self._parts, self._loose]

    def __contains__(self, digest: object) -> bool:
        """One digest, searched for in the packed bytes (a few ms at 400,000: for the
        odd lookup; many are asked at once with ``missing``)."""
        if type(digest) is not bytes or len(digest) != self._width:
            return False
        for part in self._packed():
            at = part.find(digest)
            while at >= 0:
                if at % self._width == 0:
                    return True
                at = part.find(digest, at + 1)
        return False

    def missing(self, packed: bytes) -> list[int]:
        """The indexes of the digests of *packed* (end to end) that are not in the set,
        in order (a last partial digest is not asked)."""
        width = self._width
        if self._same(packed):
            return []  # asked in the order held (folds, scores): one comparison, no set
        left: set[bytes] = set()
        for chunk in _split(packed, width):
            left.update(chunk)
        for part in self._packed():
            if not left:
                return []  # all found (the usual run): no index to name
            for chunk in _split(part, width):
                left.difference_update(chunk)
        if not left:
            return []
        wanted = (item for chunk in _split(packed, width) for item in chunk)
        return [index for index, digest in enumerate(wanted) if digest in left]

    def _same(self, packed: bytes) -> bool:
        """Whether *packed* is exactly the digests held, in the order added (each asked
        is then held): a bundle's folds and the event pass's are in the same order
        when trials' batches reach the log in the order their bundles do."""
        parts = [part for part in self._packed() if part]
        return len(parts) == 1 and len(parts[0]) == len(packed) and parts[0] == packed


_BIG = 1 << 16  # packed digests this large are kept as they came, not copied
_SPLIT = 4096  # digests split at once: one ``struct`` unpack of 128 KiB


@functools.lru_cache(maxsize=64)
def _splitter(width: int, count: int) -> struct.Struct:
    return struct.Struct(f"{width}s" * count)


def _split(packed: bytes | bytearray, width: int) -> Iterator[tuple[bytes, ...]]:
    """The whole digests of *packed*, as tuples of ``bytes`` of up to ``_SPLIT``."""
    whole = len(packed) // width
    full = _splitter(width, _SPLIT)
    step = width * _SPLIT
    for start in range(0, whole // _SPLIT * step, step):
        yield full.unpack_from(packed, start)
    if rest := whole % _SPLIT:
        yield _splitter(width, rest).unpack_from(packed, whole // _SPLIT * step)


class _Refs(msgspec.Struct, gc=False):
    """The artifacts a model call, a grader's call or a tool's call and result name
    (bytes that only the event points at: no bundle lists them)."""

    prompt: Any = None
    output: Any = None
    arguments: Any = None
    result: Any = None
    command: Any = None  # a sandbox command: argv, input, stdout, stderr; files placed
    input: Any = None
    stdout: Any = None
    stderr: Any = None
    contents: Any = None  # a file a scorer read from the sandbox
    files: Any = None  # last: ``astuple`` gives the others in ``_FIELDS`` order


_decode_refs = msgspec.json.Decoder(_Refs).decode
# Events whose data names artifacts no bundle lists (a grader's calls, tools' calls and
# results); a target's own ``sampling`` does too when it is a model's (``"model"``).
_SANDBOX = ("sandbox_files", "sandbox_setup", "sandbox_exec", "sandbox_read")
REFERRING = frozenset(
    {"tool_call", "tool_result", "approval", "score_sampling", "score_tool_call"}
    | {"score_tool_result"}
    | {prefix + kind for kind in _SANDBOX for prefix in ("", "score_")}
)
_FIELDS = _Refs.__struct_fields__[:-1]  # each a sha256 (or a list of them); not ``files``
_ONLY_TWO = (None,) * (len(_Refs.__struct_fields__) - 2)  # nothing after prompt, output


def event_refs(number: int, data: msgspec.Raw, refs: RefBuilder) -> None:
    """Note the artifacts the event at line *number* names in its *data* (all fields
    read at once: a model call's two are the event pass's most common references)."""
    named = _decode_refs(data)
    values = astuple(named)
    if values[2:] == _ONLY_TWO and type(values[0]) is str and type(values[1]) is str:
        refs.add_call(number, values[0], values[1])  # a model call's: the usual entry
        return
    for field, sha in zip(_FIELDS, astuple(named), strict=False):  # ``files`` left out
        if type(sha) is str:  # as decoded: a JSON string is a ``str``, never a subclass
            refs.add(number, field, sha)
    if isinstance(named.files, dict):
        for path, sha in named.files.items():
            refs.add(number, f"files/{path}", sha)
