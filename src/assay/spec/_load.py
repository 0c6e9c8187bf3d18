"""Load a YAML spec into a frozen ``EvalSpec``, checking every field and path first.

The YAML is decoded into *raw* records that mirror what a person writes (with unknown
fields refused, so a typo is an error rather than a silently ignored setting), then
paths are resolved inside the spec's folder and every file that decides results is
pinned by digest.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from assay.dataset import Dataset, load_jsonl
from assay.errors import ConfigError
from assay.spec._model import (
    DatasetRef,
    EvalSpec,
    GatePolicy,
    RetryPolicy,
    ScorerKind,
    ScorerSpec,
    TargetSpec,
)
from assay.spec._paths import check_relative, resolve_inside
from assay.spec._targets import RawTarget, program_target
from assay.spec._yaml import parse_yaml

_SAMPLE_FIELDS = ("id", "input", "expected", "metadata")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class _RawScorer(msgspec.Struct, forbid_unknown_fields=True):
    type: ScorerKind
    id: str | None = None
    field: str | None = None
    pattern: str | None = None
    ignore_case: bool = False


class _RawSpec(msgspec.Struct, forbid_unknown_fields=True):
    evaluation: str
    dataset: str
    targets: list[RawTarget]
    scorers: list[_RawScorer]
    repetitions: int = 1
    gate: GatePolicy = GatePolicy()
    retry: RetryPolicy = RetryPolicy()
    hidden_fields: list[str] = []
    description: str = ""


class LoadedSpec(msgspec.Struct, frozen=True):
    """A frozen spec with what is needed to run it: its folder and its dataset."""

    spec: EvalSpec
    root: Path
    dataset: Dataset
    source: Path


def load_spec(path: Path) -> LoadedSpec:
    """Read, validate and freeze the YAML spec at *path*."""
    display = str(path)
    data = _read_text(path, display)
    raw = _parse(data, display)
    root = path.resolve().parent
    dataset_path = resolve_inside(root, raw.dataset, "dataset")
    dataset = load_jsonl(dataset_path, raw.dataset)
    targets = tuple(program_target(root, t, display, i) for i, t in enumerate(raw.targets))
    scorers = tuple(_scorer(s, display, i) for i, s in enumerate(raw.scorers))
    _check(raw, targets, scorers, display)
    spec = EvalSpec(
        evaluation=raw.evaluation,
        description=raw.description,
        dataset=DatasetRef(path=raw.dataset, digest=dataset.digest, samples=len(dataset)),
        targets=targets,
        scorers=scorers,
        repetitions=raw.repetitions,
        gate=raw.gate,
        retry=raw.retry,
        hidden_fields=tuple(raw.hidden_fields),
    )
    return LoadedSpec(spec=spec, root=root, dataset=dataset, source=path.resolve())


def _read_text(path: Path, display: str) -> str:
    if not path.exists():
        raise ConfigError("spec.not_found", path=display)
    if not path.is_file():
        raise ConfigError("spec.unreadable", path=display, reason="it is not a regular file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError("spec.unreadable", path=display, reason=exc.strerror) from None
    if data.startswith(b"\xef\xbb\xbf"):
        raise ConfigError("spec.encoding", path=display, reason="it starts with a byte-order mark")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"byte {exc.start}: {exc.reason}"
        raise ConfigError("spec.encoding", path=display, reason=reason) from None


def _parse(text: str, display: str) -> _RawSpec:
    document: Any = parse_yaml(text, display)
    if not isinstance(document, dict):
        raise ConfigError("spec.shape", path=display, reason="the spec must be a YAML mapping")
    try:
        return msgspec.convert(document, _RawSpec, strict=True)
    except msgspec.ValidationError as exc:
        raise ConfigError("spec.shape", path=display, reason=_field_message(exc)) from None


def _field_message(exc: msgspec.ValidationError) -> str:
    """Turn msgspec's ``... - at `$.targets[0]``` into ``targets[0]: ...``."""
    text = str(exc)
    message, sep, where = text.partition(" - at `$")
    if not sep:
        return text
    return f"{where.rstrip('`').lstrip('.')}: {message}"


def _scorer(raw: _RawScorer, display: str, index: int) -> ScorerSpec:
    where = f"scorers[{index}]"
    if raw.type == "field_match" and not raw.field:
        raise ConfigError("spec.shape", path=display, reason=f"{where}: field_match needs 'field'")
    if raw.type == "regex":
        if not raw.pattern:
            reason = f"{where}: regex needs 'pattern'"
            raise ConfigError("spec.shape", path=display, reason=reason)
        try:
            re.compile(raw.pattern)
        except re.error as exc:
            reason = f"{where}.pattern: not a valid regular expression ({exc})"
            raise ConfigError("spec.shape", path=display, reason=reason) from None
    scorer_id = raw.id or (f"{raw.type}:{raw.field}" if raw.field else raw.type)
    return ScorerSpec(
        id=scorer_id,
        kind=raw.type,
        field=raw.field,
        pattern=raw.pattern,
        ignore_case=raw.ignore_case,
    )


def _check(
    raw: _RawSpec, targets: tuple[TargetSpec, ...], scorers: tuple[ScorerSpec, ...], display: str
) -> None:
    def fail(reason: str) -> None:
        raise ConfigError("spec.shape", path=display, reason=reason)

    if not _ID.match(raw.evaluation):
        fail("evaluation: use letters, digits, '.', '_' or '-' (at most 128)")
    if not targets:
        fail("targets: list at least one target")
    if not scorers:
        fail("scorers: list at least one scorer")
    for name in raw.hidden_fields:
        if name in _SAMPLE_FIELDS:
            fail(f"hidden_fields: {name!r} is a sample field itself; name a key inside it")
    if not 1 <= raw.repetitions <= 100_000:
        fail("repetitions: must be between 1 and 100,000")
    if raw.retry.max_attempts < 1 or raw.retry.initial_backoff < 0 or raw.retry.max_backoff < 0:
        fail("retry: max_attempts must be 1 or more and backoffs not negative")
    _check_unique([t.id for t in targets], "targets", fail)
    _check_unique([s.id for s in scorers], "scorers", fail)
    for target_id in [t.id for t in targets]:
        if not _ID.match(target_id):
            fail(f"targets: id {target_id!r} must use letters, digits, '.', '_' or '-'")
    known = {t.id for t in targets}
    for name, minimum in [("minimum", raw.gate.minimum), *raw.gate.targets.items()]:
        if minimum is not None and not 0.0 <= minimum <= 1.0:
            fail(f"gate.{name}: a minimum pass rate is between 0 and 1")
    for name in raw.gate.targets:
        if name not in known:
            fail(f"gate.targets: {name!r} is not one of the targets")
    if raw.gate.scorer is not None and raw.gate.scorer not in {s.id for s in scorers}:
        fail(f"gate.scorer: {raw.gate.scorer!r} is not one of the scorers")
    for name in ("confidence", "min_effect", "power"):
        value = getattr(raw.gate, name)
        if not isinstance(value, msgspec.UnsetType) and not 0.0 < value < 1.0:
            fail(f"gate.{name}: must be strictly between 0 and 1")
    if raw.gate.effect is None and not isinstance(raw.gate.power, msgspec.UnsetType):
        fail("gate.power: declare min_effect, the effect the power is for")
    _check_regression(raw.gate, fail)
    _check_sequential(raw.gate, fail)


def _check_sequential(gate: GatePolicy, fail: Any) -> None:
    """Refuse what the sequential gate cannot yet decide (see ``gate._sequential``)."""
    stopping = gate.stopping
    if stopping is None:
        return
    if stopping.every < 1:
        fail("gate.sequential.every: look after 1 or more samples")
    if gate.minimum is None and not gate.targets:
        fail("gate.sequential: declare a minimum, the rate each look decides against")
    if not gate.confident:
        fail("gate.sequential: declare confidence, the level of the confidence sequence")
    if gate.regression is not None:
        fail("gate.sequential: not supported with no_regression yet; remove one of them")
    if gate.effect is not None:
        fail("gate.sequential: not supported with min_effect (it sizes a fixed n); remove one")


def _check_regression(gate: GatePolicy, fail: Any) -> None:
    policy = gate.regression
    if policy is None:
        return
    if not 0.0 <= policy.margin < 1.0:
        fail("gate.no_regression.margin: must be at least 0 and below 1")
    level = policy.confidence
    if not isinstance(level, msgspec.UnsetType) and not 0.0 < level < 1.0:
        fail("gate.no_regression.confidence: must be strictly between 0 and 1")
    if isinstance(policy.max_unpaired, bool) or policy.max_unpaired < 0:
        fail("gate.no_regression.max_unpaired: must be a whole number, at least 0")
    if policy.baseline is not None:
        check_relative(policy.baseline, "gate.no_regression.baseline")


def _check_unique(ids: list[str], field: str, fail: Any) -> None:
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            fail(f"{field}: id {item!r} is used twice")
        seen.add(item)
