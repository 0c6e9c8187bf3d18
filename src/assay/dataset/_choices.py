"""``shuffle_choices``: put a multiple-choice sample's options in another order.

A model that favours the first option, or a dataset whose right answer is mostly ``A``,
makes a multiple-choice score say little; shuffling the options, with the target's
letters moved to where their options went, tells the two apart. As in Inspect, the
target is the letter of the right choice (``"B"``) or a list of letters.

A sample's new order depends only on the seed and the sample's id, never on where the
sample stands in the dataset: a ``limit``, a ``filter`` or a resumed run shows each
sample with exactly the options it had in the whole dataset.
"""

from __future__ import annotations

import random
import string
from typing import Any

import msgspec

from assay.dataset._sample import Sample
from assay.errors import ConfigError

_LETTERS = string.ascii_uppercase


def choice_seed(shuffle_choices: bool | int | None) -> tuple[bool, int | None]:
    """Whether *shuffle_choices* asks for a shuffle, and its seed (``None``: a fresh one);
    anything but a bool, ``None`` or an int is refused."""
    if shuffle_choices is None or shuffle_choices is False:
        return False, None
    if shuffle_choices is True:
        return True, None
    if isinstance(shuffle_choices, int):
        return True, shuffle_choices
    raise ConfigError("dataset.shuffle_choices", value=shuffle_choices)


def dataset_seed(seed: int | None) -> int:
    """*seed*, or one drawn now: every sample of one call then shares it."""
    return random.SystemRandom().randrange(2**63) if seed is None else seed


def shuffled_choices(sample: Sample, seed: int, fallback_id: int, dataset: str) -> Sample:
    """*sample* with its choices reordered and its target letters remapped.

    *fallback_id* is the id the sample gets when it has none (its 1-based position, as
    ``freeze`` numbers it). A sample without choices is returned as it is.
    """
    if not sample.choices:
        return sample
    sample_id = sample.id if sample.id is not None else fallback_id
    order = list(range(len(sample.choices)))
    random.Random(f"{seed}:{sample_id}").shuffle(order)  # str seeds hash the same anywhere
    moved_to = {old: new for new, old in enumerate(order)}
    target = _remapped(sample.target, moved_to, sample_id, dataset)
    choices = [sample.choices[old] for old in order]
    return msgspec.structs.replace(sample, choices=choices, target=target)


def _remapped(target: Any, moved_to: dict[int, int], sample_id: object, dataset: str) -> Any:
    if isinstance(target, list):
        return [_letter(t, moved_to, sample_id, dataset) for t in target]
    return _letter(target, moved_to, sample_id, dataset)


def _letter(target: Any, moved_to: dict[int, int], sample_id: object, dataset: str) -> str:
    position = _LETTERS.find(target) if isinstance(target, str) and len(target) == 1 else -1
    if position < 0 or position not in moved_to:
        last = _LETTERS[min(len(moved_to), len(_LETTERS)) - 1]
        raise ConfigError(
            "dataset.choice_target", name=dataset, sample_id=sample_id, target=target, last=last
        )
    return _LETTERS[moved_to[position]]
