"""Expand a spec into trials before anything runs: the plan fixes every denominator.

A trial is one (sample, target, repetition). Its id is a digest of the evaluation id,
target id, sample id and repetition, so the same spec plans the same ids on any machine
on any day, and two runs of one evaluation can be joined trial by trial.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence

import msgspec

from assay.spec import EvalSpec

_encode = msgspec.json.Encoder().encode


class Trial(msgspec.Struct, frozen=True):
    """One planned unit of work; ``index`` is its position in plan order."""

    index: int
    trial_id: str
    sample_index: int
    sample_id: str
    target_id: str
    repetition: int


def trial_id(evaluation: str, target_id: str, sample_id: str, repetition: int) -> str:
    """The stable id of a trial: 24 hex digits of SHA-256 over its four coordinates.

    The coordinates are hashed as a JSON array, so no choice of ids can make two
    different trials spell the same key.
    """
    return "t-" + _id_digest(evaluation, target_id, sample_id, repetition).hex()


def _id_digest(evaluation: str, target_id: str, sample_id: str, repetition: int) -> bytes:
    """The 12 bytes of SHA-256 a trial id spells in hex."""
    key = _encode([evaluation, target_id, sample_id, repetition])
    return hashlib.sha256(key).digest()[:ID_BYTES]


ID_BYTES = 12
"""Bytes of a trial id's digest (24 hex digits)."""

KEPT_UP_TO = 250_000
"""Trials of the largest plan whose ids a walk keeps (26 bytes each, in one string:
6.5 MB): a bigger plan hashes them again, so a million-trial run's memory still follows
its concurrency, not its plan (issue 18's driver, ≤ 150 MB at 1,000,000 trials)."""

HEX_DIGITS = 2 * ID_BYTES
"""Hex digits of a trial id's digest: the first of its SHA-256's ``hexdigest``."""

ID_LENGTH = 2 + HEX_DIGITS
"""Characters of a trial id (``t-`` and 24 hex digits)."""

JOIN_EVERY = 1024
"""Trial ids a first walk holds as strings before it joins them (a string each)."""


def sample_order(spec: EvalSpec, samples: int) -> Sequence[int]:
    """The dataset positions in plan order: file order, or, for a sequential gate, a
    random order seeded by the evaluation id and the declared seed (the same on every
    machine), so that every prefix of the plan is a random sample of the dataset."""
    stopping = spec.gate.stopping
    if stopping is None:
        return range(samples)
    order = list(range(samples))
    random.Random(f"assay.plan/{spec.evaluation}/{stopping.seed}").shuffle(order)
    return order


class Plan:
    """The trials of a spec, in plan order: sample-major, then target, then repetition.

    Trials are generated, not stored, so a plan of a million trials costs nothing until
    it is walked; a whole walk of a plan of up to ``KEPT_UP_TO`` trials keeps the ids
    (26 bytes a trial, in one string), so the next walk hashes nothing and slices each id
    out whole (a run walks its plan twice: ``plan.jsonl``, then the trials; one SHA-256
    and its hex a trial less).
    Interleaving targets per sample keeps drifts (a slower machine later in the run)
    from favouring one target. Samples come in file order, or in a seeded random order
    for a sequential gate (``sample_order``); all trials of a sample stay together.
    """

    def __init__(self, spec: EvalSpec, sample_ids: Sequence[str]) -> None:
        self.spec = spec
        self.sample_ids = sample_ids
        self.target_ids = [t.id for t in spec.targets]
        self.order = sample_order(spec, len(sample_ids))
        self._ids: str | None = None  # every trial id, joined, once a walk has ended

    def __len__(self) -> int:
        return len(self.sample_ids) * len(self.target_ids) * self.spec.repetitions

    def __iter__(self) -> Iterator[Trial]:
        known = self._ids  # an earlier walk's: sliced, not hashed again
        if known is not None:
            return self._kept(known)
        return self._hashed(len(self) <= KEPT_UP_TO)

    def _pairs(self) -> Iterator[tuple[int, str]]:
        """(dataset position, sample id) in plan order."""
        order = self.order
        # file order: the ids read in one pass (``PackedText.__iter__``), not one by one
        ids = (
            self.sample_ids if isinstance(order, range) else map(self.sample_ids.__getitem__, order)
        )
        return zip(order, ids, strict=True)

    def _per_sample(self) -> list[tuple[str, int, bytes, bytes]]:
        """Each (target, repetition) of a sample, with the bytes of its id's key before
        and after the sample id: ``_id_digest``'s JSON array, cut around its third item
        (compact JSON: the same bytes), so a trial encodes only its sample's id."""
        evaluation = self.spec.evaluation
        return [
            (
                target_id,
                repetition,
                _encode([evaluation, target_id])[:-1] + b",",
                b",%d]" % repetition,
            )
            for target_id in self.target_ids
            for repetition in range(1, self.spec.repetitions + 1)
        ]

    def _hashed(self, keep: bool) -> Iterator[Trial]:
        """The first walk: each trial's id hashed (and, if *keep*, kept)."""
        held: list[str] = []  # the ids since the last join
        joined: list[str] = []
        index = 0
        combos, sha256 = self._per_sample(), hashlib.sha256
        for sample_index, sample_id in self._pairs():
            key = _encode(sample_id)
            for target_id, repetition, head, tail in combos:
                tid = "t-" + sha256(head + key + tail).hexdigest()[:HEX_DIGITS]
                if keep:
                    held.append(tid)
                yield Trial(index, tid, sample_index, sample_id, target_id, repetition)
                index += 1
            if len(held) >= JOIN_EVERY:
                joined.append("".join(held))
                held.clear()
        if keep:  # walked to the end: the next walk hashes nothing
            joined.append("".join(held))
            self._ids = "".join(joined)

    def _kept(self, known: str) -> Iterator[Trial]:
        """A later walk: the ids sliced from the first walk's."""
        index = at = 0
        combos = self._per_sample()
        for sample_index, sample_id in self._pairs():
            for target_id, repetition, _, _ in combos:
                tid = known[at : at + ID_LENGTH]
                yield Trial(index, tid, sample_index, sample_id, target_id, repetition)
                index += 1
                at += ID_LENGTH

    @property
    def per_sample(self) -> int:
        """Trials per sample: every target, every repetition."""
        return len(self.target_ids) * self.spec.repetitions

    def denominators(self, shard: Shard | None = None) -> dict[str, int]:
        """Planned trials per target (of *shard*, if given): the denominator of every
        per-target metric."""
        samples = len(self.sample_ids) if shard is None else shard.samples(len(self.sample_ids))
        return dict.fromkeys(self.target_ids, samples * self.spec.repetitions)


SHARD_REASON = (
    "shard {label} holds part of the plan: its gate is partial; "
    "'assay merge' of every shard gives the verdict"
)
"""The first reason of a shard's gate (in English, as every reason of the chain is)."""


def is_shard_reason(reason: str) -> bool:
    """Whether *reason* is the one a shard's partial gate opens with."""
    head, _, tail = SHARD_REASON.partition("{label}")
    return reason.startswith(head) and reason.endswith(tail)


class Shard(msgspec.Struct, frozen=True):
    """Part *index* (1-based) of *count* of a plan, for ``assay run --shard K/N``.

    A shard takes whole samples, round robin in plan order (the sample at plan position
    p goes to shard ``p % count + 1``): all of a sample's targets and repetitions stay
    together, so each shard's scores are clustered by sample exactly as a whole run's
    are, and the parts are disjoint and cover the plan whatever the dataset's size.
    """

    index: int
    count: int

    def holds(self, trial_index: int, per_sample: int) -> bool:
        """Whether the trial at plan position *trial_index* belongs to this shard."""
        return (trial_index // per_sample) % self.count == self.index - 1

    def samples(self, total: int) -> int:
        """How many of *total* samples this shard takes."""
        return len(range(self.index - 1, total, self.count))

    def label(self) -> str:
        """``K/N``, as given on the command line."""
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard | None:
    """``K/N`` with ``1 <= K <= N`` as a Shard; ``None`` for anything else."""
    first, slash, last = text.strip().partition("/")
    if not (slash and first.isdigit() and last.isdigit()):
        return None
    index, count = int(first), int(last)
    return Shard(index, count) if 1 <= index <= count else None


def plan(spec: EvalSpec, sample_ids: Sequence[str]) -> Plan:
    """Plan *spec* over the dataset's *sample_ids* (file order)."""
    return Plan(spec, sample_ids)
