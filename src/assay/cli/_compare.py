"""``assay compare RUN_A RUN_B``: a paired comparison of two runs over the same samples.

Both runs are verified first (a comparison of evidence that does not verify would be a
comparison of nothing); then their ``scores.jsonl`` are paired by sample id and
repetition. Exit 0 whatever the difference: this reports, it does not gate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from assay._messages import say
from assay.errors import ConfigError, EvidenceError


@click.command()
@click.argument("run_a", metavar="RUN_A", type=click.Path(path_type=Path))
@click.argument("run_b", metavar="RUN_B", type=click.Path(path_type=Path))
@click.option("--confidence", default=0.95, show_default=True, help="Level of the interval.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparisons as JSON.")
def compare(run_a: Path, run_b: Path, confidence: float, as_json: bool) -> None:
    """Compare RUN_B against RUN_A: exact McNemar, difference, flipped samples."""
    import msgspec

    from assay.compare import compare_runs

    records_a, records_b = _verified_scores(run_a), _verified_scores(run_b)
    matches = _matches(run_a, run_b, records_a, records_b)
    comparisons = compare_runs(records_a, records_b, matches, confidence)
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
        click.echo(
            say(
                "out.compare",
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
                p=c.p_value,
            )
        )
        for f in c.flipped:
            click.echo(
                say("out.flipped", sample=f.sample_id, repetition=f.repetition, a=f.a, b=f.b)
            )


def _verified_scores(run: Path) -> list[dict[str, Any]]:
    from assay.evidence import SCORES, verify_run

    result = verify_run(run)
    if not result.ok:
        raise EvidenceError(
            "evidence.tampered", path=str(run), count=len(result.problems), first=result.problems[0]
        )
    with open(run / SCORES, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _matches(
    run_a: Path, run_b: Path, records_a: list[dict[str, Any]], records_b: list[dict[str, Any]]
) -> list[tuple[str, str]]:
    targets_a = list(dict.fromkeys(r["target_id"] for r in records_a))
    targets_b = list(dict.fromkeys(r["target_id"] for r in records_b))
    common = [t for t in targets_a if t in targets_b]
    if common:
        return [(t, t) for t in common]
    if len(targets_a) == 1 and len(targets_b) == 1:
        return [(targets_a[0], targets_b[0])]
    raise ConfigError(
        "compare.no_match", a=run_a, b=run_b, targets_a=targets_a, targets_b=targets_b
    )
