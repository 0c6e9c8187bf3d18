"""Samples and the datasets that hold them."""

from assay.dataset._fields import FieldSpec, RecordToSample
from assay.dataset._hf import hf_dataset
from assay.dataset._jsonl import Dataset, load_jsonl
from assay.dataset._loaders import csv_dataset, file_dataset, json_dataset
from assay.dataset._memory import MemoryDataset, freeze
from assay.dataset._package import package_file
from assay.dataset._sample import Sample, StrictSample, drop_fields
from assay.dataset._select import Limit, SampleIds, select

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
