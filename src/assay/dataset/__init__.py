"""Samples and the datasets that hold them."""

from assay.dataset._jsonl import Dataset, load_jsonl
from assay.dataset._sample import Sample, drop_fields

__all__ = ["Dataset", "Sample", "drop_fields", "load_jsonl"]
