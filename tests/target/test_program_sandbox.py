"""Program targets under ``sandbox: bwrap``, attacked for real through the CLI.

The unsandboxed program target already runs in a scratch folder with an allow-listed
environment (test_program_isolation.py), but as assay's user, on the host: it reads any
file by its absolute path, reaches the network, and sees and signals assay's process.
Under ``sandbox: bwrap`` each of those attacks is tried again and must fail.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import (
    bundles_by_sample,
    error_line,
    run_cli,
    simple_spec,
    write_module,
)
from tests.sandbox._support import (
    HARNESS_ATTACK,
    accepting_server,
    check_attack_report,
    host_processes_with,
    no_host_process_with,
    sleeper,
)
from tests.target._programs import (
    ONE_SAMPLE,
    N,
    output_json,
    passed_samples,
    program_spec,
    secret_samples,
)


def _one_sample_run(
    tmp_path: Path, source: str, target: dict[str, Any], env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    spec = program_spec(tmp_path / "spec", source, target, gate={}, retry={"max_attempts": 1})
    run = tmp_path / "run"
    return run_cli("run", spec, "-o", run, env=env), run


PROBE = """
import json, os, resource, sys

json.load(sys.stdin)
try:
    open(__file__, "a").write("# rewritten")
    rewrite = "written"
except OSError as exc:
    rewrite = exc.strerror
print(json.dumps({"cwd": os.getcwd(), "listing": os.listdir("."), "file": __file__,
                  "beside": os.listdir(os.path.dirname(__file__)), "uid": os.getuid(),
                  "environ": dict(os.environ), "python": sys.executable, "rewrite": rewrite,
                  "spec_folder_seen": os.path.exists(sys.argv[1]),
                  "cpu_limit": resource.getrlimit(resource.RLIMIT_CPU),
                  "capabilities": [line.split()[1] for line in open("/proc/self/status")
                                   if line.startswith("CapEff:")][0]}))
"""


@pytest.mark.doc(
    "docs/spec.md",
    "`sandbox: bwrap` runs each call inside bubblewrap",
    "the call's `work/` is at `/work` (its working directory, the only folder it can write) "
    "and `program/` read-only at `/program`",
    "the program runs as uid 65534",
    "its environment is `PATH`, `HOME=/work`, `TMPDIR=/tmp`, `LANG` (when assay has it) and "
    "what `env:` names",
    "a `.py` script runs with the system's `/usr/bin/python3`",
)
def test_a_bwrap_target_sees_only_its_work_folder_and_its_script(tmp_path: Path) -> None:
    folder = str(tmp_path / "spec")
    target = {
        "sandbox": "bwrap",
        "args": [folder],
        "env": {"MODE": "fast", "PASSED": None},
        "timeout": 7.5,
    }
    proc, run = _one_sample_run(tmp_path, PROBE, target, env={"PASSED": "yes", "OTHER": "no"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    answer = output_json(run)
    assert (answer["cwd"], answer["listing"], answer["uid"]) == ("/work", [], 65534)
    assert (answer["file"], answer["beside"]) == ("/program/program.py", ["program.py"])
    assert answer["rewrite"] == "Read-only file system"
    assert answer["spec_folder_seen"] is False
    assert answer["python"] == "/usr/bin/python3"
    assert answer["cpu_limit"] == [9, 9]  # the timeout (7.5 s) rounded up, plus one second
    assert answer["capabilities"] == "0000000000000000"
    assert answer["environ"] == {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/work",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "MODE": "fast",
        "PASSED": "yes",
        "PWD": "/work",
    }


ARGV_PROBE = (
    "import json, os, sys; json.load(sys.stdin); print(json.dumps([sys.executable, os.getcwd()]))"
)


@pytest.mark.doc(
    "docs/spec.md",
    "as does `{python}` in an `argv`",
)
def test_an_argv_target_runs_in_bwrap_with_python_as_the_system_s(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    target = {"id": "t", "argv": ["{python}", "-c", ARGV_PROBE], "sandbox": "bwrap"}
    spec = simple_spec(folder, samples=ONE_SAMPLE, targets=[target], gate={})
    proc = run_cli("run", spec, "-o", tmp_path / "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert output_json(tmp_path / "run") == ["/usr/bin/python3", "/work"]


CHEAT = """
import json, sys

sample = json.load(sys.stdin)
try:
    with open(sys.argv[1]) as handle:
        answers = {r["id"]: r["expected"] for r in map(json.loads, handle)}
    print(json.dumps(answers[sample["id"]]))
except OSError:
    print(json.dumps("no idea"))
"""


@pytest.mark.parametrize(("sandbox", "cheats"), [(None, N), ("local", N), ("bwrap", 0)])
@pytest.mark.doc(
    "docs/spec.md",
    "Without `sandbox: bwrap` the program is not isolated (`sandbox: local` says so out loud; "
    "it is the same as leaving `sandbox` out): it runs as assay's user, can read any file "
    "that user can",
    "no host folder but the system's is visible, so the dataset's expected answers are out of "
    "reach even by their absolute path",
)
def test_a_bwrap_target_cannot_read_the_answers_by_their_absolute_path(
    tmp_path: Path, sandbox: str | None, cheats: int
) -> None:
    """Unsandboxed, the cheat passes 20/20 (the attack works); under bwrap, 0."""
    folder = tmp_path / "spec"
    target: dict[str, Any] = {"args": [str(folder / "data.jsonl")]}
    if sandbox:
        target["sandbox"] = sandbox
    spec = program_spec(folder, CHEAT, target, name="cheat", samples=secret_samples())
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run)
    assert proc.returncode == (0 if cheats else 1), proc.stdout + proc.stderr
    assert len(passed_samples(run)) == cheats


CONNECT = """
import json, socket, sys

json.load(sys.stdin)
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10).close()
    print(json.dumps("connected"))
except OSError as exc:
    print(json.dumps(type(exc).__name__))
"""


@pytest.mark.parametrize(
    ("network", "outcome"), [(None, "ConnectionRefusedError"), (True, "connected")]
)
@pytest.mark.doc(
    "docs/spec.md",
    "It has no network (not even the host's `127.0.0.1`) unless the target says `network: true`",
)
def test_a_bwrap_target_has_no_network_unless_it_says_so(
    tmp_path: Path, network: bool | None, outcome: str
) -> None:
    with accepting_server() as (port, _):
        target: dict[str, Any] = {"sandbox": "bwrap", "args": [str(port)]}
        if network is not None:
            target["network"] = network
        proc, run = _one_sample_run(tmp_path, CONNECT, target)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert output_json(run) == outcome


HANG_WITH_A_DAEMON = """
import json, os, subprocess, sys, time

json.load(sys.stdin)
subprocess.Popen(["setsid", *sys.argv[2:]], stdin=subprocess.DEVNULL)
while not os.path.exists("started"):
    time.sleep(0.01)
with __import__("socket").create_connection(("127.0.0.1", int(sys.argv[1]))) as up:
    up.sendall(b"up")
time.sleep(100000)
"""


@pytest.mark.doc(
    "docs/spec.md",
    "a timeout kills bwrap and, with it, every process in the sandbox, daemons included",
)
def test_a_bwrap_target_timeout_kills_the_whole_sandbox(tmp_path: Path) -> None:
    marker = f"assay-target-daemon-{secrets.token_hex(6)}"
    with accepting_server() as (port, received):
        target = {
            "sandbox": "bwrap",
            "network": True,
            "timeout": 5,
            "args": [str(port), *sleeper(marker, "started")],
        }
        proc, run = _one_sample_run(tmp_path, HANG_WITH_A_DAEMON, target)
    assert received == [b"up"], proc.stdout + proc.stderr  # the daemon was running
    assert proc.returncode == 3, proc.stdout + proc.stderr  # the trial is blocked
    (attempt,) = bundles_by_sample(run)["s0"]["attempts"]
    assert (attempt["status"], attempt["reason"]) == ("infra_failed", "timeout")
    assert no_host_process_with(marker), host_processes_with(marker)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            {"script": "answer.py", "sandbox": "docker"},
            "targets[0].sandbox: unknown sandbox 'docker'; a program target takes 'bwrap' or "
            "'local'",
        ),
        (
            {"script": "answer.py", "network": True},
            "targets[0].network: only 'sandbox: bwrap' cuts a program off the network",
        ),
        (
            {"script": "answer.py", "sandbox": "local", "network": False},
            "targets[0].network: only 'sandbox: bwrap' cuts a program off the network",
        ),
        (
            {"callable": "answers:echo", "sandbox": "bwrap"},
            "targets[0].sandbox: only a program ('script' or 'argv') runs in a sandbox",
        ),
    ],
)
@pytest.mark.doc(
    "docs/spec.md",
    "Another `sandbox` value, `network` without `sandbox: bwrap`, or either on a `callable` or "
    "`url` target is refused in one line (exit 2).",
)
def test_a_bad_sandbox_is_refused_in_one_line(
    tmp_path: Path, target: dict[str, Any], message: str
) -> None:
    folder = tmp_path / "spec"
    write_module(folder, "answer", "print('1')\n")
    write_module(folder, "answers", "def echo(text):\n    return text\n")
    spec = simple_spec(folder, targets=[{"id": "t", **target}])
    proc = run_cli("run", spec, "-o", tmp_path / "run")
    assert proc.returncode == 2
    assert message in error_line(proc)
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()


# Runs assay with its own pid in HARNESS_PID (exec keeps the pid), for the attack to aim at.
AS_HARNESS = (
    "import os, sys; os.environ['HARNESS_PID'] = str(os.getpid()); "
    "os.execv(sys.executable, [sys.executable, '-m', 'assay', *sys.argv[1:]])"
)


@pytest.mark.doc(
    "docs/spec.md",
    "nothing of assay's process is in sight: not its environment or command line, not its "
    "pid (to signal), not the run directory",
)
def test_a_bwrap_target_cannot_read_signal_or_find_assay(tmp_path: Path) -> None:
    secret = "sk-fake-" + secrets.token_hex(16)
    run = tmp_path / f"run-{secrets.token_hex(4)}"
    target = {
        "args": ["stdin"],
        "sandbox": "bwrap",
        "env": {"HARNESS_PID": None, "RUN_DIR": str(run)},
    }
    spec = program_spec(tmp_path / "spec", HARNESS_ATTACK, target, name="attack", gate={})
    harness = subprocess.Popen(
        [sys.executable, "-c", AS_HARNESS, "run", str(spec), "-o", str(run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": secret, "LANG": "C.UTF-8"},
    )
    stdout, stderr = harness.communicate(timeout=300)
    assert harness.returncode == 0, stdout + stderr  # neither killed nor stopped
    report = output_json(run)
    assert f"{harness.pid}/SIGKILL" in report["signals"]  # aimed at assay's real pid
    check_attack_report(report, harness.pid, secret)
    assert not (run / "planted").exists()
    for file in (p for p in run.rglob("*") if p.is_file()):
        assert secret.encode() not in file.read_bytes(), file


@pytest.mark.doc(
    "docs/spec.md",
    "`sandbox` and `network` are left out of `spec.json` when not declared, so older specs "
    "keep their digests.",
)
def test_sandbox_stays_out_of_specs_that_do_not_declare_it(tmp_path: Path) -> None:
    from assay.spec import load_spec

    def frozen(name: str, **isolation: Any) -> tuple[str, dict[str, Any]]:
        folder = tmp_path / name
        write_module(folder, "answer", "print('1')\n")
        targets = [{"id": "t", "script": "answer.py", **isolation}]
        loaded = load_spec(simple_spec(folder, targets=targets))
        return loaded.spec.digest, json.loads(loaded.spec.canonical())["targets"][0]

    plain, target = frozen("plain")
    assert "sandbox" not in target and "network" not in target
    bwrap, target = frozen("bwrap", sandbox="bwrap")
    assert bwrap != plain and target["sandbox"] == "bwrap" and "network" not in target
    networked, target = frozen("networked", sandbox="bwrap", network=True)
    assert networked not in (plain, bwrap) and target["network"] is True
    assert frozen("local", sandbox="local")[0] not in (plain, bwrap)


def _bwrap_target(tmp_path: Path, source: str) -> Any:
    from assay.spec import load_spec
    from assay.target import build_target

    folder = tmp_path / "spec"
    write_module(folder, "program", source)
    targets = [{"id": "t", "script": "program.py", "sandbox": "bwrap"}]
    loaded = load_spec(simple_spec(folder, targets=targets))
    return build_target(loaded.spec.targets[0], loaded.root)


ANSWER = "import json, sys; print(json.dumps(json.load(sys.stdin)['input']))\n"
FAKES_A_BWRAP_ERROR = (
    "import sys; sys.stderr.write('bwrap: Creating new namespace failed\\n'); sys.exit(1)\n"
)


@pytest.mark.doc(
    "docs/spec.md",
    "When bwrap fails before the program starts (a host without user namespaces, say), the "
    "call is an infrastructure failure naming bwrap's error, never the program's failure",
)
def test_bwrap_failing_before_the_program_runs_is_an_infrastructure_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: bwrap's own failure (here a bind whose source is missing, as a host without
    user namespaces fails) was the program's 'exited with code 1', scored failed."""
    import anyio

    from assay.dataset import Sample
    from assay.target import InfrastructureError
    from assay.target._isolated import IsolatedProgram

    target = _bwrap_target(tmp_path, ANSWER)
    sample = Sample(input=7, target=7, id="s0")
    assert anyio.run(target.call, sample).value == 7  # it works as built
    launch = IsolatedProgram.launch

    def with_a_missing_bind(self: IsolatedProgram, scratch: Path) -> Any:
        broken = launch(self, scratch)
        broken.options += ["--ro-bind", "/nonexistent-assay-source", "/x"]
        return broken

    monkeypatch.setattr(IsolatedProgram, "launch", with_a_missing_bind)
    with pytest.raises(InfrastructureError) as caught:
        anyio.run(target.call, sample)
    assert caught.value.reason == "failed_to_start"
    assert caught.value.detail == (
        "the sandbox could not start: bwrap: Can't find source path "
        "/nonexistent-assay-source: No such file or directory"
    )


@pytest.mark.doc("docs/spec.md", "bwrap's status pipe tells, which the program cannot write to.")
def test_a_program_faking_a_bwrap_error_is_still_its_own_failure(tmp_path: Path) -> None:
    """bwrap's status pipe, not stderr, tells: a program cannot pass its failure off as
    the sandbox's (an infrastructure error is retried and blocks the trial, not failed)."""
    import anyio

    from assay.dataset import Sample

    outcome = anyio.run(_bwrap_target(tmp_path, FAKES_A_BWRAP_ERROR).call, Sample(input=1, id="s0"))
    assert (outcome.kind, outcome.failure, outcome.exit_code) == (
        "product_failure",
        "exited with code 1",
        1,
    )


FLOODS_STDERR = (
    "import sys, time; sys.stderr.write('x' * 200_000); sys.stderr.flush(); time.sleep(60)\n"
)


def test_a_bwrap_program_killed_for_flooding_stderr_is_its_own_failure(tmp_path: Path) -> None:
    """Killed for its output, bwrap has no exit code to report: that is still the
    program's failure, not the sandbox's (which would be retried, then block the trial)."""
    import anyio

    from assay.dataset import Sample

    outcome = anyio.run(_bwrap_target(tmp_path, FLOODS_STDERR).call, Sample(input=1, id="s0"))
    assert (outcome.kind, outcome.exit_code) == ("product_failure", -9)  # killed by assay


@pytest.mark.doc(
    "docs/spec.md",
    "A missing `bwrap` is a one-line error naming the package to install (exit 2), never a "
    "fallback to running the program unisolated.",
)
def test_a_bwrap_target_without_bubblewrap_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never a silent fallback to running the program unisolated."""
    from assay.errors import EXIT_CONFIG, ConfigError

    monkeypatch.setattr("assay.target._isolated.BWRAP", "/nonexistent/bwrap")
    with pytest.raises(ConfigError) as caught:
        _bwrap_target(tmp_path, ANSWER)
    assert caught.value.exit_code == EXIT_CONFIG
    line = str(caught.value)
    assert "\n" not in line and "/nonexistent/bwrap" in line
    assert "apt-get install bubblewrap" in line
