"""Bad input: a generated corpus of malformed specs and datasets.

Every case of the corpus (built by ``_corpus_spec.py`` and ``_corpus_files.py``, not
checked in) is a spec folder that is wrong in
one way: invalid YAML or JSON, wrong types, missing or unknown fields, values out of
range, duplicate ids, an empty dataset, a 10 MB line, a byte-order mark, bytes that are
not UTF-8, ``..`` and absolute paths, symlinks leaving the folder, a dataset that is a
directory or a FIFO, callables that do not load... The contract, for each one:

- exit code 2 (configuration error: nothing was run);
- exactly one stderr line, ``assay: <what and where> — <how to fix>``, that names the
  file and the line or field at fault, and no traceback;
- no run folder created, nothing written anywhere (the spec folder, the current folder).

The corpus runs in-process through ``assay.cli.main`` (fast); one case in ten runs again
through a real ``python -m assay`` to show the two agree. Cases assay gets wrong today are
strict xfails naming the bug. ``test_fuzz_spec.py`` and ``test_fuzz_evidence.py`` go on
from here with Hypothesis: random specs, and corrupted run folders.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from assay.cli import main
from tests.helpers import run_cli
from tests.robustness._corpus_base import (
    ANSWERS,
    BASE,
    EXIT_CONFIG,
    GOOD,
    MAX_LINE,
    MODULES,
    Case,
    dump,
)
from tests.robustness._corpus_files import dataset_content, encodings, known_bugs, paths, spec_files
from tests.robustness._corpus_spec import (
    callables,
    missing_fields,
    not_a_mapping,
    out_of_range,
    unknown_fields,
    wrong_types,
    yaml_syntax,
)


def corpus() -> list[Case]:
    cases = [
        *yaml_syntax(),
        *not_a_mapping(),
        *missing_fields(),
        *unknown_fields(),
        *wrong_types(),
        *out_of_range(),
        *callables(),
        *paths(),
        *encodings(),
        *dataset_content(),
        *spec_files(),
    ]
    ids = [case.id for case in cases]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    return cases


CORPUS = corpus()
BUGS = list(known_bugs())
# Bugs fixed since they were found; their cases now guard the fix.
FIXED = {
    "bug-data-deeply-nested",
    "bug-dataset-path-nul",
    "bug-script-path-nul",
    "bug-dataset-symlink-loop",
    "bug-repetitions-huge",
    "bug-timeout-nan",
    "bug-callable-module-exits-0",
    "bug-callable-module-exits-3",
    "bug-argv-nul",
    "bug-duplicate-id-5mb",
    "bug-yaml-complex-key-question-mark",
    "bug-yaml-complex-key-flow",
    "bug-yaml-bad-int",
    "bug-yaml-bad-float",
    "bug-yaml-bad-timestamp",
    "bug-repetitions-100000-digits",
}


def test_the_corpus_has_at_least_200_cases() -> None:
    assert len(CORPUS) >= 200, len(CORPUS)


# --------------------------------------------------------------------------- running it


def build(case: Case, root: Path) -> tuple[Path, Path]:
    """Write the case's spec folder under *root*; return (spec path, output folder)."""
    folder, outside = root / "case", root / "outside"
    folder.mkdir()
    outside.mkdir()
    (outside / "data.jsonl").write_bytes(GOOD)
    (outside / "x.py").write_text("print('{}')\n")
    (folder / "answers.py").write_text(ANSWERS)
    for name, source in MODULES.items():
        (folder / name).write_text(source)
    (folder / "inner").mkdir()
    spec = case.spec if case.spec is not None else dump(BASE)
    spec = spec.replace(b"/tmp/{outside}", str(outside).encode())
    if case.spec_name == "eval.yaml":
        (folder / "eval.yaml").write_bytes(spec)
    if case.data is not None:
        (folder / "data.jsonl").write_bytes(case.data)
    if case.setup is not None:
        case.setup(folder, outside)
    return folder / case.spec_name, root / "out" / "run"


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under *root*: kind and content digest (FIFOs and links by kind only)."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = "link:" + os.readlink(path)
        elif path.is_dir():
            found[rel] = "dir"
        elif path.is_fifo():
            found[rel] = "fifo"
        else:
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def assert_one_config_line(code: int, stderr: str, case: Case) -> None:
    assert code == EXIT_CONFIG, (case.id, code, stderr[:500])
    assert "Traceback" not in stderr, stderr[:2000]
    lines = stderr.splitlines()
    assert len(lines) == 1, (case.id, stderr[:2000])
    (line,) = lines
    assert line.startswith("assay: "), line[:500]
    assert len(line) <= MAX_LINE, (case.id, len(line), line[:300])
    message, dash, hint = line.partition(" — ")
    assert dash and hint.strip(), (case.id, line)  # says how to fix it
    for needle in case.needles:
        assert needle in message, (case.id, needle, line)


def run_in_process(
    case: Case, root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, out = build(case, root)
    cwd = root / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = snapshot(root)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(["run", str(spec), "-o", str(out)])
    code = exited.value.code if isinstance(exited.value.code, int) else 0
    stderr = capsys.readouterr().err
    assert snapshot(root) == before, case.id  # nothing written, anywhere under root
    assert not out.parent.exists(), case.id  # no run folder
    assert not list(cwd.iterdir())
    assert_one_config_line(code, stderr, case)


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_bad_input_is_one_config_error_line(
    case: Case,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_in_process(case, tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            c, marks=[] if c.id in FIXED else [pytest.mark.xfail(strict=True, reason=c.bug)]
        )
        for c in BUGS
    ],
    ids=[c.id for c in BUGS],
)
def test_known_bad_input_bugs(case: Case, tmp_path: Path) -> None:
    # Through a real process: some of these end the interpreter (sys.exit at import).
    spec, out = build(case, tmp_path)
    before = snapshot(tmp_path)
    proc = run_cli("run", spec, "-o", out, cwd=tmp_path, timeout=60)
    assert snapshot(tmp_path) == before
    assert not out.parent.exists()
    assert_one_config_line(proc.returncode, proc.stderr, case)


def test_the_real_command_agrees_on_a_tenth_of_the_corpus(tmp_path: Path) -> None:
    sample = CORPUS[::10]

    def one(numbered: tuple[int, Case]) -> tuple[Case, subprocess.CompletedProcess[str]]:
        number, case = numbered
        root = tmp_path / str(number)
        root.mkdir()
        spec, out = build(case, root)
        cwd = root / "cwd"
        cwd.mkdir()
        proc = subprocess.run(
            [sys.executable, "-m", "assay", "run", str(spec), "-o", str(out)],
            capture_output=True,
            text=True,
            cwd=cwd,
            env={**os.environ, "LANG": "C.UTF-8"},
            timeout=60,
            check=False,
        )
        assert not out.parent.exists() and not list(cwd.iterdir()), case.id
        return case, proc

    with ThreadPoolExecutor(max_workers=2) as pool:
        for case, proc in pool.map(one, enumerate(sample)):
            assert_one_config_line(proc.returncode, proc.stderr, case)
    assert len(sample) >= 20
