"""``assay run file.py@task`` (the Python path of ``run``) and ``assay list tasks``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from assay._messages import say
from assay.cli._print import print_decision, print_usage
from assay.errors import EXIT_FAILED, ConfigError


def parse_assignments(values: tuple[str, ...], option: str) -> dict[str, Any]:
    """``key=value`` pairs; values are read as YAML scalars (``3`` is an int)."""
    import yaml  # deferred: only task runs with -T/-M need it

    parsed: dict[str, Any] = {}
    for item in values:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError("task.option", option=option, reason=f"{item!r} is not key=value")
        try:
            parsed[key] = yaml.safe_load(raw) if raw else ""
        except yaml.YAMLError:
            parsed[key] = raw
    return parsed


def run_tasks(
    ref: str,
    models: tuple[str, ...],
    options: dict[str, Any],
    sign_key: Path | None = None,
    junit: Path | None = None,
) -> None:
    """Run the tasks in *ref* against *models*; print each unit; exit with the worst code.

    A unit in error prints why on stderr. One with a gate (it ran to its end, or stopped
    and was reported) exits with its gate's code, and never 0: errors are not a pass.
    """
    from assay.pipeline import eval as run_eval

    results = run_eval(ref, list(models) or None, handle_signals=True, **options)
    code = 0
    for result in results:
        click.echo(f"== {result.task} × {result.model}: {result.status}")
        if result.error:
            click.echo(f"   {result.error}", err=True)
        if result.gate is None or result.metrics is None:  # refused before its run: 2
            code = max(code, result.exit_code or EXIT_FAILED)
            continue
        for scorer_id, values in sorted(result.task_metrics.get(result.model, {}).items()):
            shown = ", ".join(f"{k} {_fmt(v)}" for k, v in values.items())
            click.echo(f"   {scorer_id}: {shown}")
        scorers = [e.scorer_id for e in result.metrics.estimates]
        decided = print_decision(result.metrics, result.gate, list(dict.fromkeys(scorers)))
        code = max(code, decided, EXIT_FAILED if result.error else 0)
        if result.report is not None:
            print_usage(result.report)
        click.echo(say("out.run_dir", path=result.path))
    if sign_key is not None:
        _sign_sealed(results, sign_key)
    from assay.cli._ci import write_ci_outputs

    write_ci_outputs([r.report for r in results if r.report is not None], junit)
    raise SystemExit(code)


def _sign_sealed(results: list[Any], sign_key: Path) -> None:
    """``run --sign``: sign each unit's run that was sealed (one stopped before its
    manifest was written has nothing to sign)."""
    from assay.cli._sign import sign_after_run
    from assay.evidence import read_manifest
    from assay.evidence._attest import SEALED

    for result in results:
        path = Path(result.path) if result.path else None
        if path is None or not (path / "manifest.json").exists():
            continue
        if read_manifest(path).get("status") in SEALED:
            sign_after_run(path, sign_key)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in value.items()) + "}"
    return str(value)


@click.group(name="list")
def list_group() -> None:
    """List things assay can find."""


@list_group.command(name="tasks")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
def list_tasks(paths: tuple[Path, ...]) -> None:
    """List the @task functions in Python files (folders are searched for *.py).

    Files are read, not imported: listing never runs anyone's code.
    """
    from assay.task import find_tasks

    files: list[Path] = []
    for path in paths or (Path("."),):
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    for file in files:
        for name in find_tasks(file):
            click.echo(f"{file}@{name}")
