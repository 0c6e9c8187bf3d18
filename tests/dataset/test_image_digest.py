"""Images a dataset names by path are pinned by their bytes: the sample line holds the
path only, so the dataset's digest (and so the spec's) takes each file's SHA-256 too."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from assay import Task, eval
from assay.dataset import MemoryDataset, Sample
from assay.dataset._memory import spill
from assay.model import ChatMessage, ContentImage, ContentText
from assay.scorer import includes

RED = b"\x89PNG\r\n\x1a\n red"
BLUE = b"\x89PNG\r\n\x1a\n blue"


def digests(run: Path) -> tuple[str, str]:
    spec = json.loads((run / "spec.json").read_text())
    manifest = json.loads((run / "manifest.json").read_text())
    return spec["dataset"]["digest"], manifest["spec_digest"]


def run_with(picture: Path, output: Path) -> tuple[str, str]:
    question = ChatMessage("user", [ContentText("What colour?"), ContentImage(str(picture))])
    dataset = MemoryDataset([Sample(input=[question], target="red", id="q1")], name="colours")
    task = Task(dataset=dataset, scorer=includes())
    (result,) = eval(task, model="mock/m", output=output)
    assert result.status == "success", result.error
    return digests(output)


def test_changing_an_image_changes_the_dataset_and_spec_digests(tmp_path: Path) -> None:
    picture = tmp_path / "picture.png"
    picture.write_bytes(RED)
    first = run_with(picture, tmp_path / "r1")
    assert run_with(picture, tmp_path / "r2") == first  # same bytes, same digests
    picture.write_bytes(BLUE)  # same path, other bytes
    changed = run_with(picture, tmp_path / "r3")
    assert changed[0] != first[0] and changed[1] != first[1]


def test_a_sample_without_image_files_keeps_the_digest_of_its_line() -> None:
    uri = "data:image/png;base64,iVBORw0KGgo="
    question = ChatMessage("user", [ContentText("What colour?"), ContentImage(uri)])
    for given in ([question], "What colour?"):  # a data URI is in the line already
        lines, digest, _ = spill([(1, Sample(input=given, target="red", id="q1"))], "x")
        assert digest == "sha256:" + hashlib.sha256(lines[0]).hexdigest()
