"""The frozen evaluation spec: everything that decides results, as immutable records.

An ``EvalSpec`` is built once from YAML (or, later, Python) and never changes during a
run. Its canonical JSON is written to the run directory and its SHA-256 is the spec
digest. Secrets never enter it: targets take credentials from the environment at run
time, and a spec has no field that could hold one.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from assay._digest import canonical_json, digest_of

SPEC_SCHEMA = "assay.spec/1"
PYTHON = "{python}"
"""In a target's argv, stands for the Python running assay (kept symbolic so the
spec digest is the same on every machine)."""

TargetKind = Literal["subprocess", "callable", "solver", "http"]
ScorerKind = Literal["field_match", "exact", "includes", "regex", "python"]


class DatasetRef(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Which dataset, pinned by the SHA-256 of its bytes and its sample count."""

    path: str
    digest: str
    samples: int


class TargetSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One system under test.

    ``subprocess`` targets run ``argv`` (no shell) with the sample as JSON on stdin;
    ``script`` names a file in the spec folder whose digest is pinned in ``digest``.
    ``callable`` targets call ``module:function`` in-process. ``solver`` targets run a
    Python task's solver chain (``solver``, as registered components) against ``model``
    with ``config`` and per-sample ``limits``.

    ``env`` is a program's environment allow-list: each name maps to the value written in
    the spec, or to ``None`` for "passed from assay's environment when the call is made"
    (so a secret is named here, never held). Left out when not declared, so older specs
    keep their digests.

    ``sandbox`` runs a program isolated (``bwrap``) or, said out loud, not (``local``, the
    same as leaving it out); ``network`` keeps the host's network inside ``bwrap``. Both
    are left out when not declared.

    ``protocol: jsonl`` keeps a program running for the whole run (a pool of ``workers``
    processes) and sends it one request per line instead of starting it per call; both
    are left out when not declared.

    ``sandboxes`` lists a Python task's sandboxes (provider, options, name) for every
    sample that does not name its own.
    """

    id: str
    kind: TargetKind
    argv: tuple[str, ...] = ()
    script: str | None = None
    callable: str | None = None
    digest: str | None = None
    timeout: float = 30.0
    max_output_bytes: int = 1_048_576
    url: str | None = None
    headers_from_env: dict[str, str] | None = None
    model: str | None = None
    solver: list[Any] | None = None
    config: dict[str, Any] | None = None
    limits: dict[str, Any] | None = None
    env: dict[str, str | None] | None = None
    sandbox: str | None = None
    network: bool = False
    sandboxes: list[Any] | None = None
    protocol: str | None = None
    workers: int = 1
    model_roles: dict[str, str] | None = None  # a Python task's models by role
    approval: list[Any] | None = None  # a Python task's approval policies: names, globs


class ScorerSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One scorer: what it compares and how."""

    id: str
    kind: ScorerKind
    field: str | None = None
    pattern: str | None = None
    ignore_case: bool = False
    component: dict[str, Any] | None = None
    metrics: list[Any] | None = None


class NoRegression(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """The ``no_regression`` policy: each target must not be worse than a baseline run.

    ``baseline`` is a run folder inside the spec's folder (or given on the command line
    with ``--baseline``, which wins); ``margin`` is how much worse (as a difference of
    pass rates, or of mean scores) still counts as no regression; ``confidence`` is the
    level of the paired interval (default: the gate's ``confidence``, else 0.95);
    ``max_unpaired`` is how many samples may go unpaired (absent from one run, or not
    measured in either) before the check is inconclusive (left out when 0, so older
    specs keep their digests).
    """

    margin: float
    baseline: str | None = None
    confidence: float | msgspec.UnsetType = msgspec.UNSET
    max_unpaired: int = 0


class Sequential(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """The ``sequential`` policy: look after every ``every`` samples, stop when decided.

    ``seed`` fixes the random order of samples in the plan (so every prefix of the plan
    is a random sample of the dataset); see ``assay.gate._sequential``.
    """

    every: int = 10
    seed: int = 0


class GatePolicy(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The release rule: each target's pass rate must reach its minimum.

    ``minimum`` applies to every target; ``targets`` overrides it for named ones. A
    target with no minimum is reported but not gated. With ``confidence`` the minimum is
    judged by the pass rate's interval at that level (passed only when its lower bound
    reaches the minimum, failed only when its upper bound is below it, inconclusive in
    between). ``min_effect`` (with ``power``, default 0.8) makes a plan too small to
    detect that effect inconclusive. ``no_regression`` compares each target with the same
    target of a baseline run, paired by sample. ``multiplicity`` (``holm``, the default,
    or ``none``) is how the interval-based checks of a run share one error rate.
    ``sequential`` plans samples in a seeded random order and stops the run once every
    minimum is decided. The newer fields are left out of the canonical JSON when not
    declared, so older specs keep their digests.
    """

    minimum: float | None = None
    targets: dict[str, float] = {}
    scorer: str | None = None
    confidence: float | msgspec.UnsetType = msgspec.UNSET
    min_effect: float | msgspec.UnsetType = msgspec.UNSET
    power: float | msgspec.UnsetType = msgspec.UNSET
    no_regression: NoRegression | msgspec.UnsetType = msgspec.UNSET
    multiplicity: Literal["holm", "none"] | msgspec.UnsetType = msgspec.UNSET
    sequential: bool | Sequential | msgspec.UnsetType = msgspec.UNSET

    @property
    def stopping(self) -> Sequential | None:
        """The sequential policy (``sequential: true`` is every default), if declared."""
        if isinstance(self.sequential, Sequential):
            return self.sequential
        return Sequential() if self.sequential is True else None

    def minimum_for(self, target_id: str) -> float | None:
        """The declared minimum pass rate for *target_id*, if any."""
        return self.targets.get(target_id, self.minimum)

    @property
    def confidence_level(self) -> float:
        """The level of every interval: the declared ``confidence``, else 0.95."""
        return 0.95 if isinstance(self.confidence, msgspec.UnsetType) else self.confidence

    @property
    def confident(self) -> bool:
        """Whether the minimum is judged by the interval rather than the point rate."""
        return not isinstance(self.confidence, msgspec.UnsetType)

    @property
    def effect(self) -> float | None:
        """The smallest effect the plan must be able to detect, if declared."""
        return None if isinstance(self.min_effect, msgspec.UnsetType) else self.min_effect

    @property
    def regression(self) -> NoRegression | None:
        """The ``no_regression`` policy, if declared."""
        return None if isinstance(self.no_regression, msgspec.UnsetType) else self.no_regression

    @property
    def regression_level(self) -> float:
        """The level of the no-regression interval: its own, else the gate's confidence."""
        policy = self.regression
        if policy is not None and not isinstance(policy.confidence, msgspec.UnsetType):
            return policy.confidence
        return self.confidence_level

    @property
    def multiplicity_method(self) -> str:
        """How the run's interval-based checks share their error rate: ``holm`` or ``none``."""
        return "holm" if isinstance(self.multiplicity, msgspec.UnsetType) else self.multiplicity

    @property
    def power_level(self) -> float:
        """The power to detect ``min_effect`` with: the declared ``power``, else 0.8."""
        return 0.8 if isinstance(self.power, msgspec.UnsetType) else self.power


class RetryPolicy(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How infrastructure failures are retried: bounded exponential backoff with jitter."""

    max_attempts: int = 3
    initial_backoff: float = 0.2
    max_backoff: float = 5.0


class EvalSpec(
    msgspec.Struct,
    frozen=True,
    forbid_unknown_fields=True,
    omit_defaults=True,
    tag_field="schema",
    tag=SPEC_SCHEMA,
):
    """A frozen evaluation: dataset × targets × repetitions, scored and gated."""

    evaluation: str
    dataset: DatasetRef
    targets: tuple[TargetSpec, ...]
    scorers: tuple[ScorerSpec, ...]
    repetitions: int = 1
    gate: GatePolicy = GatePolicy()
    retry: RetryPolicy = RetryPolicy()
    hidden_fields: tuple[str, ...] = ()
    description: str = ""
    task: dict[str, Any] | None = None
    epochs_reducer: tuple[str, ...] = ()
    errors: dict[str, Any] | None = None
    task_info: dict[str, Any] | None = None
    """A Python task's own description: ``version``, ``tags``, ``metadata`` (what Inspect
    records in its log's header), so runs of different task versions are told apart."""

    def canonical(self) -> bytes:
        """The canonical JSON bytes that are written to ``spec.json`` and digested."""
        return canonical_json(self)

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of the canonical JSON."""
        return digest_of(self)

    def target(self, target_id: str) -> TargetSpec:
        """The target with *target_id*."""
        for target in self.targets:
            if target.id == target_id:
                return target
        raise KeyError(target_id)
