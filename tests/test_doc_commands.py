"""Every shell command shown in README.md and docs/*.md runs, and exits as documented.

The code blocks of the docs are examples a reader copies: this runs each one, in a
fresh folder holding a copy of ``examples/``, so the docs cannot drift from the code.
A block is a shell block when its info string says so (``sh``, ``bash``, ``console``)
or, whatever it says, when its first word is a command (``assay``, ``pip``, ...).

A block that cannot run here says why in an HTML comment on the line before it, e.g.
``<!-- not run: needs an OpenAI key -->``; a synopsis with placeholders is such a block.
In a block that runs:
- ``pip install ...`` is not run again (CI ran it before the suite): each package it
  names must be installed.
- ``scripts/check.sh`` is the command running this test; tests/test_ci_setup.py checks
  that CI runs exactly the README's line.
- ``RUN`` stands for the run folder the block's last ``assay run`` made, ``ID`` for the
  id of that run's first planned trial.
"""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import read_jsonl

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_INFO = {"sh", "bash", "shell", "console"}
COMMANDS = {"assay", "pip", "export", "dask", "python", "scripts/check.sh"}
NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<reason>[^>]+?)\s*-->")

# The documented exit code of each command that does not exit 0 (docs/cli.md).
EXPECTED_EXIT = {
    # two releases: buggy-release fails the gate (README: "fails the gate")
    "assay run examples/shipping/eval.yaml": 1,
    "assay run examples/shipping/eval.yaml --output runs/shipping": 1,
    "assay gate runs/shipping": 1,
    # evidence.md, "Signatures": the same example, signed (its gate still fails)
    "assay run examples/shipping/eval.yaml --output runs/signed --sign ci-key": 1,
    "assay gate runs/signed --trust ci-key.pub": 1,
    # the README's RUN is the run just before, which completed: nothing to resume
    "assay resume RUN": 5,
}


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    lines: tuple[str, ...]
    skip_reason: str | None

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}"


def shell_blocks(doc: Path) -> list[Block]:
    """The shell code blocks of *doc*, with the reason given for not running one."""
    found = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    number = 0
    while number < len(lines):
        fence = lines[number].strip()
        if not fence.startswith("```"):
            number += 1
            continue
        end = next(i for i in range(number + 1, len(lines)) if lines[i].strip().startswith("```"))
        body = tuple(lines[number + 1 : end])
        first = next((line.split()[0] for line in body if line.strip()), "")
        if fence[3:].strip() in SHELL_INFO or first in COMMANDS:
            before = next((lines[i] for i in range(number - 1, -1, -1) if lines[i].strip()), "")
            reason = NOT_RUN.search(before)
            found.append(Block(doc, number + 1, body, reason["reason"] if reason else None))
        number = end + 1
    return found


def commands(block: Block) -> list[list[str]]:
    """The block's commands as argv lists: continuation lines joined, comments dropped,
    ``a && b`` split in two."""
    text = "\n".join(block.lines).replace("\\\n", " ")
    argvs: list[list[str]] = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        while words:
            head, words = _until(words, "&&")
            if head:
                argvs.append(head)
    return argvs


def _until(words: list[str], separator: str) -> tuple[list[str], list[str]]:
    """The words before the first *separator*, and those after it."""
    if separator in words:
        at = words.index(separator)
        return words[:at], words[at + 1 :]
    return words, []


BLOCKS = [block for doc in DOCS for block in shell_blocks(doc)]
RUNNABLE = [block for block in BLOCKS if block.skip_reason is None]


def _installed(requirement: str) -> None:
    """A ``pip install`` argument is installed (extras included)."""
    if requirement in {".", ".[test]"} or requirement.startswith(".["):
        name, extras = "assay", re.findall(r"\[(.*)\]", requirement)
    else:
        name, _, rest = requirement.partition("[")
        extras = [rest.rstrip("]")] if rest else []
    importlib.metadata.distribution(name)  # raises PackageNotFoundError, naming it
    for extra in ",".join(extras).split(","):
        if not extra:
            continue
        wanted = importlib.metadata.requires("assay") or []
        for dep in wanted:
            if f'extra == "{extra}"' in dep:
                dep_name = re.split(r"[\s<>=!\[;]", dep, maxsplit=1)[0]
                importlib.metadata.distribution(dep_name)


def _substitute(argv: list[str], workspace: Path, last_run: Path | None) -> list[str]:
    if last_run is None:
        return argv
    first_trial = read_jsonl(last_run / "plan.jsonl")[0]["trial_id"]
    names = {"RUN": str(last_run), "ID": str(first_trial)}
    return [names.get(word, word) for word in argv]


def _newest_run(workspace: Path, before: set[Path]) -> Path | None:
    made = [p.parent for p in workspace.rglob("manifest.json") if p.parent not in before]
    return max(made, key=lambda p: p.stat().st_mtime) if made else None


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.id for b in RUNNABLE])
def test_doc_command_block_runs(block: Block, tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    last_run: Path | None = None
    for argv in commands(block):
        shown = shlex.join(argv)
        if argv[:2] == ["pip", "install"]:
            for word in argv[2:]:
                if not word.startswith("-"):
                    _installed(word)
            continue
        if argv == ["scripts/check.sh"]:
            continue
        assert argv[0] == "assay", f"{block.id}: no way to run {shown!r} here"
        before = {p.parent for p in tmp_path.rglob("manifest.json")}
        done = subprocess.run(
            [sys.executable, "-m", "assay", *_substitute(argv[1:], tmp_path, last_run)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        expected = EXPECTED_EXIT.get(shown, 0)
        assert done.returncode == expected, (
            f"{block.id}: {shown!r} exited {done.returncode}, documented {expected}\n"
            f"{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
        assert "Traceback" not in done.stderr, done.stderr
        last_run = _newest_run(tmp_path, before) or last_run


def test_every_doc_has_its_commands_found() -> None:
    """The block finder sees the README's blocks (a parser that finds none checks none)."""
    readme = [b for b in BLOCKS if b.doc.name == "README.md"]
    assert len(readme) >= 4
    assert ["assay", "verify", "runs/shipping"] in [c for b in readme for c in commands(b)]


def test_blocks_not_run_say_why() -> None:
    skipped = [b for b in BLOCKS if b.skip_reason is not None]
    assert all(len(b.skip_reason or "") >= 10 for b in skipped), [b.id for b in skipped]
    assert len(skipped) < len(BLOCKS) / 2, "most shown commands must run"
