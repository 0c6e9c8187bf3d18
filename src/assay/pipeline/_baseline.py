"""Where a run's ``no_regression`` baseline is, and its comparison with the run's scores.

The command line (``--baseline RUN``) wins over the spec's ``gate.no_regression.baseline``,
which resolves inside the spec's folder like every spec path. The policy itself (margin,
confidence) always comes from the frozen spec: a baseline given for a spec without one
is a usage error, not a silent default.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.gate._regression import Baseline, Regression
from assay.spec import EvalSpec, resolve_folder_inside

FIELD = "gate.no_regression.baseline"


def check_baseline_option(spec: EvalSpec, given: Path | None) -> None:
    """Refuse ``--baseline`` for a spec that declares no ``no_regression`` policy."""
    if given is not None and spec.gate.regression is None:
        raise ConfigError("gate.baseline_unused", path=str(given))


def baseline_path(spec: EvalSpec, spec_folder: Path | None, given: Path | None) -> Path | None:
    """The baseline run the gate reads: *given* (``--baseline``), else the spec's, inside
    its folder; ``None`` without either. ConfigError when the spec's path leaves it."""
    rule = spec.gate.regression
    if given is not None or rule is None or rule.baseline is None or spec_folder is None:
        return given
    return resolve_folder_inside(spec_folder, rule.baseline, FIELD)


def regression_of(
    spec: EvalSpec,
    spec_folder: Path | None,
    given: Path | None,
    records: Iterable[dict[str, Any]] | None,
    run: Path | Sequence[Path] | None = None,
) -> Regression | None:
    """The baseline comparison the gate needs, or ``None`` without ``no_regression``.

    *records* are the run's score records (``None`` in a dry run, which keeps none);
    *run* is its folder, whose bundles name the samples checked against the baseline's
    (or the shard folders a merge joins).
    """
    check_baseline_option(spec, given)
    rule = spec.gate.regression
    if rule is None:
        return None
    try:
        path = baseline_path(spec, spec_folder, given)
    except ConfigError as exc:  # e.g. a symlink out of the spec's folder
        return Regression(Baseline(str(rule.baseline), problem=exc.one_line()))
    # the comparison reads and verifies the baseline run: its modules load only here
    from assay.gate._baseline import compare_with_baseline, no_baseline

    if path is None:
        return no_baseline()
    if records is None:
        return Regression(Baseline(str(path), problem="a dry run keeps no scores to pair"))
    targets = [t.id for t in spec.targets]
    level = spec.gate.regression_level
    return compare_with_baseline(
        path, records, targets, spec.repetitions, level, run, rule.max_unpaired
    )
