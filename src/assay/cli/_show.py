"""``assay show RUN ID``: one trial (or every trial of a sample), read from its evidence.

What a person reads first when a score looks wrong: the trial's state and attempts,
what was expected, what the target answered, and each score with its reason. Every
part is checked against its digest before it is shown (see ``assay.evidence._lookup``).
Text from a target is shown with control characters escaped, so an answer cannot move
the cursor or recolour the terminal; ``--json`` prints the records themselves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from assay._messages import say
from assay.cli._sign import check_trust, trust_option
from assay.cli._spans import span_lines
from assay.cli._transcript import transcript_lines
from assay.errors import ConfigError
from assay.model._content import shown_content

SHOWN_CHARS = 2_000
"""Longer outputs are cut here unless ``--full`` is given."""

_KEEP = {"\n", "\t"}


@click.command()
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@click.argument("ident", metavar="ID", required=False)
@click.option(
    "--trial",
    "transcript_of",
    metavar="ID",
    help="Show trial ID (or each trial of sample ID) with its transcript, turn by turn.",
)
@click.option("--json", "as_json", is_flag=True, help="Print each trial as one JSON line.")
@click.option("--full", is_flag=True, help=f"Show outputs longer than {SHOWN_CHARS} characters.")
@trust_option
def show(
    run_dir: Path,
    ident: str | None,
    transcript_of: str | None,
    as_json: bool,
    full: bool,
    trust: tuple[Path, ...],
) -> None:
    """Show trial ID (t-…) or every trial of sample ID in RUN, checked against its digests."""
    from assay.evidence import checked_events, find_trials, read_manifest
    from assay.evidence._lookup import checked_stderr

    if (ident is None) == (transcript_of is None):
        raise ConfigError("show.one_id")
    read_manifest(run_dir)  # not a run at all: one line, exit 4
    if trust:
        _check_signed_whole(run_dir, trust)
    wanted = ident if ident is not None else str(transcript_of)
    trials = find_trials(run_dir, wanted)
    if not trials:
        raise ConfigError("show.unknown_id", path=str(run_dir), ident=wanted)
    for trial in trials:
        seen = trial.bundle["observation"]
        output = _as_recorded(trial.output, seen["media"]) if trial.output is not None else None
        if as_json:
            record = {
                "bundle": trial.bundle,
                "sample": trial.sample,
                "output": output,
                "scores": trial.scores,
            }
            click.echo(json.dumps(record, ensure_ascii=False, sort_keys=True))
        else:
            events = None
            if transcript_of is not None and _is_task_state(output):
                events = checked_events(trial.folder or run_dir, trial.bundle)
            stderr = checked_stderr(trial.folder or run_dir, trial.bundle)
            _print_trial(trial.bundle, trial.sample, output, trial.scores, full, events, stderr)


def _check_signed_whole(run_dir: Path, trust: tuple[Path, ...]) -> None:
    """``--trust``: the signature covers the manifest, and only a whole verify ties what
    ``show`` reads (one bundle line, one score line) to it, so the run is verified first."""
    from assay.errors import EvidenceError
    from assay.evidence import verify_run

    check_trust(run_dir, trust)
    result = verify_run(run_dir)
    if not result.ok:
        raise EvidenceError(
            "evidence.tampered",
            path=str(run_dir),
            count=len(result.problems),
            first=result.problems[0],
        )


def _print_trial(
    bundle: dict[str, Any],
    sample: dict[str, Any] | None,
    output: Any,
    scores: list[dict[str, Any]],
    full: bool,
    events: list[dict[str, Any]] | None = None,
    stderr: bytes | None = None,
) -> None:
    head, seen = bundle["trial"], bundle["observation"]
    click.echo(
        say(
            "out.show_trial",
            trial=head["trial_id"],
            target=head["target_id"],
            sample=_text(head["sample_id"], full),
            repetition=head["repetition"],
        )
    )
    attempts = ", ".join(a["reason"] or a["status"] for a in bundle["attempts"])
    click.echo(
        say(
            "out.show_state",
            state=bundle["state"],
            outcome=seen["outcome"],
            attempts=f"{len(bundle['attempts'])} ({attempts})",
        )
    )
    if sample is not None:
        click.echo(say("out.show_input", value=_text(sample.get("input"), full)))
    click.echo(say("out.show_expected", value=_text(seen["expected"], full)))
    if _is_task_state(output) and events is not None:  # --trial: turn by turn
        click.echo(say("out.show_transcript"))
        for line in transcript_lines(output, events, lambda value: _item(value, full)):
            click.echo(line)
        spans = span_lines(events, lambda value: _item(value, full))
        if spans:
            click.echo(say("out.show_spans"))
            click.echo("\n".join(spans))
        answer = (output.get("output") or {}).get("message") or {}
        click.echo(say("out.show_output", value=_text(answer.get("content", ""), full)))
    elif _is_task_state(output):  # a Python task's: its conversation, then the answer
        click.echo(say("out.show_messages"))
        for message in output["messages"]:
            click.echo("    " + _message_line(message, full))
        answer = (output.get("output") or {}).get("message") or {}
        click.echo(say("out.show_output", value=_text(answer.get("content", ""), full)))
    elif output is not None:
        click.echo(say("out.show_output", value=_text(output, full)))
    if seen.get("failure"):
        click.echo(say("out.show_failure", value=_text(seen["failure"], full)))
    if stderr:  # a program target's, of the call: what it said about its answer
        text = stderr.decode("utf-8", errors="replace").rstrip("\n")
        click.echo(say("out.show_stderr", value=_text(text, full)))
    for score in scores:
        reason = f" — {_text(score['reason'], full)}" if score.get("reason") else ""
        value = "-" if score["value"] is None else score["value"]
        click.echo(
            say(
                "out.show_score",
                scorer=score["scorer_id"],
                status=score["status"],
                value=value,
                reason=reason,
            )
        )
    click.echo(say("out.show_digest", digest=bundle["digest"]))


def _as_recorded(data: bytes, media: str) -> Any:
    """The output as a scorer would read it; if its bytes are not what their media type
    says (a program that exited non-zero with empty or half-written stdout: a product
    failure, recorded as produced), the bytes as text: show prints what was recorded."""
    from assay.evidence import decode_output

    try:
        return decode_output(data, media)
    except ValueError:
        return data.decode("utf-8", errors="replace")


def _is_task_state(output: Any) -> bool:
    return isinstance(output, dict) and isinstance(output.get("messages"), list)


def _message_line(message: dict[str, Any], full: bool) -> str:
    """``role: content``, a tool call as ``role → function(arguments)``."""
    role = str(message.get("role", "?"))
    if message.get("tool_call_id"):
        role += f" ({message['tool_call_id']})"
    content = shown_content(message.get("content", ""))
    parts = [f"{role}: {_text(content, full)}"] if content else []
    for call in message.get("tool_calls") or []:
        arguments = _text(call.get("arguments"), full)
        parts.append(f"{role} → {_text(call.get('function'), full)}({arguments})")
    return "\n    ".join(parts) if parts else f"{role}:"


def _text(value: Any, full: bool) -> str:
    """*value* as one safe block: JSON for non-strings, control characters escaped,
    continuation lines indented under the label, cut at SHOWN_CHARS unless *full*."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    more = 0
    if not full and len(text) > SHOWN_CHARS:
        text, more = text[:SHOWN_CHARS], len(text) - SHOWN_CHARS
    text = "".join(_escaped(char) for char in text)
    if more:
        text += " " + say("out.show_cut", more=more)
    return text.replace("\n", "\n    ")


def _item(value: Any, full: bool) -> str:
    """One transcript item: like ``_text``, with its lines indented under the item."""
    return _text(value, full).replace("\n    ", "\n          ")


def _escaped(char: str) -> str:
    if char in _KEEP or (char.isprintable() and char != "\x7f"):
        return char
    return char.encode("unicode_escape").decode("ascii")
