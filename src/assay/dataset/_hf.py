"""``hf_dataset``: a Hugging Face dataset, loaded as Inspect loads it.

The rows come through the ``datasets`` library (``pip install 'assay[hf]'``, imported
only here, when the function is called: ``import assay`` stays fast). Offline
(``HF_HUB_OFFLINE=1``), a local folder or a dataset already in the Hugging Face cache
loads as it does online.

The rows become samples exactly as a file's records do (``FieldSpec`` or a function,
ids 1..n in row order where missing, checked, kept on disk). What was asked for —
``path``, ``name``, ``data_dir``, ``revision`` and ``split`` — is the dataset's
``source``, which a run records as its dataset in the spec next to the samples'
digest: a resumed run loads the same split of the same revision, or is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from assay.dataset._fields import FieldSpec, RecordToSample
from assay.dataset._loaders import Order, arranged, record_stream
from assay.dataset._memory import LineSamples, MemoryDataset, spill
from assay.dataset._select import Limit
from assay.errors import ConfigError

_REASON_CHARS = 300
_NO_SCRIPTS = 4  # the datasets major version that dropped loading scripts


def hf_dataset(
    path: str,
    split: str,
    name: str | None = None,
    data_dir: str | None = None,
    revision: str | None = None,
    sample_fields: FieldSpec | RecordToSample | None = None,
    auto_id: bool = False,
    shuffle: bool = False,
    seed: int | None = None,
    shuffle_choices: bool | int | None = None,
    limit: Limit | None = None,
    trust: bool = False,
    cached: bool = True,
    auto_decode_json: bool = True,
    **kwargs: Any,
) -> MemoryDataset:
    """Load one split of a Hugging Face dataset (a Hub id or a local folder).

    Args:
        path: the dataset's Hub id (``"openai/gsm8k"``) or a local folder of data files.
        split: the split to read (``"test"``; ``"train[:100]"`` and ``"test+validation"``
            are single splits too).
        name: the dataset's configuration (subset), e.g. ``"main"``.
        data_dir: the configuration's data folder, for datasets organised that way.
        revision: the commit, branch or tag to read; pin a commit for a repeatable run.
        sample_fields: how rows become samples; the default ``FieldSpec()``.
        auto_id: number every sample 1..n in row order, ignoring ids in the rows.
        shuffle: put the samples in a random order (after numbering them).
        seed: the shuffle's seed.
        shuffle_choices: shuffle each sample's choices, remapping its target letters;
            an integer is the seed.
        limit: keep the first *n* samples, or a ``(start, stop)`` slice, after shuffling.
        trust: let a dataset run its loading script (``trust_remote_code``); from
            ``datasets`` 4 on there are no loading scripts, and it is not passed.
        cached: reuse the Hugging Face cache; ``False`` downloads the data again. A
            local folder is always read afresh.
        auto_decode_json: columns of the ``Json`` feature type come as Python values,
            as ``datasets`` gives them; ``False`` (keep them as JSON text) is refused.
        **kwargs: passed to ``datasets.load_dataset`` as they are (``data_files``,
            ``token``, ...).

    Raises:
        ConfigError: ``datasets`` is not installed, the dataset or split cannot be
            loaded, or a row cannot become a sample; one line, exit 2.
    """
    if not auto_decode_json:
        raise ConfigError("dataset.hf_json_text", path=path)
    order = Order(auto_id, shuffle, seed, shuffle_choices, limit)
    rows = _load(path, split, name, data_dir, revision, trust, cached, kwargs)
    where = f"{path}[{split}]"  # errors name a row as {where}:{row}
    made = record_stream(_numbered(rows), sample_fields, where, auto_id)
    lines, digest, ids = spill(islice(made, _needed(order)), where)
    if not len(lines):
        raise ConfigError("dataset.no_samples", path=where)
    source = hf_source(path, split, name, data_dir, revision)
    local = Path(path).is_dir()
    shown = Path(path).stem if local else path  # Inspect's dataset name
    folder = str(Path(path).resolve()) if local else None  # sample files: else the task's
    dataset = MemoryDataset(LineSamples(lines, digest, ids), shown, folder, source=source)
    return arranged(dataset, order)


def _needed(order: Order) -> int | None:
    """How many samples to read: with a limit and no shuffle, the rows past it are never
    read (a large split cut to ten samples costs ten rows); else all of them."""
    if order.shuffle or order.limit is None:
        return None
    limit: Any = order.limit
    stop = limit[1] if isinstance(limit, tuple | list) and len(limit) == 2 else limit
    if isinstance(stop, int) and not isinstance(stop, bool) and stop > 0:
        return stop
    return None  # a malformed limit is refused by select, as anywhere


def hf_source(
    path: str, split: str, name: str | None, data_dir: str | None, revision: str | None
) -> str:
    """What a run records as the dataset: every argument that chooses the rows."""
    parts = [f"hf:{path}"]
    for key, value in (("name", name), ("data_dir", data_dir), ("revision", revision)):
        if value is not None:
            parts.append(f"{key}={value}")
    parts.append(f"split={split}")
    return " ".join(parts)


def _load(
    path: str,
    split: str,
    name: str | None,
    data_dir: str | None,
    revision: str | None,
    trust: bool,
    cached: bool,
    kwargs: dict[str, Any],
) -> Any:
    """The rows of the split, as ``datasets`` gives them."""
    try:
        import datasets
    except ImportError:
        raise ConfigError("dataset.hf_missing") from None
    options = dict(kwargs)
    if trust and _major(datasets.__version__) < _NO_SCRIPTS:
        options["trust_remote_code"] = True  # later versions only warn that it is gone
    if not cached or Path(path).is_dir():
        # A local folder is read afresh: the datasets cache can hand back a folder's old
        # rows after its files changed (seen with configs named in its README).
        options.setdefault("download_mode", "force_redownload")
    bars = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # assay's output is its own: no bars between its lines
    try:
        loaded = datasets.load_dataset(
            path, name=name, data_dir=data_dir, split=split, revision=revision, **options
        )
    except Exception as exc:  # the library's own errors are many; each is one line here
        # The cause is kept: --debug shows where inside datasets it failed.
        raise ConfigError("dataset.hf_load", path=path, split=split, reason=_reason(exc)) from exc
    finally:
        if bars:
            datasets.enable_progress_bars()
    if isinstance(loaded, datasets.DatasetDict | datasets.IterableDatasetDict):
        reason = "it gave the splits " + ", ".join(loaded)
        raise ConfigError("dataset.hf_split", path=path, split=split, reason=reason)
    return loaded


def _numbered(rows: Any) -> Iterator[tuple[int, Any]]:
    """Each row with its 1-based number, which errors name."""
    yield from enumerate(rows, start=1)


def _major(version: str) -> int:
    """The major number of a version string (``"3.6.0"`` -> 3)."""
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def _reason(exc: Exception) -> str:
    """The first line of *exc*, short enough for one line of output."""
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    if len(text) > _REASON_CHARS:
        text = text[: _REASON_CHARS - 3] + "..."
    return f"{type(exc).__name__}: {text}"
