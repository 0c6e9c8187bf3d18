"""``json_dataset``, ``csv_dataset`` and ``file_dataset``: dataset files of any shape, read once.

Unlike the strict JSONL contract of YAML specs, these loaders take the files people
already have and map their records with a ``FieldSpec`` or a function. Samples without
an id are numbered 1..n in file order *before* any shuffle, so a sample keeps its id
however the dataset is later ordered. Errors name a record by the line it starts on,
as an editor or a spreadsheet shows it (a CSV header is line 1).

The file is read once, record by record (a JSONL file a line at a time), and every
sample is validated, numbered, checked for a duplicate id and written to a scratch file
(``_memory.spill``); the dataset then decodes a sample only when it is used, so a
large file costs an offset per sample in memory, not a Python object. A file ending in
``.gz`` is decompressed as it is read (``HumanEval.jsonl.gz`` is read as the JSONL file
it holds).

These are Python APIs: a path is opened as given. Path safety (staying inside the
spec's folder) applies to YAML specs, which may come from someone else.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import os
import re
import zlib
from collections.abc import Generator, Iterable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from assay.dataset._choices import choice_seed
from assay.dataset._fields import FieldSpec, RecordToSample, record_samples
from assay.dataset._memory import LineSamples, MemoryDataset, spill
from assay.dataset._sample import Sample
from assay.dataset._select import Limit, select
from assay.errors import ConfigError

_BOM = b"\xef\xbb\xbf"
_LINE_SUFFIXES = (".jsonl", ".ndjson")
_DECODER = json.JSONDecoder()
_NOT_SPACE = re.compile(r"[^ \t\n\r]")
NESTED_TOO_DEEPLY = "nested too deeply"


def json_dataset(
    path: str | os.PathLike[str],
    sample_fields: FieldSpec | RecordToSample | None = None,
    *,
    auto_id: bool = False,
    shuffle: bool = False,
    seed: int | None = None,
    shuffle_choices: bool | int | None = None,
    limit: Limit | None = None,
    name: str | None = None,
    encoding: str = "utf-8",
) -> MemoryDataset:
    """Load a ``.jsonl`` file (one record per line) or a JSON file holding a list of records.

    Args:
        path: the file; ``.jsonl`` and ``.ndjson`` are read line by line; with ``.gz``
            after either suffix, the file is decompressed first.
        sample_fields: how records become samples; the default ``FieldSpec()``.
        auto_id: number every sample 1..n in file order, ignoring the ids in the file.
        shuffle: put the samples in a random order (after numbering them).
        seed: the shuffle's seed; the same seed gives the same order on any machine.
        shuffle_choices: shuffle each sample's choices and remap its target letters;
            an integer is the seed (see ``MemoryDataset.shuffle_choices``).
        limit: keep the first *n* samples, or a ``(start, stop)`` slice, after shuffling.
        name: the dataset's name; the file's stem by default.
        encoding: Inspect's argument: UTF-8 only (any other is refused).

    Raises:
        ConfigError: the file cannot be read, is not UTF-8 JSON, or a record cannot
            become a sample; the message names the file and the line or record.
    """
    display = str(path)
    _check_encoding(encoding, display)
    plain = _uncompressed(Path(path))
    if plain.suffix.lower() in _LINE_SUFFIXES:
        records: Iterator[tuple[int, Any]] = _jsonl_records(Path(path), display)
    else:
        records = _json_records(_read_text(Path(path), display, bom_ok=False), display)
    order = Order(auto_id, shuffle, seed, shuffle_choices, limit)
    return _build(records, sample_fields, display, plain.stem, order, name)


def csv_dataset(
    path: str | os.PathLike[str],
    sample_fields: FieldSpec | RecordToSample | None = None,
    *,
    delimiter: str = ",",
    auto_id: bool = False,
    shuffle: bool = False,
    seed: int | None = None,
    shuffle_choices: bool | int | None = None,
    limit: Limit | None = None,
    name: str | None = None,
    dialect: str = "unix",
    encoding: str = "utf-8",
    fieldnames: list[str] | None = None,
) -> MemoryDataset:
    """Load a CSV file with a header row; every cell is text, a blank one is unset.

    The file must be UTF-8; a leading byte-order mark, which spreadsheets write, is
    skipped. Arguments are those of ``json_dataset``, plus the cell *delimiter*, and
    Inspect's *dialect* (a name ``csv`` knows: ``"unix"``, ``"excel"``,
    ``"excel-tab"``; its quoting, and its delimiter unless *delimiter* is given),
    *encoding* (UTF-8 only, with or without a byte-order mark) and *fieldnames* (the
    columns of a file without a header row; its first line is then a record).

    Raises:
        ConfigError: the file cannot be read, is not UTF-8 CSV, a row has more or fewer
            cells than the header, or a record cannot become a sample.
    """
    display = str(path)
    _check_encoding(encoding, display)
    text = _read_text(Path(path), display, bom_ok=True)
    records = _csv_records(text, display, _csv_format(dialect, delimiter, display), fieldnames)
    stem = _uncompressed(Path(path)).stem
    order = Order(auto_id, shuffle, seed, shuffle_choices, limit)
    return _build(records, sample_fields, display, stem, order, name)


def file_dataset(
    file: str | os.PathLike[str],
    sample_fields: FieldSpec | RecordToSample | None = None,
    *,
    auto_id: bool = False,
    shuffle: bool = False,
    seed: int | None = None,
    shuffle_choices: bool | int | None = None,
    limit: Limit | None = None,
    name: str | None = None,
    dialect: str = "unix",
    encoding: str = "utf-8",
    fieldnames: list[str] | None = None,
) -> MemoryDataset:
    """Load *file* with ``csv_dataset`` or ``json_dataset``, chosen by its extension.

    ``.csv`` is read as CSV; ``.json``, ``.jsonl`` and ``.ndjson`` as JSON (each also
    with ``.gz`` after it). The arguments are those of the two loaders; *dialect* and
    *fieldnames* apply to CSV only.

    Raises:
        ConfigError: the extension is none of these, or the loader refuses the file.
    """
    suffix = _uncompressed(Path(file)).suffix.lower()
    options: dict[str, Any] = {
        "auto_id": auto_id,
        "shuffle": shuffle,
        "seed": seed,
        "shuffle_choices": shuffle_choices,
        "limit": limit,
        "name": name,
        "encoding": encoding,
    }
    if suffix == ".csv":
        return csv_dataset(file, sample_fields, dialect=dialect, fieldnames=fieldnames, **options)
    if suffix in (".json", *_LINE_SUFFIXES):
        return json_dataset(file, sample_fields, **options)
    raise ConfigError("dataset.file_kind", path=str(file), suffix=suffix or Path(file).name)


class Order(NamedTuple):
    """How a loader numbers, orders and cuts the samples it read, in this order."""

    auto_id: bool = False
    shuffle: bool = False
    seed: int | None = None
    shuffle_choices: bool | int | None = None
    limit: Limit | None = None


def _build(
    records: Iterator[tuple[int, Any]],
    sample_fields: FieldSpec | RecordToSample | None,
    display: str,
    stem: str,
    order: Order,
    name: str | None,
) -> MemoryDataset:
    made = record_stream(records, sample_fields, display, order.auto_id)
    try:
        lines, digest, ids = spill(made, display)  # read once, kept on disk, decoded when used
    finally:  # a refused record leaves the reader suspended, its file open: closed now,
        made.close()  # not whenever the collector gets to the error's frames (a
        close = getattr(records, "close", None)  # ResourceWarning, an error under tests)
        if close is not None:
            close()
    if not len(lines):
        raise ConfigError("dataset.no_samples", path=display)
    location = str(Path(display).resolve().parent)
    dataset = MemoryDataset(LineSamples(lines, digest, ids), name or stem, location)
    return arranged(dataset, order)


def record_stream(
    records: Iterable[tuple[int, Any]],
    sample_fields: FieldSpec | RecordToSample | None,
    display: str,
    auto_id: bool,
) -> Generator[tuple[int, Sample], None, None]:
    """The samples of *records*, each with its record's position; with *auto_id*, without
    their ids, so that ``spill`` numbers them all 1..n."""
    fields = FieldSpec() if sample_fields is None else sample_fields
    if not isinstance(fields, FieldSpec) and not callable(fields):
        raise ConfigError("dataset.fields_type", kind=type(fields).__name__)
    for position, record in records:
        for sample in record_samples(record, fields, display, position):
            yield position, (msgspec.structs.replace(sample, id=None) if auto_id else sample)


def arranged(dataset: MemoryDataset, order: Order) -> MemoryDataset:
    """*dataset* shuffled, its choices shuffled, then cut to the limit, as *order* asks."""
    wanted, seed = choice_seed(order.shuffle_choices)
    if order.shuffle:
        dataset = dataset.shuffle(order.seed)
    if wanted:
        dataset = dataset.shuffle_choices(seed)
    return select(dataset, limit=order.limit) if order.limit is not None else dataset


def _uncompressed(path: Path) -> Path:
    """*path* without a ``.gz`` suffix: the name of the file it holds."""
    return path.with_suffix("") if path.suffix.lower() == ".gz" else path


def _read_text(path: Path, display: str, *, bom_ok: bool) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError("spec.unreadable", path=display, reason=exc.strerror) from None
    if path.suffix.lower() == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ConfigError("spec.unreadable", path=display, reason=f"not gzip: {exc}") from None
    if data.startswith(_BOM):
        if not bom_ok:
            raise ConfigError(
                "spec.encoding", path=display, reason="it starts with a byte-order mark"
            )
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError("spec.encoding", path=f"{display}:{line}", reason=exc.reason) from None


def _jsonl_records(path: Path, display: str) -> Iterator[tuple[int, Any]]:
    """The records of a JSONL file, read a line at a time (never the whole file)."""
    try:
        file = open(path, "rb")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise ConfigError("spec.unreadable", path=display, reason=exc.strerror) from None
    gz = path.suffix.lower() == ".gz"
    with file, gzip.GzipFile(fileobj=file, mode="rb") if gz else nullcontext(file) as handle:
        for number, raw in enumerate(_lines_of(handle, display), start=1):
            if number == 1 and raw.startswith(_BOM):
                reason = "it starts with a byte-order mark"
                raise ConfigError("spec.encoding", path=display, reason=reason)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                where = f"{display}:{number}"
                raise ConfigError("spec.encoding", path=where, reason=exc.reason) from None
            if not line.strip():
                continue
            try:
                record = msgspec.json.decode(line)
            except msgspec.DecodeError as exc:
                raise ConfigError(
                    "dataset.json", path=display, line=number, reason=str(exc)
                ) from None
            except RecursionError:  # as the YAML path says it: one line, exit 2
                raise ConfigError(
                    "dataset.json", path=display, line=number, reason=NESTED_TOO_DEEPLY
                ) from None
            yield number, record


def _lines_of(handle: Iterable[bytes], display: str) -> Iterator[bytes]:
    """The lines of *handle*; a ``.gz`` file that is not gzip is one config error."""
    try:
        yield from handle
    except (OSError, EOFError, zlib.error) as exc:
        reason = f"not gzip: {exc}" if isinstance(handle, gzip.GzipFile) else str(exc)
        raise ConfigError("spec.unreadable", path=display, reason=reason) from None


def _json_records(text: str, display: str) -> Iterator[tuple[int, Any]]:
    """The records of a JSON list, each with the line it starts on.

    The whole text is parsed once to check it (and to place a syntax error), then walked
    element by element; the walk only meets valid JSON, so it stays this simple.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            "dataset.json_document",
            path=display,
            line=exc.lineno,
            column=exc.colno,
            reason=exc.msg,
        ) from None
    except RecursionError:
        raise ConfigError("dataset.json_deep", path=display, reason=NESTED_TOO_DEEPLY) from None
    if not isinstance(data, list):
        raise ConfigError("dataset.json_list", path=display, kind=type(data).__name__)
    count = len(data)
    del data  # the walk decodes each record again: hold one copy at a time, not two
    pos, line = _space(text, _space(text, 0) + 1), 1
    counted = 0
    for _ in range(count):
        line += text.count("\n", counted, pos)
        counted = pos
        record, end = _DECODER.raw_decode(text, pos)
        yield line, record
        pos = _space(text, end)
        pos = _space(text, pos + 1)  # past the comma, or the closing bracket


def _space(text: str, pos: int) -> int:
    """The first position at or after *pos* that is not JSON whitespace."""
    found = _NOT_SPACE.search(text, pos)
    return found.start() if found else len(text)


def _check_encoding(encoding: str, display: str) -> None:
    """Refuse an encoding other than UTF-8: files are read as UTF-8 (BOM skipped)."""
    if codecs_name(encoding) not in ("utf-8", "utf-8-sig"):
        reason = f"encoding={encoding!r}: only UTF-8 files are read"
        raise ConfigError("spec.encoding", path=display, reason=reason)


def codecs_name(encoding: str) -> str:
    """The canonical name of *encoding* (``"UTF8"`` -> ``"utf-8"``), or the name as given."""
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        return encoding


def _csv_format(dialect: str, delimiter: str, display: str) -> dict[str, Any]:
    """The reader's options: *dialect*'s quoting, with *delimiter* when it is not the
    default comma (an explicit delimiter wins over the dialect's)."""
    if dialect not in csv.list_dialects():
        known = ", ".join(sorted(csv.list_dialects()))
        raise ConfigError("dataset.csv_dialect", path=display, dialect=dialect, known=known)
    options: dict[str, Any] = {"dialect": dialect, "strict": True}
    if delimiter != ",":
        options["delimiter"] = delimiter
    return options


def _csv_records(
    text: str, display: str, options: dict[str, Any], fieldnames: list[str] | None = None
) -> Iterator[tuple[int, Any]]:
    reader = csv.reader(io.StringIO(text, newline=""), **options)
    try:
        header = list(fieldnames) if fieldnames is not None else next(reader, None)
        if header is None:
            return
        if len(set(header)) != len(header):
            twice = sorted({name for name in header if header.count(name) > 1})
            raise ConfigError("dataset.csv_header", path=display, columns=", ".join(twice))
        while True:
            start = reader.line_num + 1  # a quoted cell may span lines: name the first
            row = next(reader, None)
            if row is None:
                return
            if not row:
                continue  # a blank line
            if len(row) != len(header):
                raise ConfigError(
                    "dataset.csv_cells",
                    path=display,
                    line=start,
                    cells=len(row),
                    columns=len(header),
                )
            yield start, dict(zip(header, row, strict=True))
    except csv.Error as exc:
        raise ConfigError(
            "dataset.csv", path=display, line=reader.line_num, reason=str(exc)
        ) from None
