"""``assay run --cache`` and ``assay cache list / clear / prune``, as real subprocesses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.errors import EXIT_CONFIG, EXIT_PASSED, EXIT_RUN
from tests.helpers import can_mount, error_line, mount, quiz_tasks, run_cli, umount, write_module

TASKS = quiz_tasks(3)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    write_module(tmp_path, "tasks", TASKS)
    return tmp_path, {"ASSAY_CACHE_DIR": str(tmp_path / "cache")}


def run_quiz(folder: Path, env: dict[str, str], model: str, *extra: str) -> str:
    proc = run_cli(
        "run",
        "tasks.py@quiz",
        "-m",
        model,
        "-M",
        "default_output=four",
        "--cache",
        *extra,
        cwd=folder,
        env=env,
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    return proc.stdout


def run_dir(stdout: str) -> Path:
    match = re.search(r"evidence and reports: (\S+)", stdout)
    assert match is not None, stdout
    return Path(match[1])


@pytest.mark.doc(
    "docs/cli.md",
    "`--cache` (Python tasks) — answer model calls from the response cache and fill it; "
    "`--cache-expiry` (default `7d`; `30m`, `12h`, `2w`, seconds, `never`) is how long new "
    "entries stay fresh.",
)
def test_a_cached_run_says_so_and_its_evidence_verifies_and_rescores(
    setup: tuple[Path, dict[str, str]],
) -> None:
    folder, env = setup
    first = run_quiz(folder, env, "mock/a")
    assert "3 calls (0 cached)" in first
    second = run_quiz(folder, env, "mock/a")
    assert "3 calls (3 cached)" in second
    path = folder / run_dir(second)
    for command in ("verify", "score"):
        proc = run_cli(command, path, cwd=folder, env=env)
        assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    report = json.loads((path / "report.json").read_text())
    assert report["usage"]["mock/a"]["cached_calls"] == 3


@pytest.mark.doc(
    "docs/cli.md",
    "the response cache's entries: model, age, expiry, size, key",
    "remove every cache entry, or those of matching models",
    "remove expired (and unreadable) cache entries",
)
def test_list_filter_clear_and_prune(setup: tuple[Path, dict[str, str]]) -> None:
    folder, env = setup
    run_quiz(folder, env, "mock/a")
    run_quiz(folder, env, "mock/b", "--cache-expiry", "12h")

    listed = run_cli("cache", "list", cwd=folder, env=env)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    keys = {p.stem for p in (folder / "cache").glob("??/*.json")}
    entry = re.compile(r"(mock/[ab])  age \d+[smhd]  expires (7d|12h)  \d+ bytes  ([0-9a-f]{64})")
    shown = [entry.fullmatch(line) for line in lines[:-1]]
    assert all(shown), lines  # model, age, expiry, size and key, on every line
    assert {m[3] for m in shown if m} == keys and len(keys) == 6
    assert sum(line.startswith("mock/a ") for line in lines) == 3
    assert sum(line.startswith("mock/b ") for line in lines) == 3
    assert any("expires 7d" in line for line in lines if line.startswith("mock/a"))
    assert all("expires 12h" in line for line in lines if line.startswith("mock/b"))
    assert lines[-1].startswith("6 entries")

    only_b = run_cli("cache", "list", "--model", "mock/b", cwd=folder, env=env)
    assert only_b.stdout.splitlines()[-1].startswith("3 entries")

    # expire the entries of mock/b by hand, then prune removes exactly those
    for entry in (folder / "cache").glob("??/*.json"):
        data = json.loads(entry.read_bytes())
        if data["model"] == "mock/b":
            data["expires"] = 1.0
            entry.write_text(json.dumps(data))
    unreadable = folder / "cache" / "ff" / ("f" * 64 + ".json")
    unreadable.parent.mkdir(exist_ok=True)
    unreadable.write_bytes(b"{torn")
    pruned = run_cli("cache", "prune", cwd=folder, env=env)
    assert pruned.returncode == 0 and "removed 4 entries" in pruned.stdout
    assert not unreadable.exists()

    cleared = run_cli("cache", "clear", "--model", "mock/*", cwd=folder, env=env)
    assert cleared.returncode == 0 and "removed 3 entries" in cleared.stdout
    empty = run_cli("cache", "list", cwd=folder, env=env)
    assert empty.stdout.startswith("0 entries")


@pytest.mark.doc(
    "docs/cli.md",
    "remove every cache entry, or those of matching models",
)
def test_clear_everything_and_an_explicit_folder(setup: tuple[Path, dict[str, str]]) -> None:
    folder, env = setup
    run_quiz(folder, env, "mock/a")
    proc = run_cli("cache", "clear", "--dir", folder / "cache", cwd=folder)
    assert proc.returncode == 0 and "removed 3 entries" in proc.stdout


def test_bad_options_are_one_line_and_exit_2(setup: tuple[Path, dict[str, str]]) -> None:
    folder, env = setup
    proc = run_cli(
        "run",
        "tasks.py@quiz",
        "-m",
        "mock/a",
        "--cache",
        "--cache-expiry",
        "soon",
        cwd=folder,
        env=env,
    )
    assert proc.returncode == EXIT_CONFIG
    assert "cache expiry 'soon'" in error_line(proc)

    prices = folder / "prices.yaml"
    prices.write_text("mock/a: [1, 2]\n")
    proc = run_cli("run", "tasks.py@quiz", "-m", "mock/a", "--prices", prices, cwd=folder, env=env)
    assert proc.returncode == EXIT_CONFIG
    assert "price file" in error_line(proc)


@pytest.mark.doc(
    "docs/cli.md",
    "`--cache` on a YAML run (`run` or `resume`) is refused, exit 2.",
)
def test_cache_with_a_yaml_spec_is_refused(tmp_path: Path) -> None:
    from tests.helpers import simple_spec

    proc = run_cli("run", simple_spec(tmp_path / "suite"), "--cache", "-o", tmp_path / "out")
    assert proc.returncode == EXIT_CONFIG
    assert "Python tasks" in error_line(proc)
    assert not (tmp_path / "out").exists()


@pytest.mark.doc(
    "docs/cli.md",
    "`--prices FILE` (Python tasks; default `$ASSAY_PRICES`; on `run` and `resume`, one option "
    "definition) — a YAML/JSON price table, USD per million tokens by `provider/name`, over "
    "`set_price` and the built-in table.",
)
def test_prices_from_a_file_reach_the_closing_line(setup: tuple[Path, dict[str, str]]) -> None:
    folder, env = setup
    prices = folder / "prices.yaml"
    prices.write_text("mock/a: {input: 1000000, output: 1000000}\n")
    proc = run_cli(
        "run",
        "tasks.py@quiz",
        "-m",
        "mock/a",
        "-M",
        "default_output=four",
        "--prices",
        prices,
        cwd=folder,
        env=env,
    )
    assert proc.returncode == EXIT_PASSED, proc.stderr
    # three calls of two input words and one output word, at $1 a token
    assert "3 calls (0 cached), 6 input + 3 output tokens, cost $9.0000" in proc.stdout
    proc = run_cli(
        "run",
        "tasks.py@quiz",
        "-m",
        "mock/a",
        "-M",
        "default_output=four",
        cwd=folder,
        env={**env, "ASSAY_PRICES": str(prices)},
    )
    assert "cost $9.0000" in proc.stdout


# -- which folder, and the exit codes ----------------------------------------------------

CACHE_VARIABLES = ("ASSAY_CACHE_DIR", "XDG_CACHE_HOME", "HOME")


def run_clean(
    *args: str | Path, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """``assay ARGS`` with none of the cache folder's variables but those in *env*."""
    base = {k: v for k, v in os.environ.items() if k not in CACHE_VARIABLES}
    return subprocess.run(
        [sys.executable, "-m", "assay", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**base, "LANG": "C.UTF-8", "HOME": str(cwd / "home"), **env},
        timeout=120,
        check=False,
    )


def summary_of(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    return proc.stdout.splitlines()[-1]


@pytest.mark.doc(
    "docs/cli.md",
    "`cache list / clear / prune` read `$ASSAY_CACHE_DIR` (else "
    "`$XDG_CACHE_HOME/assay/responses`, else `~/.cache/assay/responses`) unless given `--dir`",
)
def test_the_folder_read_is_the_variable_then_xdg_then_home_unless_dir(tmp_path: Path) -> None:
    write_module(tmp_path, "tasks", TASKS)
    xdg = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    run = run_clean(
        "run", "tasks.py@quiz", "-m", "mock/a", "-M", "default_output=four", "--cache",
        cwd=tmp_path, env=xdg,
    )  # fmt: skip
    assert run.returncode == EXIT_PASSED, run.stderr
    in_xdg = tmp_path / "xdg" / "assay" / "responses"
    assert len(list(in_xdg.glob("??/*.json"))) == 3  # the run filled the XDG folder

    listed = summary_of(run_clean("cache", "list", cwd=tmp_path, env=xdg))
    assert listed.startswith("3 entries") and listed.endswith(f" in {in_xdg}")
    home = summary_of(run_clean("cache", "list", cwd=tmp_path, env={}))
    assert home.startswith("0 entries")
    assert home.endswith(f" in {tmp_path / 'home' / '.cache' / 'assay' / 'responses'}")
    variable = {**xdg, "ASSAY_CACHE_DIR": str(tmp_path / "own")}
    own = summary_of(run_clean("cache", "list", cwd=tmp_path, env=variable))
    assert own == f"0 entries, 0 bytes in {tmp_path / 'own'}"
    given = run_clean("cache", "list", "--dir", in_xdg, cwd=tmp_path, env=variable)
    assert summary_of(given).startswith("3 entries")
    for command in ("clear", "prune"):  # they read the same folder
        done = run_clean("cache", command, cwd=tmp_path, env=variable)
        assert summary_of(done) == f"removed 0 entries from {tmp_path / 'own'}"
    assert len(list(in_xdg.glob("??/*.json"))) == 3


COMMANDS = [["list"], ["clear"], ["clear", "--model", "mock/*"], ["prune"]]


@pytest.mark.doc("docs/cli.md", "they exit 0 when done (also with nothing to do)")
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("state", ["missing", "empty"])
def test_nothing_to_do_is_exit_0(tmp_path: Path, command: list[str], state: str) -> None:
    folder = tmp_path / "cache"
    if state == "empty":
        folder.mkdir()
    proc = run_cli("cache", *command, "--dir", folder)
    assert proc.returncode == EXIT_PASSED, proc.stderr
    expected = "0 entries, 0 bytes in" if command == ["list"] else "removed 0 entries from"
    assert proc.stdout == f"{expected} {folder}\n" and proc.stderr == ""


@pytest.mark.doc("docs/cli.md", "2 on a bad option")
@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["list", "--colour"], "--colour"),
        (["clear", "--dir"], "--dir"),
        (["prune", "--model", "mock/*"], "--model"),
        (["sweep"], "sweep"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_a_bad_option_is_exit_2_and_changes_nothing(
    setup: tuple[Path, dict[str, str]], args: list[str], named: str
) -> None:
    folder, env = setup
    run_quiz(folder, env, "mock/a")
    proc = run_cli("cache", *args, cwd=folder, env=env)
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("Error: ") and f"'{named}'" in last, proc.stderr  # names it
    assert len(list((folder / "cache").glob("??/*.json"))) == 3


@pytest.mark.doc("docs/cli.md", "5 when the folder cannot be read or changed")
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("where", ["a-file", "under-a-file"])
def test_a_folder_that_cannot_be_read_is_exit_5(
    tmp_path: Path, command: list[str], where: str
) -> None:
    """Root reads any folder, so the folder cannot be one: a file stands where it (or
    its parent) should be. That is not an empty cache, which would be exit 0."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file\n")
    folder = blocker if where == "a-file" else blocker / "cache"
    proc = run_cli("cache", *command, "--dir", folder)
    assert proc.returncode == EXIT_RUN, proc.stdout + proc.stderr
    line = error_line(proc)
    assert f"response cache folder {folder}: Not a directory" in line, line
    assert proc.stdout == ""


@pytest.fixture
def read_only_cache(setup: tuple[Path, dict[str, str]]) -> Iterator[tuple[Path, dict[str, str]]]:
    """A filled cache folder, then mounted read-only (a bind of itself): EROFS even for root."""
    if not can_mount():
        pytest.skip("a read-only bind mount needs root with CAP_SYS_ADMIN")
    folder, env = setup
    run_quiz(folder, env, "mock/a")
    for entry in (folder / "cache").glob("??/*.json"):
        data = json.loads(entry.read_bytes())
        data["expires"] = 1.0  # expired, so prune has something to remove
        entry.write_text(json.dumps(data))
    cache = folder / "cache"
    mount("--bind", str(cache), str(cache))
    try:
        mount("-o", "remount,ro,bind", str(cache))
        yield folder, env
    finally:
        umount(cache)


@pytest.mark.doc("docs/cli.md", "5 when the folder cannot be read or changed")
@pytest.mark.parametrize("command", [["clear"], ["clear", "--model", "mock/a"], ["prune"]])
def test_a_folder_that_cannot_be_changed_is_exit_5(
    read_only_cache: tuple[Path, dict[str, str]], command: list[str]
) -> None:
    folder, env = read_only_cache
    proc = run_cli("cache", *command, cwd=folder, env=env)
    assert proc.returncode == EXIT_RUN, proc.stdout + proc.stderr
    line = error_line(proc)
    assert f"response cache folder {folder / 'cache'}: Read-only file system" in line, line
    listed = run_cli("cache", "list", cwd=folder, env=env)  # reading still works
    assert listed.returncode == EXIT_PASSED and listed.stdout.splitlines()[-1].startswith("3 ")
