"""Corpus cases wrong in the files around the spec: paths, encodings, dataset content,
the spec file itself, and the bugs found (each a case)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.robustness._corpus_base import BASE, GOOD, Case, base_text, dump, setting


def paths(outside_name: str = "outside") -> Iterator[Case]:
    def link(name: str, to: str) -> Callable[[Path, Path], None]:
        def setup(folder: Path, outside: Path) -> None:
            target = outside / to if not to.startswith("@") else folder / to[1:]
            (folder / name).symlink_to(target)

        return setup

    def mkdir(name: str) -> Callable[[Path, Path], None]:
        return lambda folder, outside: (folder / name).mkdir()

    def fifo(name: str) -> Callable[[Path, Path], None]:
        return lambda folder, outside: os.mkfifo(folder / name)

    values: list[tuple[str, str, Callable[[Path, Path], None] | None]] = [
        ("absolute-etc", "/etc/passwd", None),
        ("absolute-outside", "/tmp/{outside}/data.jsonl", None),
        ("dotdot", f"../{outside_name}/data.jsonl", None),
        ("dotdot-inside-first", f"inner/../../{outside_name}/data.jsonl", None),
        ("dot-dotdot", f"./../{outside_name}/data.jsonl", None),
        ("dotdot-only", "..", None),
        ("dotdot-backslash", f"..\\{outside_name}\\data.jsonl", None),
        ("home", "~/data.jsonl", None),
        ("windows-drive", "C:\\data.jsonl", None),
        ("windows-drive-slash", "C:/data.jsonl", None),
        ("symlink-outside-file", "link.jsonl", link("link.jsonl", "data.jsonl")),
        ("symlink-outside-dir", "linkdir/data.jsonl", link("linkdir", "")),
        (
            "symlink-chain",
            "a.jsonl",
            lambda f, o: (link("b.jsonl", "data.jsonl")(f, o), link("a.jsonl", "@b.jsonl")(f, o)),
        ),
        (
            "symlink-etc",
            "passwd.jsonl",
            lambda f, o: (f / "passwd.jsonl").symlink_to("/etc/passwd"),
        ),
        ("directory", "sub", mkdir("sub")),
        ("directory-slash", "sub/", mkdir("sub")),
        ("fifo", "pipe.jsonl", fifo("pipe.jsonl")),
        ("missing", "nope.jsonl", None),
        ("empty", "", None),
        ("blank", "   ", None),
        ("dev-null", "/dev/null", None),
    ]
    for name, value, setup in values:
        shown = value.strip() or "''"
        if name in ("empty", "blank"):
            shown = "dataset"
        elif name == "absolute-outside":
            shown = "absolute path"
        yield Case(
            f"dataset-path-{name}",
            ("dataset", shown),
            spec=setting("dataset", value),
            setup=setup,
        )
    scripts: list[tuple[str, str, Callable[[Path, Path], None] | None]] = [
        ("absolute", "/bin/sh", None),
        ("dotdot", f"../{outside_name}/x.py", None),
        ("symlink-outside", "x.py", link("x.py", "x.py")),
        ("directory", "sub", mkdir("sub")),
        ("missing", "nope.py", None),
        ("home", "~/x.py", None),
    ]
    for name, value, setup in scripts:
        yield Case(
            f"script-path-{name}",
            ("targets[0].script", value),
            spec=setting("targets.0", {"id": "t", "script": value}),
            setup=setup,
        )


def encodings() -> Iterator[Case]:
    base = dump(BASE)
    yield Case("spec-bom", ("eval.yaml", "byte-order mark"), spec=b"\xef\xbb\xbf" + base)
    yield Case("spec-latin1", ("eval.yaml", "byte"), spec=base + b"description: caf\xe9\n")
    yield Case("spec-utf16", ("eval.yaml", "byte 0"), spec=base.decode().encode("utf-16"))
    yield Case("spec-bad-comment", ("eval.yaml", "byte"), spec=base + b"# \xff\xfe\n")
    yield Case("spec-truncated-utf8", ("eval.yaml", "byte"), spec=base + b"description: \xe5\x90")
    yield Case("data-bom", ("data.jsonl", "byte-order mark"), data=b"\xef\xbb\xbf" + GOOD)
    yield Case(
        "data-latin1-line2",
        ("data.jsonl:2",),
        data=GOOD.splitlines(keepends=True)[0]
        + b'{"id": "c", "input": "caf\xe9", "expected": 1}\n',
    )
    yield Case("data-utf16", ("data.jsonl",), data=GOOD.decode().encode("utf-16"))
    yield Case(
        "data-bad-continuation-line3",
        ("data.jsonl:3",),
        data=GOOD + b'{"id": "c", "input": "\xe5\x28", "expected": 1}\n',
    )


BAD_JSON = {
    "open-brace": b"{",
    "words": b"not json at all",
    "single-quotes": b"{'id': 'a', 'input': 1, 'expected': 1}",
    "trailing-comma": b'{"id": "z", "input": 1, "expected": 1,}',
    "missing-comma": b'{"id": "z" "input": 1, "expected": 1}',
    "unclosed-list": b'{"id": "z", "input": [1, 2, "expected": 1}',
    "nan": b'{"id": "z", "input": NaN, "expected": 1}',
    "infinity": b'{"id": "z", "input": Infinity, "expected": 1}',
    "two-objects": b'{"id": "z", "input": 1, "expected": 1} {"id": "y"}',
    "trailing-garbage": b'{"id": "z", "input": 1, "expected": 1} trailing',
    "lone-surrogate": b'{"id": "\\ud800", "input": 1, "expected": 1}',
}


def dataset_content() -> Iterator[Case]:
    lines = GOOD.splitlines(keepends=True)
    for name, bad in BAD_JSON.items():
        for line in (1, 2, 3):
            data = [*lines[: line - 1], bad + b"\n", *lines[line - 1 :]]
            yield Case(f"data-json-{name}-line{line}", (f"data.jsonl:{line}",), data=b"".join(data))
    records = {
        "array": b"[1, 2]",
        "number": b"1",
        "string": b'"sample"',
        "null": b"null",
        "bool": b"true",
        "no-id": b'{"input": 1, "expected": 1}',
        "no-input": b'{"id": "z", "expected": 1}',
        "no-expected": b'{"id": "z", "input": 1}',
        "id-list": b'{"id": [1], "input": 1, "expected": 1}',
        "id-object": b'{"id": {"a": 1}, "input": 1, "expected": 1}',
        "id-null": b'{"id": null, "input": 1, "expected": 1}',
        "id-bool": b'{"id": true, "input": 1, "expected": 1}',
        "id-float": b'{"id": 1.5, "input": 1, "expected": 1}',
        "unknown-field": b'{"id": "z", "input": 1, "expected": 1, "extra": 1}',
        "target-not-expected": b'{"id": "z", "input": 1, "target": 1}',
        "metadata-list": b'{"id": "z", "input": 1, "expected": 1, "metadata": [1]}',
        "metadata-text": b'{"id": "z", "input": 1, "expected": 1, "metadata": "x"}',
        "choices-text": b'{"id": "z", "input": 1, "expected": 1, "choices": "abc"}',
        "huge-integer": b'{"id": "z", "input": 1' + b"0" * 5000 + b', "expected": 1}',
    }
    for name, record in records.items():
        yield Case(f"data-record-{name}", ("data.jsonl:2",), data=lines[0] + record + b"\n")
    yield Case("data-duplicate-id", ("data.jsonl:3", "'a'"), data=GOOD + lines[0])
    yield Case(
        "data-duplicate-int-and-text-id",
        ("data.jsonl:2", "'1'"),
        data=b'{"id": 1, "input": 1, "expected": 1}\n{"id": "1", "input": 1, "expected": 1}\n',
    )
    yield Case(
        "data-duplicate-after-blank",
        ("data.jsonl:4",),
        data=lines[0] + b"\n\n" + lines[0],
    )
    for name, data in [("empty", b""), ("blank-lines", b"\n\n\n"), ("whitespace", b"  \n\t\n")]:
        yield Case(f"data-{name}", ("data.jsonl", "no samples"), data=data)
    yield Case(
        "data-10mb-line",
        ("data.jsonl:2",),
        data=lines[0] + b'{"id": "z", "input": "' + b"x" * 10_000_000 + b"\n",
    )


def spec_files() -> Iterator[Case]:
    yield Case("spec-file-missing", ("nope.yaml",), spec_name="nope.yaml")
    yield Case(
        "spec-file-directory",
        ("specdir",),
        spec_name="specdir",
        setup=lambda f, o: (f / "specdir").mkdir(),
    )
    yield Case(
        "spec-file-fifo",
        ("pipe.yaml",),
        spec_name="pipe.yaml",
        setup=lambda f, o: os.mkfifo(f / "pipe.yaml"),
    )
    yield Case(
        "spec-file-dangling-symlink",
        ("dangling.yaml",),
        spec_name="dangling.yaml",
        setup=lambda f, o: (f / "dangling.yaml").symlink_to(f / "gone.yaml"),
    )


def known_bugs() -> Iterator[Case]:
    """Malformed input that assay does not answer with one config-error line today."""
    deep = b'{"id": "z", "input": ' + b"[" * 100_000 + b"]" * 100_000 + b', "expected": 1}\n'
    yield Case(
        "bug-data-deeply-nested",
        ("data.jsonl:1",),
        data=deep,
        bug="BUG: a deeply nested dataset line raises RecursionError in msgspec "
        "(dataset/_jsonl.py catches only ValidationError/DecodeError): exit 70",
    )
    yield Case(
        "bug-dataset-path-nul",
        ("dataset",),
        spec=base_text(replace=("dataset: data.jsonl", 'dataset: "data\\0.jsonl"')),
        bug="BUG: a NUL byte in a spec path raises ValueError in spec/_paths.py "
        "resolve_inside (exit 70)",
    )
    yield Case(
        "bug-script-path-nul",
        ("targets[0].script",),
        spec=setting("targets.0", {"id": "t", "script": "a\0.py"}),
        bug="BUG: a NUL byte in a script path raises ValueError in resolve_inside (exit 70)",
    )
    yield Case(
        "bug-argv-nul",
        ("targets[0]", "argv"),
        spec=setting("targets.0", {"id": "t", "argv": ["prog\0x"]}),
        bug="BUG: a NUL byte in argv is accepted by the loader and then raises ValueError "
        "when the program is started (exit 70); refuse it in spec/_targets.py",
    )
    yield Case(
        "bug-dataset-symlink-loop",
        ("dataset", "loop.jsonl"),
        spec=setting("dataset", "loop.jsonl"),
        setup=lambda f, o: (
            (f / "loop.jsonl").symlink_to(f / "loop2.jsonl"),
            (f / "loop2.jsonl").symlink_to(f / "loop.jsonl"),
        ),
        bug="BUG: a symlink loop makes Path.resolve raise RuntimeError in resolve_inside (exit 70)",
    )
    for name, text in [("question-mark", "? [a, b]\n: 1\n"), ("flow", "{[a]: 1}\n")]:
        yield Case(
            f"bug-yaml-complex-key-{name}",
            ("eval.yaml:1:", "mapping key", "list"),
            spec=text.encode(),
            bug="BUG: a YAML mapping with a list as key raises TypeError (unhashable) in the "
            "duplicate-key check of spec/_load.py _strict_loader (exit 70)",
        )
    for tag, value in [("int", "abc"), ("float", "abc"), ("timestamp", "nope")]:
        yield Case(
            f"bug-yaml-bad-{tag}",
            ("eval.yaml:1:", repr(value), f"!!{tag}", "'evaluation'"),
            spec=f"evaluation: !!{tag} {value}\n".encode(),
            bug=f"BUG: '!!{tag} {value}' makes PyYAML's constructor raise a non-YAMLError "
            "(ValueError/AttributeError) that spec/_load.py _parse does not catch (exit 70)",
        )
    yield Case(
        "bug-repetitions-huge",
        ("eval.yaml", "repetitions"),
        spec=setting("repetitions", 10**30),
        bug="BUG: repetitions has no upper bound; 10**30 raises OverflowError when planned "
        "(exit 70)",
    )
    yield Case(
        "bug-repetitions-100000-digits",
        ("eval.yaml:", "100,000 digits", "'repetitions'"),
        spec=base_text("repetitions: " + "9" * 100_000 + "\n"),
        bug="BUG: an integer of 100,000 digits hits Python's int-string limit (ValueError "
        "from the YAML constructor, exit 70)",
    )
    yield Case(
        "bug-timeout-nan",
        ("eval.yaml", "targets[0]", "timeout"),
        spec=setting("targets.0.timeout", float("nan")),
        bug="BUG: timeout .nan passes the 'must be positive' check (NaN <= 0 is False) and "
        "the run goes ahead",
    )
    yield Case(
        "bug-duplicate-id-5mb",
        ("data.jsonl:2",),
        data=(b'{"id": "' + b"a" * 5_000_000 + b'", "input": 1, "expected": 1}\n') * 2,
        bug="BUG: the duplicate-id message repeats the whole id: a 5 MB stderr 'line' "
        "(bound the quoted value, e.g. 80 characters)",
    )
    for code in (0, 3):
        yield Case(
            f"bug-callable-module-exits-{code}",
            ("'t'", f"exits{code}:f"),
            spec=setting("targets.0.callable", f"exits{code}:f"),
            bug=f"BUG: a target module calling sys.exit({code}) at import ends assay with "
            f"exit {code} and no message (load_callable catches Exception, not SystemExit) - "
            "exit 0 claims a passed gate",
        )
