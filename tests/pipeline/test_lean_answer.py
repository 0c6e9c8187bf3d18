"""The lean path judges a trial one built-in answer scorer settles without the scoring
phase (``_lean``: ``answer_judging``'s judge first, ``judge`` in the phase's scopes when it
cannot). The evidence, report and metrics must be those of the general path, which
judges every trial through ``judge``; a judge other than the real one (a bench patch)
must still judge every trial."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay.pipeline._lean as lean_module
import assay.pipeline._run as run_module
from assay import Sample, Task, eval, match
from assay._digest import canonical_json
from assay.evidence import verify_run
from assay.evidence._bundle import _SPLICED
from assay.evidence._framed import read_evidence
from assay.pipeline._lean import lean_fits
from tests.pipeline.test_lean import TIMED, _evidence, _untimed

REPORT_TIMED = {"started_at", "finished_at", "duration_s", "path", "run_dir", "digest"}


def answer(messages: list[Any]) -> str:
    """Right, wrong, empty or failing answers by the question's number."""
    text = messages[-1].content
    number = int(text.split()[-1])
    if number % 5 == 3:
        raise ValueError("the model broke")
    return ["4", "no idea", "", "4 apples"][number % 4]


def quiz(epochs: int) -> Task:
    samples = [
        Sample(input=f"question {i}", target="" if i % 7 == 6 else "4", id=f"s{i}")
        for i in range(14)
    ]
    return Task(dataset=samples, scorer=match(), name="lean-answer", epochs=epochs)


def _report(path: Path) -> Any:
    return _untimed(json.loads((path / "report.json").read_text()), TIMED | REPORT_TIMED)


def _run(tmp_path: Path, name: str, epochs: int, lean: bool, mp: pytest.MonkeyPatch) -> Path:
    taken: list[bool] = []

    def fits(run: Any) -> bool:
        taken.append(lean and lean_fits(run))
        return taken[-1]

    mp.setattr(run_module, "lean_fits", fits)
    (result,) = eval(
        quiz(epochs),
        model="mock/x",
        model_args={"outputs": answer},
        log_dir=tmp_path / name,
        max_attempts=1,
    )
    assert result.path is not None and verify_run(result.path).ok
    assert taken == [lean]
    return result.path


@pytest.mark.parametrize("epochs", [1, 2])
def test_answer_judged_trials_leave_the_general_paths_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, epochs: int
) -> None:
    short: list[Any] = []
    real = lean_module.answer_judging

    def spying(*parts: Any) -> Any:
        judged = real(*parts)
        assert judged is not None  # one built-in answer scorer

        def spy(*args: Any) -> Any:
            short.append(done := judged(*args))
            return done

        return spy

    monkeypatch.setattr(lean_module, "answer_judging", spying)
    lean = _run(tmp_path, "lean", epochs, True, monkeypatch)
    settled = [s for s in short if s is not None]
    assert len(short) == 14 * epochs  # every trial asked first, in the lean run only
    assert 0 < len(settled) < len(short)  # the errors go the general way
    general = _run(tmp_path, "general", epochs, False, monkeypatch)
    assert len(short) == 14 * epochs
    ours, theirs = _evidence(lean), _evidence(general)
    assert {s["status"] for s in map(json.loads, ours["scores"])} >= {"passed", "failed", "error"}
    for part in ours:
        assert ours[part] == theirs[part], part
    assert _report(lean) == _report(general)


def test_a_judge_that_is_not_the_real_one_judges_every_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged: list[str] = []
    real = run_module.judge

    async def judge(bundle: dict[str, Any], *args: Any) -> list[dict[str, Any]]:
        judged.append(bundle["trial"]["trial_id"])
        return await real(bundle, *args)

    monkeypatch.setattr(run_module, "judge", judge)
    _run(tmp_path, "patched", 1, True, monkeypatch)
    assert len(judged) == 14


def test_the_lean_paths_bundle_lines_are_canonical_with_spliceable_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lean path seals without ``seal_bundle``'s key check (``seal_spliceable``):
    every key ``bundle_of`` makes must be one ``_SPLICED`` names, or the digest would be
    put out of its sorted place."""
    run = _run(tmp_path, "lean", 1, True, monkeypatch)
    lines = read_evidence(run / "bundles.jsonl").splitlines()
    assert len(lines) == 14 and any("usage" in json.loads(line) for line in lines)
    for line in lines:
        assert json.loads(line).keys() <= _SPLICED
        assert line == canonical_json(json.loads(line))
