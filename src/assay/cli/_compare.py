"""``assay compare RUN_A RUN_B``: a paired comparison of two runs over the same samples.

Both runs are verified first (a comparison of evidence that does not verify would be a
comparison of nothing); a sample id both runs have must name the same sample (its
digest, from the bundles), else the comparison is refused (exit 2). Then their
``scores.jsonl`` are paired by sample id (and repetition), RUN_A held as a compact table
and RUN_B streamed past it. With repetitions the comparison of per-sample means (the
clustered test) is printed first. Exit 0 whatever the difference: this reports, it does
not gate.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from assay._messages import say
from assay.cli._sign import check_trust, trust_option
from assay.errors import ConfigError, EvidenceError


@click.command()
@click.argument("run_a", metavar="RUN_A", type=click.Path(path_type=Path))
@click.argument("run_b", metavar="RUN_B", type=click.Path(path_type=Path))
@click.option("--confidence", default=0.95, show_default=True, help="Level of the interval.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparisons as JSON.")
@trust_option
def compare(
    run_a: Path, run_b: Path, confidence: float, as_json: bool, trust: tuple[Path, ...]
) -> None:
    """Compare RUN_B against RUN_A: exact McNemar, paired bootstrap, flipped samples."""
    import msgspec

    from assay.compare import compare_runs

    for run in (run_a, run_b):  # both sides of a comparison are claims
        check_trust(run, trust)
    spec_a, spec_b = _verified_spec(run_a), _verified_spec(run_b)
    _same_samples(run_a, run_b)
    matches = _matches(run_a, run_b, spec_a, spec_b)
    repetitions = (int(spec_a.get("repetitions", 1)), int(spec_b.get("repetitions", 1)))
    comparisons = compare_runs(_records(run_a), _records(run_b), matches, confidence, repetitions)
    for c in comparisons:
        if c.pairs == 0:
            target = f"{c.a} / {c.b}"
            raise ConfigError(
                "compare.no_pairs", a=run_a, b=run_b, target=target, scorer=c.scorer_id
            )
    if as_json:
        click.echo(msgspec.json.format(msgspec.json.encode(comparisons), indent=2))
        return
    for c in comparisons:
        key = "out.compare_mean" if c.measure == "mean" else "out.compare"
        click.echo(
            say(
                key,
                a=c.a,
                b=c.b,
                scorer=c.scorer_id,
                pairs=c.pairs,
                rate_a=c.rate_a,
                rate_b=c.rate_b,
                difference=c.difference,
                level=c.ci_level,
                low=c.ci_low,
                high=c.ci_high,
                a_only=c.a_only,
                b_only=c.b_only,
                test=c.test,
                p=c.p_value,
                p_adjusted=c.p_adjusted,
            )
        )
        if c.unpaired_a or c.unpaired_b:
            click.echo(say("out.unpaired", a=c.unpaired_a, b=c.unpaired_b))
        for f in c.flipped:
            click.echo(
                say("out.flipped", sample=f.sample_id, repetition=f.repetition, a=f.a, b=f.b)
            )


def _verified_spec(run: Path) -> dict[str, Any]:
    from assay._digest import loads
    from assay.evidence import SPEC, verify_run

    result = verify_run(run)
    if not result.ok:
        raise EvidenceError(
            "evidence.tampered", path=str(run), count=len(result.problems), first=result.problems[0]
        )
    spec: dict[str, Any] = loads((run / SPEC).read_bytes())
    return spec


def _same_samples(run_a: Path, run_b: Path) -> None:
    """Refuse runs whose shared sample ids name different samples."""
    from assay.gate import changed_sample_ids

    changed = changed_sample_ids(run_a, run_b)
    if changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        samples = ", ".join(changed[:3]) + more
        raise ConfigError("compare.sample_changed", a=run_a, b=run_b, samples=samples)


def _records(run: Path) -> Iterator[dict[str, Any]]:
    from assay.evidence import score_records

    return score_records(run)


def _matches(
    run_a: Path, run_b: Path, spec_a: dict[str, Any], spec_b: dict[str, Any]
) -> list[tuple[str, str]]:
    targets_a = [t["id"] for t in spec_a["targets"]]
    targets_b = [t["id"] for t in spec_b["targets"]]
    common = [t for t in targets_a if t in targets_b]
    if common:
        return [(t, t) for t in common]
    if len(targets_a) == 1 and len(targets_b) == 1:
        return [(targets_a[0], targets_b[0])]
    raise ConfigError(
        "compare.no_match", a=run_a, b=run_b, targets_a=targets_a, targets_b=targets_b
    )
