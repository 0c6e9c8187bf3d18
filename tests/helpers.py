"""Builders shared by the tests: spec folders, datasets and CLI runs."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
SHIPPING = REPO / "examples" / "shipping"


def write_dataset(folder: Path, samples: list[dict[str, Any]], name: str = "data.jsonl") -> Path:
    """Write *samples* as a JSONL file in *folder*."""
    path = folder / name
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return path


def write_spec(folder: Path, spec: dict[str, Any], name: str = "eval.yaml") -> Path:
    """Write *spec* as YAML in *folder* and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def simple_spec(
    folder: Path,
    *,
    samples: list[dict[str, Any]] | None = None,
    targets: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> Path:
    """A small valid spec: 3 echo samples and one callable target, scored by ``exact``."""
    folder.mkdir(parents=True, exist_ok=True)
    if samples is None:
        samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(3)]
    write_dataset(folder, samples)
    if targets is None:
        (folder / "answers.py").write_text("def echo(text):\n    return text\n")
        targets = [{"id": "echo", "callable": "answers:echo"}]
    spec: dict[str, Any] = {
        "evaluation": "simple",
        "dataset": "data.jsonl",
        "targets": targets,
        "scorers": [{"id": "exact", "type": "exact"}],
        "gate": {"minimum": 1.0},
    }
    spec.update(extra)
    return write_spec(folder, spec)


def run_cli(
    *args: str | os.PathLike[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``assay`` command in a subprocess and capture its output."""
    full_env = {**os.environ, "LANG": "C.UTF-8", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "assay", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
        check=False,
    )


MEMORY_CAP = 1 << 30
"""Address space for ``run_capped``: ample for assay, far less than /dev/zero holds."""


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_capped(
    *args: str | os.PathLike[str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``run_cli`` with the address space capped at MEMORY_CAP: a command handed a file
    that never ends (``/dev/zero``) and reading it whole fails fast (MemoryError, exit
    70) instead of taking the machine's memory."""
    return subprocess.run(
        [sys.executable, "-m", "assay", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "LANG": "C.UTF-8"},
        timeout=timeout,
        check=False,
        preexec_fn=_cap_memory,
    )


def run_cli_locale(
    *args: str | os.PathLike[str],
    env: dict[str, str],
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``assay`` with every locale variable removed, then *env* applied.

    ``run_cli`` keeps the caller's ``LC_ALL``/``LC_MESSAGES``, which outrank ``LANG``; this
    one starts from a clean locale so a test decides the language alone.
    """
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE")
    }
    return subprocess.run(
        [sys.executable, "-m", "assay", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**base, **env},
        timeout=timeout,
        check=False,
    )


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """Assert *proc* reported exactly one ``assay:`` line on stderr, no traceback; return it."""
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("assay: "), proc.stderr
    return lines[0]


def write_module(folder: Path, name: str, source: str) -> Path:
    """Write a Python module *name* (without ``.py``) holding *source* into *folder*."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return path


def callable_spec(folder: Path, source: str, function: str = "answer", **extra: Any) -> Path:
    """A ``simple_spec`` whose one target, ``t``, is *function* defined in *source*."""
    write_module(folder, "target_mod", source)
    targets = [{"id": "t", "callable": f"target_mod:{function}"}]
    return simple_spec(folder, targets=targets, **extra)


def has_cjk(text: str) -> bool:
    """True if *text* holds a CJK unified ideograph."""
    return any("\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" for ch in text)


FAST_RETRY: dict[str, Any] = {"max_attempts": 3, "initial_backoff": 0.01, "max_backoff": 0.02}
"""A retry policy with tiny backoffs, so retry tests take milliseconds."""


def unique_callable_spec(
    folder: Path,
    source: str,
    function: str = "answer",
    *,
    samples: list[dict[str, Any]] | None = None,
    target: dict[str, Any] | None = None,
    **extra: Any,
) -> Path:
    """A ``simple_spec`` whose one target ``t`` calls *function* in *source*.

    The module gets a name no other test uses: Python caches modules by name, so two
    specs that both define ``answers.py`` would share the first one imported.
    """
    name = f"mod_{uuid.uuid4().hex[:12]}"
    write_module(folder, name, source)
    targets = [{"id": "t", "callable": f"{name}:{function}", **(target or {})}]
    return simple_spec(folder, samples=samples, targets=targets, **extra)


def quiz_tasks(samples: int) -> str:
    """The source of a task file with one task, ``quiz``: *samples* questions (``s0``,
    ``s1``...) whose target is ``four``, scored by ``includes()``."""
    return f"""
from assay import Sample, Task, includes, task

@task
def quiz():
    return Task(
        dataset=[
            Sample(input=f"question {{i}}", target="four", id=f"s{{i}}")
            for i in range({samples})
        ],
        scorer=includes(),
    )
"""


_HELD_TARGET = """
import asyncio
import os
import resource


async def answer(n):
    await asyncio.sleep({pause})
    hold = os.environ.get("HOLD")
    while hold and n >= {held_from} and not os.path.exists(hold):
        await asyncio.sleep(0.01)
    return str(n) if n % 7 else "wrong"
"""


def held_spec(folder: Path, trials: int, *, held_from: int, pause: float) -> Path:
    """A spec of *trials* samples (``s000``...) whose target answers ``n`` after *pause*
    seconds, every 7th one ``wrong`` (so the gate, minimum 0.8, has something to count).
    With ``HOLD`` set to a path, trials from *held_from* on wait until that file exists:
    a test can act on a run surely mid-way (some trials on disk, the rest waiting)."""
    source = _HELD_TARGET.format(pause=pause, held_from=held_from)
    samples = [{"id": f"s{i:03d}", "input": i, "expected": str(i)} for i in range(trials)]
    return unique_callable_spec(folder, source, samples=samples, gate={"minimum": 0.8})


def run_spec_at(spec: Path, output: Path | None, **options: Any) -> Any:
    """Load *spec* and run it in-process into *output*; returns the ``RunOutcome``."""
    from assay.pipeline import RunOptions, run_spec
    from assay.spec import load_spec

    return run_spec(load_spec(spec), RunOptions(output=output, **options))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL file, decoded."""
    from assay.evidence._framed import read_evidence  # plain or compacted alike

    return [json.loads(line) for line in read_evidence(path).splitlines()]


def bundles_by_sample(run: Path) -> dict[str, dict[str, Any]]:
    """A run's bundles keyed by sample id (one target, one repetition)."""
    return {b["trial"]["sample_id"]: b for b in read_jsonl(run / "bundles.jsonl")}


def trial_events(run: Path) -> dict[str, list[dict[str, Any]]]:
    """A run's events grouped by trial id, in log order (run-level events under ``""``)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for event in log_events(run):
        grouped.setdefault(event["trial"] or "", []).append(event)
    return grouped


def log_events(run: Path) -> list[dict[str, Any]]:
    """A run's events in log order, a batch line's expanded (``events_in``): each shaped as
    a line (a batched one has no ``seq`` or ``prev``)."""
    from assay.evidence._log import events_in

    return [event for line in read_jsonl(run / "events.jsonl") for event in events_in(line)]


def artifact_bytes(run: Path, sha: str) -> bytes:
    """The bytes of the artifact named *sha* in *run* (a loose file or a pack record)."""
    from assay.evidence import ArtifactStore

    return ArtifactStore(run / "artifacts", write=False).get(sha)


def edit_artifact(run: Path, sha: str, edit: Callable[[bytes], bytes]) -> None:
    """Rewrite the stored bytes of artifact *sha* in place (same length expected)."""
    from assay.evidence import ArtifactStore

    path, offset, size = ArtifactStore(run / "artifacts", write=False).locate(sha)
    data = bytearray(path.read_bytes())
    changed = edit(bytes(data[offset : offset + size]))
    data[offset : offset + size] = changed
    path.write_bytes(bytes(data))


def state_of(run: Path, bundle: dict[str, Any]) -> dict[str, Any]:
    """The final TaskState record (the output artifact) of a Python-task trial's bundle."""
    decoded: dict[str, Any] = json.loads(artifact_bytes(run, bundle["observation"]["output"]))
    return decoded


def states_by_sample(run: Path) -> dict[str, dict[str, Any]]:
    """Each sample's final TaskState record, by sample id."""
    return {sid: state_of(run, b) for sid, b in bundles_by_sample(run).items()}


def run_task_copy(
    task_file: Path, task_name: str, folder: Path, **task_args: Any
) -> tuple[Path, ModuleType]:
    """Run a fresh copy of *task_file*'s task *task_name* with *task_args* through
    ``eval`` (logs in *folder*/runs): its run directory, and the module the copy was
    loaded as (where a scripted task keeps what its tools ran). A copy, so every run
    loads the file anew and ``assay score`` can rebuild the task from the run."""
    from assay.pipeline import eval as run_eval

    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / task_file.name
    copy.write_bytes(task_file.read_bytes())
    (result,) = run_eval(f"{copy}@{task_name}", task_args=task_args, log_dir=folder / "runs")
    assert result.status == "success", result.error
    assert result.path is not None
    module = next(
        m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == str(copy)
    )
    return result.path, module


def run_dirs(log_dir: Path) -> list[Path]:
    """The run directories ``eval`` created in *log_dir* (those with a manifest)."""
    return sorted(p for p in log_dir.iterdir() if (p / "manifest.json").is_file())


def events_of(run: Path, kind: str) -> list[dict[str, Any]]:
    """A run's events of type *kind*, in log order."""
    return [e for e in log_events(run) if e["type"] == kind]


# -- robustness: real processes, signals, torn files, mounts -----------------------------


def start_cli(
    *args: str | os.PathLike[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[str]:
    """Start ``python -m assay ARGS`` in its own session (so signals reach only it).

    Started directly with ``Popen`` rather than through a shell: a background job of a
    non-interactive shell has SIGINT ignored, which would hide how assay handles Ctrl-C.
    """
    full_env = {**os.environ, "LANG": "C.UTF-8", **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "assay", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=full_env,
        start_new_session=True,
    )


BLOCKED_AT_LAST = """
import pathlib, time

def answer(text):
    if text == "q2":  # the last trial waits for the test to let it go
        gate = pathlib.Path(__file__).with_name("go")
        while not gate.exists():
            time.sleep(0.01)
    return {answer}
"""


def run_blocked_at_last_trial(
    tmp_path: Path, answer: str = "text"
) -> tuple[subprocess.Popen[bytes], Path]:
    """``assay run`` (our own child, ``-j 1``) of a 3-sample spec whose one target
    answers with the expression *answer* (of its input ``text``), its last trial
    (``s2``) waiting for a ``go`` file beside the module: the process and its run
    folder, once that trial has started."""
    write_module(tmp_path, "blocking", BLOCKED_AT_LAST.format(answer=answer))
    spec = simple_spec(tmp_path, targets=[{"id": "t", "callable": "blocking:answer"}])
    run = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "run", spec, "--output", run, "-j", "1"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    events = run / "events.jsonl"

    def last_trial_started() -> bool:  # the run's own evidence says so
        assert process.poll() is None, process.communicate()
        return b'"sample_id":"s2"' in (events.read_bytes() if events.exists() else b"")

    try:
        assert wait_for(last_trial_started, timeout=60.0)
    except BaseException:
        if process.poll() is None:
            process.kill()
            process.wait()
        raise
    return process, run


def interrupted_at_last_trial(tmp_path: Path, answer: str = "text") -> Path:
    """``run_blocked_at_last_trial``'s run, sealed ``interrupted`` by Ctrl-C (SIGINT to
    our own child) while its last trial waited: ``s0`` and ``s1`` finished, ``s2`` not."""
    import signal

    process, run = run_blocked_at_last_trial(tmp_path, answer)
    try:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return run


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0, step: float = 0.002) -> bool:
    """Poll *predicate* until it holds (True) or *timeout* seconds pass (False)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def whole_records(path: Path) -> list[dict[str, Any]]:
    """The decodable, newline-terminated JSON lines of *path* (a torn last line is skipped)."""
    from assay.evidence._framed import read_evidence  # plain or compacted alike

    try:
        data = read_evidence(path)
    except FileNotFoundError:
        return []
    records = []
    for line in data.split(b"\n")[:-1]:
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def finished_trials(run: Path) -> set[str]:
    """Ids of the trials whose bundle line is whole in *run* (what resume keeps)."""
    return {b["trial"]["trial_id"] for b in whole_records(run / "bundles.jsonl")}


def trial_starts(run: Path) -> dict[str, int]:
    """How many ``trial_started`` events each trial has in *run*'s whole event lines."""
    from assay.evidence._framed import read_evidence  # plain or compacted alike
    from assay.evidence._log import events_in

    counts: dict[str, int] = {}
    try:
        data = read_evidence(run / "events.jsonl")
    except FileNotFoundError:
        return counts
    for line in data.split(b"\n")[:-1]:
        if b'"type":"trial_started"' not in line:
            continue  # decoding only these keeps a 2,000-trial log fast to count
        try:
            event = json.loads(line)
        except ValueError:
            continue
        for each in events_in(event):
            if each["type"] == "trial_started":
                counts[each["trial"]] = counts.get(each["trial"], 0) + 1
    return counts


def results_view(run: Path) -> dict[str, Any]:
    """What a run concluded, without what legitimately differs between two runs.

    Scores, metrics, gate and report rows (JSON, and Markdown/HTML with digests masked);
    bundle digests are left out, since they cover event timestamps.
    """
    import re

    report = json.loads((run / "report.json").read_bytes())
    for row in report["trials"]:
        row.pop("bundle_digest", None)
    scores = {}
    for score in read_jsonl(run / "scores.jsonl"):
        score = dict(score)
        score.pop("bundle_digest", None)
        scores[score["score_id"]] = score
    digest = re.compile(r"sha256:[0-9a-f]{64}")
    rendered = {
        name: digest.sub("sha256:…", (run / name).read_text(encoding="utf-8"))
        for name in ("report.md", "report.html")
    }
    return {"report": report, "scores": scores, "rendered": rendered}


def tear_last_line(path: Path) -> bytes:
    """Cut *path*'s last line in half (a torn write); return the whole lines kept."""
    data = path.read_bytes()
    start = data.rfind(b"\n", 0, len(data) - 1) + 1
    assert len(data) - start > 2, f"{path.name}: no last record to tear"
    path.write_bytes(data[: start + (len(data) - start) // 2])
    return data[:start]


def process_group_gone(pgid: int, limit: float = 10.0) -> bool:
    """True once no process is left in group *pgid* (reaping may take a moment)."""

    def gone() -> bool:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        return False

    return wait_for(gone, timeout=limit, step=0.02)


def process_gone(pid: int, limit: float = 10.0) -> bool:
    """True once process *pid* is dead: no such process, or a zombie (killed, not reaped:
    an orphan's reaper in a container may never reap it)."""

    def gone() -> bool:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        return stat.rpartition(")")[2].split()[0] in ("Z", "X")

    return wait_for(gone, timeout=limit, step=0.02)


def can_mount() -> bool:
    """Whether this process may mount file systems (root with CAP_SYS_ADMIN, Linux)."""
    import shutil
    import tempfile

    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    with tempfile.TemporaryDirectory() as folder:
        probe = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", folder],
            capture_output=True,
            check=False,
        )
        if probe.returncode != 0:
            return False
        subprocess.run(["umount", folder], capture_output=True, check=False)
    return True


def mount(*args: str) -> None:
    """Run ``mount ARGS``; raise with its message if it fails."""
    done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise OSError(f"mount {' '.join(args)}: {done.stderr.strip()}")


def umount(path: Path) -> None:
    """Unmount *path* (lazily, so a stray open file cannot keep the test's mount alive)."""
    subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


GRADED_TASK = """
from assay import Sample, Task, generate, model_graded_qa, task
from assay.model import set_price

set_price("openai/answerer", input=0.5, output=0.5)
set_price("openai/grader", input=1.0, output=2.0)


@task
def capitals(epochs: int = 1) -> Task:
    return Task(
        dataset=[
            Sample(input="Capital of France?", target="Paris", id="fr"),
            Sample(input="Capital of Italy?", target="Rome", id="it"),
            Sample(input="Capital of France?", target="Paris", id="fr-again"),
        ],
        solver=generate(),
        scorer=model_graded_qa(model="openai/grader"),
        model="openai/answerer",
        epochs=epochs,
    )
"""
"""A task answered by ``openai/answerer`` and graded by ``openai/grader``, both priced;
serve both from one ``OpenAICompatServer(reply=graded_reply)`` via ``OPENAI_BASE_URL``.
Samples ``fr`` and ``fr-again`` ask the same question, so their grader prompts match."""


def graded_reply(payload: dict[str, Any]) -> str:
    """The server's answers to ``GRADED_TASK``: the answerer knows one capital, the
    grader passes a submission naming Paris."""
    text = str(payload["messages"][-1]["content"])
    if payload["model"] == "grader":
        return "Reasoning done.\nGRADE: C" if "[Submission]: Paris" in text else "GRADE: I"
    return "Paris" if "France" in text else "Lyon"


def graded_task_file(folder: Path) -> Path:
    """``GRADED_TASK`` in a module no other test imports (Python caches by name)."""
    return write_module(folder, f"graded_{uuid.uuid4().hex[:12]}", GRADED_TASK)


def run_python(
    code: str, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -c code args...`` in a fresh process with this checkout's ``src`` on
    ``PYTHONPATH`` (what a process imports, and when, cannot be seen from inside a
    test's); *env* replaces the environment (this one's by default)."""
    full_env = {**(os.environ if env is None else env)}
    full_env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )
