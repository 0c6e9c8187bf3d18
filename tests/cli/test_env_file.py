"""``./.env`` read as the CLI starts (python-dotenv), against the real CLI in a subprocess
and the project's OpenAI-compatible server on 127.0.0.1: its key and server reach the
model, a variable already set wins, ``--no-env-file`` skips it, a secret it holds is in
no file of the run nor in the output, and a ``.env`` in a parent folder is not read."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import error_line
from tests.servers.openai_compat import OpenAICompatServer

TASK = """
from assay import Sample, Task, generate, match, task

@task
def hello():
    return Task(dataset=[Sample(input="hello", target="hello")], solver=generate(), scorer=match())
"""

OWN = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ASSAY_ENV_PROBE")


def assay(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real CLI run in *folder*, with none of the variables a .env here might set."""
    clean = {k: v for k, v in os.environ.items() if k not in OWN}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**clean, "LANG": "C.UTF-8", **(env or {})},
        timeout=120,
        check=False,
    )


def project(tmp_path: Path, env_file: str) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "tasks.py").write_text(TASK)
    (folder / ".env").write_text(textwrap.dedent(env_file))
    return folder


def run_hello(
    folder: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return assay(folder, *extra, "run", "tasks.py", "--model", "openai/tiny", "-o", "run", env=env)


@pytest.mark.doc(
    "docs/cli.md",
    "As it starts, `assay` reads the file `.env` in the current folder, if there is one",
    "Its values stay in the process's environment: no run records them.",
)
def test_the_key_and_server_in_dotenv_reach_the_model_and_no_file_of_the_run(
    tmp_path: Path, openai_server: OpenAICompatServer
) -> None:
    key = "sk-dotenv-" + secrets.token_hex(12)
    folder = project(
        tmp_path,
        f"""
        # the team's keys
        OPENAI_API_KEY={key}
        OPENAI_BASE_URL="{openai_server.url}"
        """,
    )
    proc = run_hello(folder)
    assert proc.returncode == 0, proc.stderr
    assert [r.authorization for r in openai_server.requests] == [f"Bearer {key}"]
    assert key not in proc.stdout + proc.stderr
    files = [p for p in (folder / "run").rglob("*") if p.is_file()]
    assert len(files) > 3
    for path in files:
        assert key.encode() not in path.read_bytes(), path


@pytest.mark.doc("docs/cli.md", "A variable already set in the environment is never overridden")
def test_a_variable_already_set_wins_over_dotenv(
    tmp_path: Path, openai_server: OpenAICompatServer
) -> None:
    folder = project(
        tmp_path, f"OPENAI_API_KEY=sk-from-file\nOPENAI_BASE_URL={openai_server.url}\n"
    )
    proc = run_hello(folder, env={"OPENAI_API_KEY": "sk-from-shell"})
    assert proc.returncode == 0, proc.stderr
    assert [r.authorization for r in openai_server.requests] == ["Bearer sk-from-shell"]


@pytest.mark.doc(
    "docs/cli.md", "`--no-env-file` — do not read `.env`.", "`assay --no-env-file ...` skips it."
)
def test_no_env_file_skips_it(tmp_path: Path, openai_server: OpenAICompatServer) -> None:
    folder = project(
        tmp_path, f"OPENAI_API_KEY=sk-from-file\nOPENAI_BASE_URL={openai_server.url}\n"
    )
    proc = run_hello(folder, "--no-env-file", env={"OPENAI_BASE_URL": openai_server.url})
    assert proc.returncode == 0, proc.stderr
    assert [r.authorization for r in openai_server.requests] == ["Bearer no-key"]


@pytest.mark.doc("docs/cli.md", "only that folder's, never a parent's")
def test_a_dotenv_in_a_parent_folder_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-parent\n")
    folder = tmp_path / "child"
    folder.mkdir()
    (folder / "tasks.py").write_text(TASK)
    proc = assay(folder, "run", "tasks.py", "--model", "openai/tiny", "-o", "run")
    assert proc.returncode == 2
    assert "OPENAI_API_KEY" in error_line(proc)  # no key: the parent's file was not read


def test_a_dotenv_that_is_not_utf8_is_one_line_naming_it_and_the_way_out(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"OPENAI_API_KEY=\xff\xfe\n")
    (tmp_path / "tasks.py").write_text(TASK)
    proc = assay(tmp_path, "run", "tasks.py", "--model", "mock/x", "-o", "run")
    assert proc.returncode == 2
    line = error_line(proc)
    assert line.startswith(f"assay: cannot read the .env file {tmp_path / '.env'}: 'utf-8' codec")
    assert line.endswith("— fix the file, or skip it with --no-env-file")
    skipped = assay(tmp_path, "--no-env-file", "run", "tasks.py", "--model", "mock/x", "-o", "run")
    assert skipped.returncode == 0, skipped.stderr
