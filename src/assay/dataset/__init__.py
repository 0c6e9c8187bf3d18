"""Samples and the datasets that hold them."""

import typing as _typing

from assay._import_path import lazy_exports as _lazy_exports
from assay.dataset._jsonl import Dataset, load_jsonl
from assay.dataset._memory import MemoryDataset, freeze
from assay.dataset._sample import Sample, StrictSample, drop_fields
from assay.dataset._select import Limit, SampleIds, select

if _typing.TYPE_CHECKING:
    from assay.dataset._fields import FieldSpec, RecordToSample
    from assay.dataset._hf import hf_dataset
    from assay.dataset._loaders import csv_dataset, file_dataset, json_dataset
    from assay.dataset._package import package_file

# the loaders, imported when first used: a task whose samples are made in Python
# (a list, a ``MemoryDataset``) never loads csv, gzip, the field mapping or the hub's
_LOADERS = {
    "FieldSpec": "assay.dataset._fields",
    "RecordToSample": "assay.dataset._fields",
    "hf_dataset": "assay.dataset._hf",
    "csv_dataset": "assay.dataset._loaders",
    "file_dataset": "assay.dataset._loaders",
    "json_dataset": "assay.dataset._loaders",
    "package_file": "assay.dataset._package",
}
__getattr__ = _lazy_exports(__name__, _LOADERS, globals())

__all__ = [
    "Dataset",
    "FieldSpec",
    "Limit",
    "MemoryDataset",
    "RecordToSample",
    "Sample",
    "SampleIds",
    "StrictSample",
    "csv_dataset",
    "drop_fields",
    "file_dataset",
    "freeze",
    "hf_dataset",
    "json_dataset",
    "load_jsonl",
    "package_file",
    "select",
]
