"""A run's start and end (``assay._collector``, ``pipeline._ahead``): at its first
model call the report's template is not loaded yet (a thread loading Jinja then would
compete with the start for the GIL) and what the start made is frozen (no collection
walks it while the trials run); it is given back when the call returns, and the
collector is left as it was found."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

from assay._collector import collection_paused, freeze_survivors, survivors_frozen
from tests.helpers import run_python

TASK = """
import gc
import sys
from typing import Any

from assay import Sample, Task, generate, match, task
from assay.model import ChatMessage, GenerateConfig, MockAPI, modelapi

SEEN: list[str] = []
LATER = (  # a baseline's comparison, verification, resume, rescoring, eval sets
    "assay.gate._baseline",
    "assay.evidence._verify_folder",
    "assay.evidence._verify_checker",
    "assay.pipeline._rescore",
    "assay.pipeline._eval_set",
    "assay.target._persistent",  # program targets: a Python task's target is its solver
    "assay.target._subprocess",
    "assay.target._callable",
    "assay.target._http",
    "assay.dataset._loaders",  # file and hub loaders: these samples are made in Python
    "assay.dataset._hf",
    "assay.sandbox._bwrap",  # the sandbox providers: these samples have none
    "assay.sandbox._local",
    "assay.model._anthropic",  # the other providers: this run's is its own
    "assay.model._google",
    "assay.model._local",
)


def echo(messages: list[ChatMessage]) -> str:
    if not SEEN:
        SEEN.append(f"jinja2 {'jinja2' in sys.modules} frozen {gc.get_freeze_count()}")
        print(f"at the first call: {SEEN[0]}", file=sys.stderr)
        later = [m for m in LATER if m in sys.modules]
        print(f"loaded for later at the first call: {later}", file=sys.stderr)
    return messages[-1].content


@modelapi("first-call")
def provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    return MockAPI(name, config, outputs=echo)


@task
def echoed() -> Task:
    samples = [Sample(input=f"q{i}", target=f"q{i}", id=f"s{i}") for i in range(20)]
    return Task(dataset=samples, solver=[generate()], scorer=match(), model="first-call/v1")
"""

CODE = """
import gc, sys
threshold = gc.get_threshold()
import assay
result = assay.eval(sys.argv[1], log_dir=sys.argv[2])[0]
assert result.status == "success", result.error
print(f"after: frozen {gc.get_freeze_count()}, enabled {gc.isenabled()},"
      f" threshold kept {gc.get_threshold() == threshold}", file=sys.stderr)
"""


def test_at_the_first_call_no_template_and_the_start_frozen_then_given_back(
    tmp_path: Path,
) -> None:
    (tmp_path / "task.py").write_text(TASK)
    done = run_python(CODE, f"{tmp_path / 'task.py'}@echoed", str(tmp_path / "log"))
    assert done.returncode == 0, done.stderr[-3000:]
    first = done.stderr.split("at the first call: ")[1].split()
    assert first[:2] == ["jinja2", "False"]
    assert int(first[3]) > 10_000  # the modules, the dataset, the plan
    assert "after: frozen 0, enabled True, threshold kept True" in done.stderr
    assert list((tmp_path / "log").glob("*/report.html"))  # the template loaded later


def test_a_pause_freezes_what_exists_and_leaves_a_collector_that_was_off_as_it_was() -> None:
    try:
        with collection_paused():
            assert not gc.isenabled()
            made = [[] for _ in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(made)
        gc.disable()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_survivors_are_frozen_only_inside_a_run_and_given_back_by_the_last_one() -> None:
    try:
        gc.unfreeze()
        freeze_survivors()  # outside a run: nothing
        assert gc.get_freeze_count() == 0
        with survivors_frozen():
            with survivors_frozen():  # runs nest or overlap
                freeze_survivors()
                assert gc.get_freeze_count() > 0
            assert gc.get_freeze_count() > 0  # the outer run still runs
        assert gc.get_freeze_count() == 0
        assert gc.get_count()[0] < 50  # the young generation left (nearly) empty
    finally:
        gc.unfreeze()


def test_at_the_first_call_what_only_other_runs_use_is_not_loaded(tmp_path: Path) -> None:
    """The start imports what a run needs: not the baseline comparison (a run with
    ``no_regression``), the verify chain, rescoring or eval sets (``assay.pipeline`` and
    ``assay.gate`` export lazily), the program targets (``build_target`` imports each
    kind for its kind), the dataset loaders (``assay.dataset`` exports them lazily) or
    the sandbox providers (made by name when first asked for) or the model providers
    other than the run's: 45 fewer modules before the first request."""
    (tmp_path / "task.py").write_text(TASK)
    done = run_python(CODE, f"{tmp_path / 'task.py'}@echoed", str(tmp_path / "log"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "loaded for later at the first call: []" in done.stderr, done.stderr[-3000:]


THREADS_CODE = """
import sys, threading
names = []
start = threading.Thread.start
def counted(self):
    names.append(self.name.rsplit("_", 1)[0])
    start(self)
threading.Thread.start = counted
import assay
result = assay.eval(sys.argv[1], log_dir=sys.argv[2])[0]
assert result.status == "success", result.error
print({name: names.count(name) for name in ("assay-seal", "assay-sync", "assay-compact")})
"""


def test_the_seal_compresses_and_syncs_on_one_set_of_threads(tmp_path: Path) -> None:
    """Sealing starts its threads once (``assay-seal``, at most ``THREADS``) for the
    compaction's last frames, the sealed files' fsyncs and the folder's, not a set for
    each: a thread's start waits for the thread to run, which on a loaded machine is
    a wait for the GIL and a core."""
    from assay.evidence._durable import THREADS

    (tmp_path / "task.py").write_text(TASK)
    done = run_python(THREADS_CODE, f"{tmp_path / 'task.py'}@echoed", str(tmp_path / "log"))
    assert done.returncode == 0, done.stderr[-3000:]
    started = ast.literal_eval(done.stdout.strip())
    assert 0 < started["assay-seal"] <= THREADS, started
    assert started["assay-sync"] <= 3 and started["assay-compact"] == 0, started  # reports
