"""``assay merge`` tried as a user tries it, on inputs around those of test_shard.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.evidence import verify_run
from tests.helpers import error_line, run_cli, unique_callable_spec

SOURCE = """
def answer(text):
    return text
"""


@pytest.mark.doc("docs/cli.md", "It must not be inside a shard either (exit 2).")
def test_a_merged_run_inside_one_of_its_shards_is_refused(tmp_path: Path) -> None:
    """Before, the shard was copied into a folder inside itself until Python's recursion
    limit: an internal error (exit 70)."""
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(4)]
    spec = unique_callable_spec(tmp_path / "spec", SOURCE, samples=samples)
    shards = [tmp_path / "shard-1", tmp_path / "shard-2"]
    for index, shard in enumerate(shards, 1):
        proc = run_cli("run", spec, "--shard", f"{index}/2", "-o", shard)
        assert proc.returncode == 3, proc.stdout + proc.stderr
    inside = shards[0] / "merged"
    proc = run_cli("merge", *shards, "-o", inside)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert error_line(proc) == (
        f"assay: --output {inside} is inside the shard {shards[0]}: the merge would copy it "
        "into itself — pass an --output folder outside every shard"
    )
    assert not inside.exists()
    assert verify_run(shards[0]).ok
    again = run_cli("merge", *shards, "-o", tmp_path / "merged")  # elsewhere: merged
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_file_given_as_a_run_is_called_a_file(tmp_path: Path) -> None:
    """It said "no such folder" of a path that exists."""
    notes = tmp_path / "notes.txt"
    notes.write_text("not a run\n")
    proc = run_cli("verify", notes)
    assert proc.returncode == 4, proc.stdout + proc.stderr  # verify: not a run is exit 4
    assert "a file, not a run's folder" in error_line(proc)
    assert "no such folder" not in proc.stderr
