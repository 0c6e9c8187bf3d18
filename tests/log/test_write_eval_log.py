"""``write_eval_log(log, path)``, as Inspect code calls it on what ``eval`` or
``read_eval_log`` returned: the run written as Inspect's ``.eval`` log, which Inspect's
own ``read_eval_log`` opens (in ``bench/.venv-inspect``, made under CI)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from assay.errors import ConfigError, EvidenceError
from assay.log import read_eval_log, write_eval_log
from tests.helpers import bundles_by_sample, edit_artifact
from tests.log.test_inspect_export import read_with_inspect, run_with_an_error


def members(path: Path) -> dict[str, object]:
    with zipfile.ZipFile(path) as archive:
        return {name: json.loads(archive.read(name)) for name in archive.namelist()}


def test_inspect_reads_what_write_eval_log_wrote(tmp_path: Path) -> None:
    log = read_eval_log(run_with_an_error(tmp_path))
    out = tmp_path / "capitals.eval"
    write_eval_log(log, out)
    seen = read_with_inspect(out)
    assert log.results is not None and log.samples is not None
    assert (seen["status"], seen["task"], seen["model"]) == ("error", "capitals", "mock/one")
    assert seen["metrics"] == {
        s.name: {k: m.value for k, m in s.metrics.items()} for s in log.results.scores
    }
    ids = sorted([str(s.id), s.epoch] for s in log.samples)
    assert sorted(row[:2] for row in seen["samples"]) == ids


def test_the_written_log_holds_the_runs_header_samples_and_scores(tmp_path: Path) -> None:
    run = run_with_an_error(tmp_path)
    log = read_eval_log(run)
    out = tmp_path / "capitals.eval"
    write_eval_log(log, out)
    written = members(out)
    header = written["header.json"]
    assert isinstance(header, dict) and log.results is not None and log.samples is not None
    assert (header["status"], header["eval"]["task"], header["eval"]["model"]) == (
        "error",
        "capitals",
        "mock/one",
    )
    assert header["results"]["scores"][0]["metrics"]["accuracy"]["value"] == pytest.approx(2 / 6)
    samples = {name: record for name, record in written.items() if name.startswith("samples/")}
    assert sorted(samples) == sorted(f"samples/{s.id}_epoch_{s.epoch}.json" for s in log.samples)
    for sample in log.samples:
        record = samples[f"samples/{sample.id}_epoch_{sample.epoch}.json"]
        assert isinstance(record, dict)
        assert record["output"]["completion"] == sample.output.completion
        assert {k: v["value"] for k, v in record["scores"].items()} == {
            k: v.value for k, v in sample.scores.items()
        }


def test_without_a_location_it_is_written_beside_the_run(tmp_path: Path) -> None:
    run = run_with_an_error(tmp_path)
    write_eval_log(read_eval_log(run, header_only=True))
    assert "header.json" in members(run.with_name(run.name + ".eval"))


@pytest.mark.parametrize(("name", "format"), [("log.json", "auto"), ("log.eval", "json")])
def test_inspects_json_format_is_refused(tmp_path: Path, name: str, format: str) -> None:
    run = run_with_an_error(tmp_path)
    log = read_eval_log(run, header_only=True)
    with pytest.raises(ConfigError, match=r"writes Inspect's \.eval log only, not json"):
        write_eval_log(log, tmp_path / name, format=format)  # type: ignore[arg-type]
    assert not (tmp_path / name).exists()


def test_edited_evidence_is_not_written(tmp_path: Path) -> None:
    run = run_with_an_error(tmp_path)
    log = read_eval_log(run, header_only=True)
    bundle = bundles_by_sample(run)["s0"]
    edit_artifact(run, bundle["observation"]["output"], lambda data: data.replace(b"D", b"E"))
    out = tmp_path / "capitals.eval"
    with pytest.raises(EvidenceError):
        write_eval_log(log, out)
    assert not out.exists()
    assert not list(tmp_path.glob(".capitals.eval*"))
