"""A trial's spans and subtasks (``assay.util.span`` / ``subtask``), for ``assay show
--trial``: one line per span, indented as they nest, with a subtask's arguments and what
it returned (or the error it raised)."""

from __future__ import annotations

from typing import Any

from assay.cli._transcript import INDENT, Text


def span_lines(events: list[dict[str, Any]], text: Text) -> list[str]:
    """The spans among *events*, outermost first, each under the one it is in."""
    depth: dict[Any, int] = {}
    ends = {
        (e.get("data") or {}).get("id"): e.get("data") or {}
        for e in events
        if e.get("type") == "span_end"
    }
    lines: list[str] = []
    for event in events:
        if event.get("type") != "span_begin":
            continue
        data = event.get("data") or {}
        level = depth[event.get("n")] = depth.get(event.get("parent"), 0) + 1
        lines.append(INDENT * level + _line(data, ends.get(data.get("id"), {}), text))
    return lines


def _line(begin: dict[str, Any], end: dict[str, Any], text: Text) -> str:
    kind = begin.get("type")
    head = f"{text(kind)} {text(begin.get('name'))}" if kind else f"span {text(begin.get('name'))}"
    if "input" in begin:
        head += f"({text(begin['input'])})"
    if "error" in end:
        return f"{head}: error {text(end['error'])}"
    if "result" in end:
        return f"{head} → {text(end['result'])}"
    return head
