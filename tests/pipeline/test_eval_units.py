"""``eval``: tasks × models become independent units, each with its own run directory.

Every test goes through the real pipeline with assay's own ``mock`` provider and reads
the run directories back (``verify_run``), the way an auditor would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from assay import Sample, Task, TaskState, eval, generate, includes, match
from assay.evidence import read_manifest, verify_run
from assay.solver import Generate
from tests.helpers import read_jsonl, run_dirs


def small_task(name: str, count: int = 2, solver: Any = None, **options: Any) -> Task:
    """*count* samples answered "yes" by the default mock, scored by ``includes``."""
    return Task(
        dataset=[Sample(input=f"{name} {i}", target="Default", id=f"s{i}") for i in range(count)],
        solver=solver if solver is not None else [generate()],
        scorer=includes(),
        name=name,
        **options,
    )


def test_one_result_per_task_and_model_in_order_each_in_its_own_verified_run(
    tmp_path: Path,
) -> None:
    tasks = [small_task("alpha"), small_task("beta")]
    results = eval(tasks, model=["mock/one", "mock/two"], log_dir=tmp_path)

    assert [(r.task, r.model) for r in results] == [
        ("alpha", "mock/one"),
        ("alpha", "mock/two"),
        ("beta", "mock/one"),
        ("beta", "mock/two"),
    ]
    paths = [r.path for r in results]
    assert all(p is not None for p in paths)
    assert len(set(paths)) == 4
    for result in results:
        assert result.status == "success", result.error
        assert result.path is not None and result.path.parent == tmp_path
        assert verify_run(result.path).ok, verify_run(result.path).problems
        assert read_manifest(result.path)["status"] == "complete"
        spec = msgspec.json.decode((result.path / "spec.json").read_bytes())
        assert spec["evaluation"] == result.task
        assert [t["model"] for t in spec["targets"]] == [result.model]
        assert len(read_jsonl(result.path / "bundles.jsonl")) == 2
        assert result.task_metrics[result.model]["includes"]["accuracy"] == 1.0


def _overlap_task(name: str, active: dict[str, int], together: int) -> Task:
    """A unit whose solver waits until *together* units are in it (so two that may run
    at once are seen at once, however slow the machine), then leaves room for one more."""

    async def busy(state: TaskState, generate: Generate) -> TaskState:
        active["now"] += 1
        active["peak"] = max(active["peak"], active["now"])
        try:
            with anyio.fail_after(60):  # a failure guard: the sibling never came
                while active["peak"] < together:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.15)  # room for a unit that must not start
        finally:
            active["now"] -= 1
        return await generate(state)

    return small_task(name, count=1, solver=[busy])


@pytest.mark.parametrize(("max_tasks", "peak"), [(1, 1), (2, 2)])
def test_max_tasks_is_how_many_units_run_at_once(tmp_path: Path, max_tasks: int, peak: int) -> None:
    active = {"now": 0, "peak": 0}
    tasks = [_overlap_task("first", active, peak), _overlap_task("second", active, peak)]
    results = eval(tasks, model="mock/x", log_dir=tmp_path, max_tasks=max_tasks)
    assert [r.status for r in results] == ["success", "success"]
    assert active["peak"] == peak


async def _raises(state: TaskState, generate: Generate) -> TaskState:
    raise RuntimeError("the solver broke")


def test_a_unit_that_errors_does_not_stop_its_sibling(tmp_path: Path) -> None:
    finished: list[str] = []

    async def slow(state: TaskState, generate: Generate) -> TaskState:
        await anyio.sleep(0.1)  # still running when the sibling fails
        finished.append(str(state.sample_id))
        return await generate(state)

    bad = small_task("bad", solver=[_raises], fail_on_error=True)
    good = small_task("good", count=3, solver=[slow])
    results = eval([bad, good], model="mock/x", log_dir=tmp_path, max_tasks=2)

    assert [(r.task, r.status) for r in results] == [("bad", "error"), ("good", "success")]
    assert "fail_on_error" in (results[0].error or "")
    assert sorted(finished) == ["s0", "s1", "s2"]
    good_run = results[1].path
    assert good_run is not None and verify_run(good_run).ok
    assert len(read_jsonl(good_run / "bundles.jsonl")) == 3
    # Two directories: the failed unit's evidence is kept too, and verifies.
    assert len(run_dirs(tmp_path)) == 2
    assert all(verify_run(p).ok for p in run_dirs(tmp_path))


def test_a_unit_stopped_by_fail_on_error_still_names_its_run_directory(tmp_path: Path) -> None:
    (result,) = eval(small_task("bad", solver=[_raises]), model="mock/x", log_dir=tmp_path)
    assert result.status == "error"
    assert result.path == run_dirs(tmp_path)[0]


def test_eval_without_a_model_uses_the_tasks_model(tmp_path: Path) -> None:
    task = small_task("own", model="mock/chosen")
    (result,) = eval(task, log_dir=tmp_path)
    assert result.model == "mock/chosen"
    assert result.path is not None and verify_run(result.path).ok


def test_model_args_reach_the_mock_provider(tmp_path: Path) -> None:
    task = Task(dataset=[Sample(input="2 + 2", target="4", id="s")], scorer=match(), name="argued")
    (result,) = eval(task, model="mock/x", model_args={"outputs": lambda m: "4"}, log_dir=tmp_path)
    assert result.task_metrics["mock/x"]["match"]["accuracy"] == 1.0


def test_a_log_dir_given_as_a_string_is_a_folder(tmp_path: Path) -> None:
    (result,) = eval(small_task("strpath"), model="mock/x", log_dir=str(tmp_path / "runs"))
    assert result.status == "success", result.error
    assert result.path is not None and result.path.parent == tmp_path / "runs"
    assert verify_run(result.path).ok


def test_a_misspelt_option_is_one_line_naming_the_closest(tmp_path: Path) -> None:
    from assay.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        eval(small_task("typo"), model="mock/x", log_dir=tmp_path, max_sample=3)
    assert "'max_sample'" in str(caught.value) and "'max_samples'" in str(caught.value)
    assert not list(tmp_path.iterdir()), "nothing was run"
