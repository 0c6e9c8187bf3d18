"""A sample: one input to put to a target, and the value expected back."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

M = TypeVar("M")


def metadata_as(metadata: dict[str, Any], metadata_type: type[M]) -> M:
    """*metadata* as *metadata_type*: a pydantic model (validated with
    ``model_validate``) or any type msgspec can convert a dict into (a dataclass, a
    ``msgspec.Struct``, a TypedDict)."""
    validate = getattr(metadata_type, "model_validate", None)
    if validate is not None:
        made: M = validate(metadata)
        return made
    return msgspec.convert(metadata, metadata_type)


class Sample(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One dataset row.

    Attributes:
        input: what the target is given: text, chat messages, or any JSON (programs).
        target: the expected answer (``expected`` in JSONL files and evidence).
        id: unique within the dataset; Python datasets without ids are numbered 1..n.
        choices: the options of a multiple-choice sample.
        metadata: anything else; available to solvers, scorers and grouped metrics.
        files: files to place in the sample's sandbox before the solver runs (path ->
            inline text, bytes, a ``data:`` URI, or the path of a file relative to the
            dataset's folder). Bytes are kept as a ``data:`` URI.
        setup: a bash script run in the sample's sandbox before the solver.
        sandbox: the sample's own sandbox (``"bwrap"``, ``("bwrap", {...})``, ...),
            instead of the task's.
    """

    input: Any
    target: Any = msgspec.field(default="", name="expected")
    id: str | int | None = None
    choices: list[str] | None = None
    metadata: dict[str, Any] = {}
    files: dict[str, str] | None = None
    setup: str | None = None
    sandbox: Any = None

    def __post_init__(self) -> None:
        if self.files is not None and any(isinstance(v, bytes) for v in self.files.values()):
            from assay.sandbox._lifecycle import as_data_uri

            kept = {k: as_data_uri(v) if isinstance(v, bytes) else v for k, v in self.files.items()}
            msgspec.structs.force_setattr(self, "files", kept)

    def metadata_as(self, metadata_type: type[M]) -> M:
        """The sample's metadata as *metadata_type* (Inspect's ``Sample.metadata_as``)."""
        return metadata_as(self.metadata, metadata_type)

    @property
    def expected(self) -> Any:
        """The expected answer (the same as ``target``)."""
        return self.target

    def to_record(self, hidden: tuple[str, ...] = ()) -> dict[str, Any]:
        """The sample as plain JSON values, with *hidden* fields dropped everywhere."""
        record: dict[str, Any] = {"id": self.id, "input": self.input, "expected": self.target}
        if self.choices is not None:
            record["choices"] = self.choices
        if self.metadata:
            record["metadata"] = self.metadata
        if self.files is not None:
            record["files"] = self.files
        if self.setup is not None:
            record["setup"] = self.setup
        if self.sandbox is not None:
            record["sandbox"] = self.sandbox
        return drop_fields(record, hidden) if hidden else record


class StrictSample(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The JSONL contract of YAML specs: ``id``, ``input`` and ``expected`` are required."""

    id: str | int
    input: Any
    expected: Any
    metadata: dict[str, Any] = {}
    choices: list[str] | None = None


def drop_fields(value: Any, hidden: tuple[str, ...]) -> Any:
    """Return *value* with every mapping key named in *hidden* removed, at any depth."""
    if isinstance(value, dict):
        return {k: drop_fields(v, hidden) for k, v in value.items() if k not in hidden}
    if isinstance(value, list):
        return [drop_fields(v, hidden) for v in value]
    return value
