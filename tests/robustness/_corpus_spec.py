"""Corpus cases wrong inside the spec: YAML syntax, shape, fields, types, ranges,
callables."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from tests.robustness._corpus_base import BASE, Case, base_text, dump, setting, without


def yaml_syntax() -> Iterator[Case]:
    texts = {
        "unclosed-flow": "evaluation: [unclosed\n",
        "unclosed-single-quote": "evaluation: 'unclosed\n",
        "unclosed-double-quote": 'evaluation: "unclosed\n',
        "bad-indent": "evaluation: x\ntargets:\n  - id: t\n callable: a:b\n",
        "tab-indent": "evaluation: x\ntargets:\n\t- id: t\n",
        "map-then-list": "evaluation: x\n- y\n",
        "list-then-map": "- a\nb: c\n",
        "unclosed-map": "evaluation: {a: 1\n",
        "value-value": "key: value: other\n",
        "undefined-alias": "evaluation: *undefined\n",
        "python-apply": "evaluation: !!python/object/apply:os.system ['true']\n",
        "python-name": "evaluation: !!python/name:os.system\n",
        "unknown-tag": "evaluation: !custom x\n",
        "yaml-version": "%YAML 9.9\n---\na: 1\n",
        "two-documents": "a: 1\n---\nb: 2\n",
        "nul-character": "evaluation: x\x00\n",
        "reserved-at": "evaluation: @x\n",
        "reserved-backtick": "evaluation: `x`\n",
        "unclosed-list": "[a, b\n",
        "recursive-map": "a: &x {b: *x}\n",
        "binary-garbage": "evaluation: !!binary '%%%'\n",
        "control-character": "evaluation: \x07bell\n",
    }
    for name, text in texts.items():
        needles = ("eval.yaml",) if name in ("binary-garbage",) else ("eval.yaml", "line")
        if name in ("nul-character", "control-character"):
            needles = ("eval.yaml", "position")
        yield Case(f"yaml-{name}", needles, spec=text.encode())
    base = dump(BASE).decode()
    yield Case(
        "yaml-duplicate-top-key",
        ("eval.yaml", "evaluation", "line"),
        spec=(base + "evaluation: again\n").encode(),
    )
    yield Case(
        "yaml-duplicate-nested-key",
        ("eval.yaml", "callable", "line"),
        spec=base.replace(
            "callable: answers:echo", "callable: answers:echo\n  callable: x"
        ).encode(),
    )
    yield Case(
        "yaml-duplicate-scorer-key",
        ("eval.yaml", "type", "line"),
        spec=base.replace("type: exact", "type: exact\n  type: regex").encode(),
    )
    yield Case(
        "yaml-10mb-key",
        ("eval.yaml", "line"),
        spec=b"x" * 10_000_000 + b": 1: 2\n",
    )


def not_a_mapping() -> Iterator[Case]:
    texts = {
        "empty": "",
        "comment-only": "# nothing here\n",
        "list": "- a\n- b\n",
        "empty-list": "[]\n",
        "number": "42\n",
        "null": "null\n",
        "tilde": "~\n",
        "text": "'just text'\n",
        "bool": "true\n",
        "set": "!!set {a, b}\n",
        "document-end": "---\n...\n",
    }
    for name, text in texts.items():
        yield Case(f"not-mapping-{name}", ("eval.yaml", "mapping"), spec=text.encode())


def missing_fields() -> Iterator[Case]:
    for field in ("evaluation", "dataset", "targets", "scorers"):
        yield Case(f"missing-{field}", ("eval.yaml", field), spec=without(field))
    yield Case("missing-target-id", ("eval.yaml", "targets[0]", "id"), spec=without("targets.0.id"))
    yield Case(
        "missing-scorer-type", ("eval.yaml", "scorers[0]", "type"), spec=without("scorers.0.type")
    )


def unknown_fields() -> Iterator[Case]:
    top = [
        "scorer",
        "target",
        "repetition",
        "gates",
        "Evaluation",
        "datasets",
        "retries",
        "timeout",
    ]
    for name in top:
        yield Case(f"unknown-top-{name}", ("eval.yaml", name), spec=setting(name, 1))
    nested = {
        "targets.0.timout": "targets[0]",
        "targets.0.arg": "targets[0]",
        "targets.0.cmd": "targets[0]",
        "targets.0.env": "targets[0]",
        "targets.0.callabel": "targets[0]",
        "scorers.0.feild": "scorers[0]",
        "scorers.0.name": "scorers[0]",
        "scorers.0.patern": "scorers[0]",
    }
    for path, where in nested.items():
        name = path.rsplit(".", 1)[1]
        yield Case(f"unknown-{where}-{name}", ("eval.yaml", where, name), spec=setting(path, 1))
    for section, name in [
        ("gate", "minimun"),
        ("gate", "target"),
        ("gate", "scorers"),
        ("retry", "max_attempt"),
        ("retry", "backoff"),
    ]:
        spec = copy.deepcopy(BASE)
        spec[section] = {name: 1}
        yield Case(f"unknown-{section}-{name}", ("eval.yaml", section, name), spec=dump(spec))


WRONG_TYPES: dict[str, list[Any]] = {
    "evaluation": [123, ["a"], {"a": 1}, None, True, 1.5],
    "dataset": [5, ["a"], None, {"a": "b"}, True],
    "targets": ["x", {}, 5, None, [1], [None], ["t"], [[]]],
    "scorers": ["exact", {}, [1], [None], ["exact"]],
    "repetitions": ["two", 1.5, True, [1], None],
    "targets.0.timeout": ["fast", [1], True, None],
    "targets.0.max_output_bytes": ["big", 1.5, True],
    "targets.0.args": ["x", [1], {"a": 1}],
    "targets.0.callable": [5, ["a"]],
    "targets.0.id": [5, None, ["a"]],
    "scorers.0.type": [5, "unknown", None],
    "scorers.0.ignore_case": ["yes", 1],
    "gate": ["strict", [1], 5],
    "gate.minimum": ["high", [1], True],
    "gate.targets": [["t"], "t", {"t": "high"}],
    "gate.scorer": [5, ["a"]],
    "retry": [3, "x"],
    "retry.max_attempts": ["3", 2.5, True],
    "retry.initial_backoff": ["x", [1]],
    "hidden_fields": ["customer", [1], {"a": 1}],
    "description": [[1], {"a": "b"}, 5],
}


def _where(path: str) -> str:
    """``targets.0.timeout`` -> ``targets[0].timeout`` (how messages name a field)."""
    out = ""
    for part in path.split("."):
        out += f"[{part}]" if part.isdigit() else (f".{part}" if out else part)
    return out


def wrong_types() -> Iterator[Case]:
    for path, values in WRONG_TYPES.items():
        for number, value in enumerate(values):
            if path.startswith(("gate.", "retry.")):
                spec = copy.deepcopy(BASE)
                section, key = path.split(".")
                spec[section] = {key: value}
                data = dump(spec)
            else:
                data = setting(path, value)
            yield Case(f"type-{path}-{number}", ("eval.yaml", _where(path)), spec=data)
    yield Case(
        "type-description-date",
        ("eval.yaml", "description"),
        spec=base_text("description: 2020-01-01\n"),
    )


def out_of_range() -> Iterator[Case]:
    def case(name: str, needle: str, spec: bytes) -> Case:
        return Case(f"range-{name}", ("eval.yaml", needle), spec=spec)

    for value in (0, -1):
        yield case(f"repetitions{value}", "repetitions", setting("repetitions", value))
    for value in (0, -1):
        yield case(f"timeout{value}", "targets[0]", setting("targets.0.timeout", value))
    for value in (0, -5):
        yield case(f"max-output{value}", "targets[0]", setting("targets.0.max_output_bytes", value))
    for value in (1.5, -0.1):
        yield case(f"gate-minimum{value}", "gate.minimum", setting("gate", {"minimum": value}))
    yield case("gate-targets-unknown", "gate.targets", setting("gate", {"targets": {"no": 0.5}}))
    yield case("gate-targets-range", "gate.t", setting("gate", {"targets": {"t": 2}}))
    yield case("gate-scorer-unknown", "gate.scorer", setting("gate", {"scorer": "nope"}))
    for name, value in [("max_attempts", 0), ("max_attempts", -1)]:
        yield case(f"retry-{name}{value}", "retry", setting("retry", {name: value}))
    for name in ("initial_backoff", "max_backoff"):
        yield case(f"retry-{name}", "retry", setting("retry", {name: -1}))
    for name in ("id", "input", "expected", "metadata"):
        yield case(f"hidden-{name}", "hidden_fields", setting("hidden_fields", [name]))
    for number, value in enumerate(["", "has space", "a/b", "../x", "x" * 200, "-lead", "名字"]):
        yield case(f"evaluation-id-{number}", "evaluation", setting("evaluation", value))
    for number, value in enumerate(["", "a b", "../t", "x" * 200, "t/1"]):
        yield case(f"target-id-{number}", "targets", setting("targets.0.id", value))
    twice = copy.deepcopy(BASE)
    twice["targets"].append(dict(twice["targets"][0]))
    yield case("target-id-twice", "targets", dump(twice))
    twice = copy.deepcopy(BASE)
    twice["scorers"].append({"id": "exact", "type": "includes"})
    yield case("scorer-id-twice", "scorers", dump(twice))
    yield case("no-targets", "targets", setting("targets", []))
    yield case("no-scorers", "scorers", setting("scorers", []))
    kinds = [
        ("no-kind", {"id": "t"}),
        ("script-and-callable", {"id": "t", "script": "x.py", "callable": "answers:echo"}),
        ("argv-and-callable", {"id": "t", "argv": ["x"], "callable": "answers:echo"}),
        ("empty-argv", {"id": "t", "argv": []}),
    ]
    for name, target in kinds:
        yield case(f"target-{name}", "targets[0]", setting("targets", [target]))
    yield case("field-match-no-field", "scorers[0]", setting("scorers.0.type", "field_match"))
    yield case("regex-no-pattern", "scorers[0]", setting("scorers.0.type", "regex"))
    for number, pattern in enumerate(["(", "[a-", "*", "(?P<x"]):
        spec = copy.deepcopy(BASE)
        spec["scorers"] = [{"type": "regex", "pattern": pattern}]
        yield case(f"regex-invalid-{number}", "scorers[0].pattern", dump(spec))


def callables() -> Iterator[Case]:
    refs = {
        "no-colon": "answers",
        "no-module": ":echo",
        "no-function": "answers:",
        "missing-module": "no_such_module_here:f",
        "missing-function": "answers:missing",
        "not-callable": "answers:NOT_CALLABLE",
        "missing-attribute": "answers:echo.missing",
        "syntax-error": "syntax_error:f",
        "import-error": "raises:f",
        "value-error-at-import": "raises_value:f",
    }
    for name, ref in refs.items():
        yield Case(f"callable-{name}", ("'t'", ref), spec=setting("targets.0.callable", ref))
