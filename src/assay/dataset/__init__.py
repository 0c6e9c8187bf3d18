"""Samples and the datasets that hold them."""

from assay.dataset._jsonl import Dataset, load_jsonl
from assay.dataset._memory import MemoryDataset, freeze
from assay.dataset._sample import Sample, StrictSample, drop_fields

__all__ = [
    "Dataset",
    "MemoryDataset",
    "Sample",
    "StrictSample",
    "drop_fields",
    "freeze",
    "load_jsonl",
]
