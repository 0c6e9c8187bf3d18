"""Turn a dataset file's records into samples: by a field mapping or by a function.

Files found in the wild rarely name their columns ``input`` and ``target``, so a loader
takes either a ``FieldSpec`` (which record key feeds which sample field) or a function
that builds the samples itself. Either way a record that cannot become a sample is
refused with the file and the record it came from, before anything runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import msgspec

from assay.dataset._sample import Sample
from assay.errors import ConfigError

RecordToSample: TypeAlias = Callable[[dict[str, Any]], Sample | list[Sample]]
"""A function that builds the sample(s) of one record; an empty list skips the record."""


@dataclass(frozen=True)
class FieldSpec:
    """Which record key feeds which ``Sample`` field.

    A key that is absent, ``None`` or empty text leaves an optional field unset, so
    blank spreadsheet cells behave like missing ones (an unset id is numbered later).
    Only ``input`` is required.

    Attributes:
        input: the key holding the sample's input.
        target: the key holding the expected answer. Under the default name, a record
            without ``target`` is read from ``expected``, the name assay's own JSONL
            files use, so those files load without a mapping.
        id: the key holding the sample's id (text or integer).
        choices: the key holding a list of options, for multiple choice.
        metadata: the keys copied into ``metadata``; ``None`` copies every key not
            mapped above, and merges a ``metadata`` object found in the record. A class
            (a pydantic model, a dataclass, a ``msgspec.Struct``, as Inspect allows)
            names its fields; read them back with ``state.metadata_as(cls)``.
        files: the key holding files to place (name -> content).
        setup: the key holding the sample's setup script.
        sandbox: the key holding the sample's own sandbox.
    """

    input: str = "input"
    target: str = "target"
    id: str = "id"
    choices: str = "choices"
    metadata: Sequence[str] | type | None = None
    files: str = "files"
    setup: str = "setup"
    sandbox: str = "sandbox"


# The optional fields a record may set, with the type each must have.
_TYPES: dict[str, Any] = {
    "id": int | str,
    "choices": list[str],
    "files": dict[str, str],
    "setup": str,
    "sandbox": str | list[Any] | dict[str, Any],
}


def record_samples(
    record: Any, fields: FieldSpec | RecordToSample, path: str, line: int
) -> list[Sample]:
    """The samples of *record*, which starts on *line* of the file *path* (named in errors)."""
    if not isinstance(record, dict):
        raise ConfigError("dataset.record_type", path=path, line=line, kind=type(record).__name__)
    if isinstance(fields, FieldSpec):
        return [_mapped(record, fields, path, line)]
    return _called(record, fields, path, line)


def _mapped(record: dict[str, Any], spec: FieldSpec, path: str, line: int) -> Sample:
    if spec.input not in record:
        raise ConfigError("dataset.record_input", path=path, line=line, field=spec.input)
    target_key = spec.target
    if target_key == "target" and target_key not in record and "expected" in record:
        target_key = "expected"
    keys = {
        "id": spec.id,
        "choices": spec.choices,
        "files": spec.files,
        "setup": spec.setup,
        "sandbox": spec.sandbox,
    }
    optional: dict[str, Any] = {}
    for name, key in keys.items():
        value = record.get(key)
        if value is None or value == "":
            continue
        try:
            optional[name] = msgspec.convert(value, _TYPES[name])
        except msgspec.ValidationError as exc:
            raise ConfigError(
                "dataset.record_field", path=path, line=line, field=key, reason=str(exc)
            ) from None
    mapped = {spec.input, target_key, *keys.values()}
    return Sample(
        input=record[spec.input],
        target=record.get(target_key, ""),
        metadata=_metadata(record, spec.metadata, mapped),
        **optional,
    )


def _metadata(
    record: dict[str, Any], keys: Sequence[str] | type | None, mapped: set[str]
) -> dict[str, Any]:
    if isinstance(keys, type):
        keys = field_names(keys)
    if keys is not None:
        return {key: record.get(key) for key in keys}
    nested = record.get("metadata")
    merged: dict[str, Any] = dict(nested) if isinstance(nested, dict) else {}
    for key, value in record.items():
        if key not in mapped and not (key == "metadata" and isinstance(value, dict)):
            merged[key] = value
    return merged


def field_names(cls: type) -> list[str]:
    """The fields of a pydantic model, a dataclass or a ``msgspec.Struct``."""
    pydantic_fields = getattr(cls, "model_fields", None)
    if isinstance(pydantic_fields, dict):
        return list(pydantic_fields)
    if dataclasses.is_dataclass(cls):
        return [field.name for field in dataclasses.fields(cls)]
    struct_fields = getattr(cls, "__struct_fields__", None)
    if isinstance(struct_fields, tuple):
        return list(struct_fields)
    raise ConfigError("dataset.metadata_class", kind=cls.__name__)


def _called(record: dict[str, Any], build: RecordToSample, path: str, line: int) -> list[Sample]:
    try:
        result = build(record)
    except Exception as exc:
        # The cause is kept: the traceback of the user's function is what they debug.
        raise ConfigError(
            "dataset.record_function",
            path=path,
            line=line,
            reason=f"{type(exc).__name__}: {exc}",
        ) from exc
    samples = result if isinstance(result, list) else [result]
    for sample in samples:
        if not isinstance(sample, Sample):
            raise ConfigError(
                "dataset.record_result", path=path, line=line, kind=type(sample).__name__
            )
    return samples
