"""Persistent program targets (``protocol: jsonl``), run for real through the CLI.

Each test writes a real program that keeps running and answers one JSON line per
request, then runs a spec against it with ``python -m assay``. The programs note what
they did (their pid, the order they answered in) in a file outside their scratch folder,
so the tests can check which process served which call and that none is left running.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import (
    REPO,
    artifact_bytes,
    bundles_by_sample,
    error_line,
    process_gone,
    read_jsonl,
    run_cli,
    simple_spec,
    write_module,
)
from tests.target._persistent import (
    CHATTY,
    ECHO,
    ONCE_HEAD,
    attempts_of,
    error_details,
    logged_pids,
    program_spec,
    sample_list,
)


@pytest.mark.doc(
    "docs/spec.md",
    "`protocol: jsonl` keeps a program running for the whole run instead of starting it per call",
    "Each call writes one line to its stdin",
    "the program answers with one line on stdout",
)
def test_one_process_answers_every_call(tmp_path: Path) -> None:
    spec, log = program_spec(tmp_path, ECHO, sample_list(*(f"q{i}" for i in range(12))))
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "4")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(logged_pids(log)) == 1  # twelve calls, one process
    outputs = {
        sample_id: json.loads(artifact_bytes(run, bundle["artifacts"]["output"]))
        for sample_id, bundle in bundles_by_sample(run).items()
    }
    assert outputs == {f"s{i}": f"q{i}" for i in range(12)}


REQUEST_SHAPE = """
import json, sys

for line in sys.stdin:
    request = json.loads(line)
    with open(sys.argv[1], "a") as log:
        log.write(json.dumps(request) + "\\n")
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""


@pytest.mark.doc(
    "docs/spec.md",
    '`{"id": N, "sample_id", "input", "metadata"}` (`metadata` only when the sample has some)',
)
def test_a_request_holds_the_id_the_sample_id_the_input_and_any_metadata(tmp_path: Path) -> None:
    samples = sample_list("plain", "tagged")
    samples[1]["metadata"] = {"topic": "x"}
    spec, log = program_spec(tmp_path, REQUEST_SHAPE, samples)
    proc = run_cli("run", spec, "-o", tmp_path / "run", "-j", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    requests = sorted(read_jsonl(log), key=lambda r: r["sample_id"])
    assert [sorted(r) for r in requests] == [
        ["id", "input", "sample_id"],
        ["id", "input", "metadata", "sample_id"],
    ]
    assert requests[1]["metadata"] == {"topic": "x"}
    assert "expected" not in json.dumps(requests)
    assert len({r["id"] for r in requests}) == 2


REVERSED = """
import json, sys

held = []
for line in sys.stdin:
    held.append(json.loads(line))
    if len(held) == 3:  # three calls in flight: answer the last first
        held.reverse()
        with open(sys.argv[1], "a") as log:
            log.write(" ".join(str(request["id"]) for request in held) + "\\n")
        for request in held:
            print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
        held = []
"""


@pytest.mark.doc(
    "docs/spec.md",
    "Answers are matched by `id`, so they may come in any order",
    "several calls may be in flight at once (up to `-j`)",
)
def test_answers_out_of_order_go_to_their_own_calls(tmp_path: Path) -> None:
    spec, log = program_spec(tmp_path, REVERSED, sample_list(*(f"q{i}" for i in range(6))))
    proc = run_cli("run", spec, "-o", tmp_path / "run", "-j", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # every answer reached its call
    batches = [[int(n) for n in line.split()] for line in log.read_text().splitlines()]
    assert len(batches) == 2
    assert all(batch == sorted(batch, reverse=True) for batch in batches)  # last first


POOLED = """
import json, os, sys

for line in sys.stdin:
    request = json.loads(line)
    with open(sys.argv[1], "a") as log:
        log.write(f"{os.getpid()} {request['sample_id']}\\n")
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""


@pytest.mark.doc(
    "docs/spec.md",
    "one process, or a pool of `workers: N` (1 to 64, default 1), each call going to the one "
    "with the fewest calls in flight",
)
def test_a_pool_of_two_shares_the_calls(tmp_path: Path) -> None:
    spec, log = program_spec(tmp_path, POOLED, sample_list(*(f"q{i}" for i in range(8))), workers=2)
    proc = run_cli("run", spec, "-o", tmp_path / "run", "-j", "4")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    served = [line.split() for line in log.read_text().splitlines()]
    assert sorted(sample for _, sample in served) == sorted(f"s{i}" for i in range(8))
    assert len({pid for pid, _ in served}) == 2


@pytest.mark.doc(
    "docs/spec.md",
    "What the program writes to stderr while a call is in flight goes with that call's evidence",
)
def test_stderr_goes_with_the_call_it_was_written_for(tmp_path: Path) -> None:
    spec, _ = program_spec(tmp_path, CHATTY, sample_list("a", "b", "c"))
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stderr = {
        sample_id: artifact_bytes(run, bundle["artifacts"]["stderr"]).decode()
        for sample_id, bundle in bundles_by_sample(run).items()
    }
    # one call at a time: each window holds its own line (the start-up line was written
    # before the first call, or while it was in flight: then it is the first call's)
    assert stderr["s1"] == "working on s1\n" and stderr["s2"] == "working on s2\n"
    assert stderr["s0"].endswith("working on s0\n")


STRAYS = """
import json, os, subprocess, sys

child = subprocess.Popen(["sleep", "600"])
daemon = subprocess.Popen(["sleep", "600"], start_new_session=True)  # leaves the group
with open(sys.argv[1], "a") as log:
    log.write(f"{os.getpid()}\\n{child.pid}\\n{daemon.pid}\\n")
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""


@pytest.mark.doc(
    "docs/spec.md",
    "its process group, daemons included, is killed when it fails and when the run ends",
)
def test_no_process_is_left_after_the_run(tmp_path: Path) -> None:
    spec, log = program_spec(tmp_path, STRAYS, sample_list("a", "b"), workers=2)
    proc = run_cli("run", spec, "-o", tmp_path / "run", "-j", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pids = logged_pids(log)
    assert len(pids) == 6  # two programs, each with a child and a daemon
    assert all(process_gone(pid) for pid in pids)


WHERE_AM_I = """
import json, os, resource, sys

sys.argv.pop(1)
for line in sys.stdin:
    request = json.loads(line)
    seen = {"cwd": os.getcwd(), "file": os.path.abspath(__file__), "env": sorted(os.environ),
            "cpu_limit": resource.getrlimit(resource.RLIMIT_CPU)}
    print(json.dumps({"id": request["id"], "output": seen}), flush=True)
"""


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
@pytest.mark.doc(
    "docs/spec.md",
    "The process runs in a scratch folder of its own",
    "with the same environment allow-list, pinned script copy and `sandbox: bwrap` as a "
    "per-call program (under bwrap without the CPU limit: the per-call timeout bounds a hang)",
)
def test_the_program_runs_in_a_scratch_folder_with_the_allowed_environment(
    tmp_path: Path, sandbox: str
) -> None:
    spec, _ = program_spec(tmp_path, WHERE_AM_I, sample_list("a"), sandbox=sandbox)
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, env={"SECRET_TOKEN": "hunter2"})
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the answer is not "a"
    seen = json.loads(artifact_bytes(run, bundles_by_sample(run)["s0"]["artifacts"]["output"]))
    assert "SECRET_TOKEN" not in seen["env"]
    spec_folder = str(tmp_path / "spec")
    assert not seen["cwd"].startswith(spec_folder) and not seen["file"].startswith(spec_folder)
    if sandbox == "bwrap":
        assert (seen["cwd"], seen["file"]) == ("/work", "/program/program.py")
        assert seen["cpu_limit"] == [-1, -1]  # long-lived: no CPU limit, the timeout rules
    else:
        assert Path(seen["cwd"]).name == "work" and "ASSAY_PROCESS_TAG" in seen["env"]
        assert not Path(seen["cwd"]).exists()  # the scratch folder went with the process


CRASH_ON_BOOM = """
import json, os, sys

for line in sys.stdin:
    request = json.loads(line)
    if request["input"] == "boom":
        print("dying", file=sys.stderr, flush=True)
        os._exit(3)
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""


@pytest.mark.doc(
    "docs/spec.md",
    "with the same environment allow-list, pinned script copy and `sandbox: bwrap` as a "
    "per-call program",
)
def test_under_bwrap_a_crash_is_the_programs_exit_and_the_others_still_answer(
    tmp_path: Path,
) -> None:
    spec, _ = program_spec(tmp_path, CRASH_ON_BOOM, sample_list("a", "boom", "c"), sandbox="bwrap")
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "1")
    assert proc.returncode == 3, proc.stdout + proc.stderr  # "boom" blocked: inconclusive
    assert attempts_of(run, "s1") == [("infra_failed", "crashed")] * 2
    assert attempts_of(run, "s2") == [("succeeded", None)]  # on the process started after
    details = error_details(run)
    assert len(details) == 2
    assert all("exited with code 3" in d and "dying" in d for d in details)


STOP_ONCE = (
    ONCE_HEAD
    + """for line in sys.stdin:
    request = json.loads(line)
    if request["input"] == "q2" and not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getppid(), signal.SIGINT)  # Ctrl-C on assay mid-run
        time.sleep(600)
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""
)


@pytest.mark.doc("docs/spec.md", "`assay resume` and `assay verify` treat its runs as any other")
def test_an_interrupted_run_resumes_and_verifies(tmp_path: Path) -> None:
    marker = tmp_path / "stopped"
    samples = sample_list(*(f"q{i}" for i in range(5)))
    spec, log = program_spec(tmp_path, STOP_ONCE, samples, args=[str(marker)])
    run = tmp_path / "run"
    stopped = run_cli("run", spec, "-o", run, "-j", "1")
    assert stopped.returncode == 130, stopped.stdout + stopped.stderr
    (first,) = logged_pids(log)
    assert process_gone(first)  # reaped on the way out too
    assert run_cli("verify", run).returncode == 3  # unfinished
    resumed = run_cli("resume", run)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    verified = run_cli("verify", run)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert all(process_gone(pid) for pid in logged_pids(log))


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ({"script": "program.py", "protocol": "grpc"}, "targets[0].protocol: unknown protocol"),
        ({"script": "program.py", "workers": 2}, "targets[0].workers: only 'protocol: jsonl'"),
        (
            {"script": "program.py", "protocol": "jsonl", "workers": 0},
            "targets[0].workers: a whole number of processes from 1 to 64",
        ),
        (
            {"callable": "answers:echo", "protocol": "jsonl"},
            "targets[0].protocol: only a program",
        ),
    ],
)
@pytest.mark.doc(
    "docs/spec.md",
    "`workers` without `protocol: jsonl`, another `protocol`, or either on a `callable` or "
    "`url` target is refused in one line (exit 2).",
)
def test_bad_protocol_settings_are_refused_in_one_line(
    tmp_path: Path, target: dict[str, Any], message: str
) -> None:
    folder = tmp_path / "spec"
    write_module(folder, "program", ECHO)
    write_module(folder, "answers", "def echo(text):\n    return text\n")
    spec = simple_spec(folder, targets=[{"id": "t", **target}])
    proc = run_cli("run", spec, "-o", tmp_path / "run")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in error_line(proc)
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.doc("docs/spec.md", "Both are left out of `spec.json` when not declared.")
def test_protocol_and_workers_stay_out_of_the_spec_unless_declared(tmp_path: Path) -> None:
    from assay.spec import load_spec

    def frozen_target(**declared: Any) -> dict[str, Any]:
        folder = tmp_path / json.dumps(declared, sort_keys=True).strip("{}").replace('"', "")
        spec, _ = program_spec(folder, ECHO, sample_list("a"), **declared)
        target: dict[str, Any] = json.loads(load_spec(spec).spec.canonical())["targets"][0]
        return target

    per_call = frozen_target(protocol=None)  # as if not written at all
    assert "protocol" not in per_call and "workers" not in per_call
    assert frozen_target()["protocol"] == "jsonl"
    assert frozen_target(workers=3)["workers"] == 3


def _documented_example() -> tuple[str, str]:
    """The example program and target of docs/spec.md's persistent-program section."""
    text = (REPO / "docs" / "spec.md").read_text()
    section = text[text.index("A program that answers each input reversed") :]
    program, target = re.findall(r"```(?:python|yaml)\n(.*?)```", section, re.S)[:2]
    return textwrap.dedent(program), textwrap.dedent(target)


@pytest.mark.doc("docs/spec.md", "A program that answers each input reversed")
def test_the_documented_example_runs(tmp_path: Path) -> None:
    program, target = _documented_example()
    assert len(program.strip().splitlines()) <= 10
    folder = tmp_path / "spec"
    write_module(folder, "reverse", program)
    declared = yaml.safe_load(target)["targets"]
    samples = [{"id": f"s{i}", "input": f"abc{i}", "expected": f"{i}cba"} for i in range(4)]
    spec = simple_spec(folder, samples=samples, targets=declared)
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stderr = artifact_bytes(run, bundles_by_sample(run)["s3"]["artifacts"]["stderr"])
    assert b"working on s3" in stderr
