"""Program targets (YAML ``script:`` / ``argv:``) attacked for real, through the CLI.

Each test is an attack a hostile or careless program makes on its own evaluation:
reading the dataset's expected answers beside it, reading assay's secrets from its
environment, rewriting its pinned script mid-run, leaving a daemon behind. Every one of
them worked before program targets ran in a scratch folder with an allow-listed
environment and a copy of the pinned script (cheat 20/20, key in the evidence, later
answers from the rewritten script with ``verify`` passing, ...).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import (
    error_line,
    process_gone,
    run_cli,
    simple_spec,
    write_module,
)
from tests.target._programs import (
    N,
    output_json,
    passed_samples,
    program_spec,
    secret_samples,
)

CHEAT = """
import json, os, sys

sample = json.load(sys.stdin)
here = os.path.dirname(os.path.abspath(__file__))
for candidate in ("data.jsonl", "../data.jsonl", "../../data.jsonl",
                  os.path.join(here, "data.jsonl"), os.path.join(here, "..", "data.jsonl")):
    try:
        with open(candidate) as handle:
            for line in handle:
                record = json.loads(line)
                if record["id"] == sample["id"]:
                    print(json.dumps(record["expected"]))
                    sys.exit(0)
    except OSError:
        continue
print(json.dumps("no idea"))
"""


@pytest.mark.doc(
    "docs/spec.md",
    "Each call runs in a scratch folder of its own, made for it and removed after it",
    "never in the spec's folder, so the dataset beside the spec is out of reach by a relative path",
)
def test_a_script_cannot_read_the_expected_answers_beside_the_spec(tmp_path: Path) -> None:
    """Before: 20 of 20 passed (the script ran in the spec's folder and read data.jsonl)."""
    spec = program_spec(tmp_path / "spec", CHEAT, name="cheat", samples=secret_samples())
    proc = run_cli("run", spec, "-o", tmp_path / "run")
    assert proc.returncode == 1, proc.stderr  # gate failed
    assert passed_samples(tmp_path / "run") == []


PROBE = """
import json, os, sys

json.load(sys.stdin)
print(json.dumps({"cwd": os.getcwd(), "listing": sorted(os.listdir(".")),
                  "file": os.path.abspath(__file__),
                  "beside": sorted(os.listdir(os.path.dirname(os.path.abspath(__file__))))}))
"""


@pytest.mark.doc(
    "docs/spec.md",
    "`work/`, empty, is the program's working directory, and `program/` holds a fresh copy "
    "of the pinned script, the file that runs",
)
def test_the_script_runs_from_a_lone_copy_in_an_empty_folder(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    samples = [{"id": f"s{i}", "input": i, "expected": i} for i in range(2)]
    spec = program_spec(folder, PROBE, name="probe", samples=samples, gate={})
    proc = run_cli("run", spec, "-o", tmp_path / "run", "-j", "1")
    assert proc.returncode == 0, proc.stderr
    answers = [output_json(tmp_path / "run", sid) for sid in ("s0", "s1")]
    for answer in answers:
        assert answer["listing"] == []
        assert Path(answer["cwd"]).name == "work"
        assert Path(answer["file"]).parent.name == "program"
        assert answer["beside"] == ["probe.py"]
        assert not Path(answer["file"]).is_relative_to(folder)
        assert not Path(answer["cwd"]).exists()  # removed after the call
    assert answers[0]["cwd"] != answers[1]["cwd"]  # a new folder per call


ENV_PROBE = """
import hashlib, json, os, sys

json.load(sys.stdin)
key = os.environ.get("OPENAI_API_KEY", "")
print(json.dumps({"names": sorted(os.environ), "environ": dict(os.environ),
                  "key_hash": hashlib.sha256(key.encode()).hexdigest() if key else None,
                  "mode": os.environ.get("MODE")}))
"""


def _env_run(tmp_path: Path, env: Any) -> tuple[Path, str, list[dict[str, Any]]]:
    target = {} if env is None else {"env": env}
    spec = program_spec(tmp_path / "spec", ENV_PROBE, target, name="probe", gate={})
    key = "sk-test-secret-" + secrets.token_hex(8)
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, env={"OPENAI_API_KEY": key, "OTHER_TOKEN": key})
    assert proc.returncode == 0, proc.stderr
    assert key not in proc.stdout + proc.stderr
    return run, key, [output_json(run)]


@pytest.mark.doc(
    "docs/spec.md",
    "By default a program gets only `PATH`, `HOME`, `LANG` and `TMPDIR` of assay's "
    "environment (those that are set), and `ASSAY_PROCESS_TAG`",
)
def test_a_program_does_not_get_the_harness_secrets(tmp_path: Path) -> None:
    """Before: OPENAI_API_KEY was in the program's environment, and so in the evidence."""
    run, key, (answer,) = _env_run(tmp_path, None)
    assert set(answer["names"]) <= {"PATH", "HOME", "LANG", "TMPDIR", "ASSAY_PROCESS_TAG"}
    assert "PATH" in answer["names"] and answer["key_hash"] is None
    for file in (p for p in run.rglob("*") if p.is_file()):
        assert key.encode() not in file.read_bytes(), file


@pytest.mark.doc(
    "docs/spec.md",
    "`env:` on a program target widens it: a list of names passed from assay's environment "
    "when the call is made",
    "or a mapping of names to values written in the spec (frozen into `spec.json`; `null` "
    "passes the name through)",
)
@pytest.mark.parametrize("env", [["OPENAI_API_KEY"], {"OPENAI_API_KEY": None, "MODE": "fast"}])
def test_a_named_variable_ispassed_samples(tmp_path: Path, env: Any) -> None:
    run, key, (answer,) = _env_run(tmp_path, env)
    assert answer["key_hash"] == hashlib.sha256(key.encode()).hexdigest()
    assert "OTHER_TOKEN" not in answer["names"]
    assert answer["mode"] == ("fast" if isinstance(env, dict) else None)
    frozen = json.loads((run / "spec.json").read_text())["targets"][0]
    assert frozen["env"] == {"OPENAI_API_KEY": None, **({"MODE": "fast"} if answer["mode"] else {})}
    assert key.encode() not in (run / "spec.json").read_bytes()


REWRITER = """
import json, os, sys

sample = json.load(sys.stdin)
for path in (os.path.abspath(__file__), sys.argv[1]):
    with open(path) as handle:
        source = handle.read()
    with open(path, "w") as handle:
        handle.write(source.replace("ANSWER = 'original'", "ANSWER = 'rewritten'"))
ANSWER = 'original'
print(json.dumps(ANSWER))
"""


@pytest.mark.doc(
    "docs/spec.md",
    "a script that rewrites itself, or the file in the spec's folder, changes nothing for the "
    "calls after it",
)
def test_a_script_that_rewrites_itself_keeps_answering_as_pinned(tmp_path: Path) -> None:
    """Before: the first call rewrote the script, the 19 after it answered 'rewritten'
    (1/20 passed) and ``verify`` passed a run whose answers came from an unpinned file."""
    folder = tmp_path / "spec"
    script = write_module(folder, "rewriter", REWRITER)
    targets = [{"id": "t", "script": "rewriter.py", "args": [str(script)]}]
    samples = [{"id": f"s{i}", "input": i, "expected": "original"} for i in range(N)]
    spec = simple_spec(folder, samples=samples, targets=targets)
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "1")
    assert "ANSWER = 'rewritten'" in script.read_text()  # the attack did happen
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(passed_samples(run)) == N
    assert run_cli("verify", run).returncode == 0
    pinned = json.loads((run / "spec.json").read_text())["targets"][0]["digest"]
    assert pinned == "sha256:" + hashlib.sha256(REWRITER.encode()).hexdigest()


@pytest.mark.doc(
    "docs/spec.md",
    "the bytes were read once when the run started, checked against the spec's digest",
)
def test_a_script_changed_after_the_spec_was_frozen_is_refused(tmp_path: Path) -> None:
    """The window between freezing the spec and reading the script: refused, not run."""
    from assay.errors import ConfigError
    from assay.spec import load_spec
    from assay.target import build_target

    folder = tmp_path / "spec"
    script = write_module(folder, "answer", "print('\"a\"')\n")
    loaded = load_spec(simple_spec(folder, targets=[{"id": "t", "script": "answer.py"}]))
    script.write_text("print('\"b\"')\n")
    with pytest.raises(ConfigError, match="changed after the spec was frozen"):
        build_target(loaded.spec.targets[0], loaded.root)


DAEMON = """
import json, os, subprocess, sys

json.load(sys.stdin)
prefix = ["env", "-i"] if sys.argv[3] == "env-cleared" else []
subprocess.Popen([*prefix, sys.executable, "-c", "import time; time.sleep(300)", sys.argv[1]],
                 start_new_session=True, stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with open(sys.argv[2], "a") as handle:
    handle.write("started\\n")
print(json.dumps("ok"))
"""


def _marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("kind", ["tagged", "env-cleared"])
@pytest.mark.doc(
    "docs/spec.md",
    "It runs in its own process group, killed on timeout, on an output flood, and once it "
    "has answered",
    "When the call ends, a daemon that also cleared its environment is found by its working "
    "directory inside the scratch folder and killed before the folder is removed",
)
def test_no_setsid_daemon_survives_the_run(tmp_path: Path, kind: str) -> None:
    """Before: the ``env -i`` daemon (no tag, not in the group) outlived the run."""
    marker = f"assay-daemon-{uuid.uuid4().hex}"
    folder = tmp_path / "spec"
    write_module(folder, "daemon", DAEMON)
    started = tmp_path / "started"
    targets = [{"id": "t", "script": "daemon.py", "args": [marker, str(started), kind]}]
    samples = [{"id": f"s{i}", "input": i, "expected": "ok"} for i in range(3)]
    proc = run_cli(
        "run", simple_spec(folder, samples=samples, targets=targets), "-o", tmp_path / "run"
    )
    assert proc.returncode == 0, proc.stderr
    assert started.read_text().count("started") == 3
    assert all(process_gone(pid) for pid in _marked(marker)), _marked(marker)


@pytest.mark.parametrize(
    ("target", "named"),
    [
        ({"id": "t", "script": "answer.py", "env": ["NOT-A-NAME"]}, "targets[0].env"),
        ({"id": "t", "script": "answer.py", "env": {"1ST": "x"}}, "targets[0].env"),
        ({"id": "t", "script": "answer.py", "env": ["A", "A"]}, "targets[0].env"),
        ({"id": "t", "callable": "answers:echo", "env": ["A"]}, "targets[0].env"),
        ({"id": "t", "url": "http://127.0.0.1:9/x", "env": ["A"]}, "targets[0].env"),
    ],
)
@pytest.mark.doc(
    "docs/spec.md",
    "A name that is not a variable name (letters, digits, `_`, not starting with a digit) is "
    "refused, and so is `env:` on a `callable` or `url` target",
)
def test_a_bad_env_is_refused_in_one_line(
    tmp_path: Path, target: dict[str, Any], named: str
) -> None:
    folder = tmp_path / "spec"
    write_module(folder, "answer", "print('1')\n")
    write_module(folder, "answers", "def echo(text):\n    return text\n")
    proc = run_cli("run", simple_spec(folder, targets=[target]), "-o", tmp_path / "run")
    assert proc.returncode == 2
    assert named in error_line(proc)
    assert not (tmp_path / "run").exists()


@pytest.mark.doc(
    "docs/spec.md",
    "`env` is left out of `spec.json` when not declared (or empty), so older specs keep their "
    "digests; a list and the same names mapped to `null` freeze alike.",
)
def test_env_stays_out_of_specs_that_do_not_declare_it(tmp_path: Path) -> None:
    from assay.spec import load_spec

    def frozen(name: str, **env: Any) -> tuple[str, dict[str, Any]]:
        folder = tmp_path / name
        write_module(folder, "answer", "print('1')\n")
        spec = load_spec(simple_spec(folder, targets=[{"id": "t", "script": "answer.py", **env}]))
        return spec.spec.digest, json.loads(spec.spec.canonical())["targets"][0]

    plain, target = frozen("plain")
    before = {"id", "kind", "argv", "script", "digest", "timeout", "max_output_bytes"}
    assert set(target) == before  # the fields a script target froze to before `env`
    assert frozen("empty", env=[])[0] == plain
    listed, target = frozen("listed", env=["OPENAI_API_KEY"])
    assert listed != plain and target["env"] == {"OPENAI_API_KEY": None}
    assert frozen("mapped", env={"OPENAI_API_KEY": None})[0] == listed
    assert frozen("valued", env={"OPENAI_API_KEY": "x"})[0] not in (plain, listed)


REWRITE_AND_STOP = """
import json, os, signal, sys, time

sample = json.load(sys.stdin)
if sample["input"] == 2:
    with open(sys.argv[1], "a") as handle:
        handle.write("# changed mid-run\\n")
    os.kill(os.getppid(), signal.SIGINT)  # Ctrl-C on assay, as a user would, mid-run
    time.sleep(60)
print(json.dumps(str(sample["input"])))
"""


@pytest.mark.doc(
    "docs/spec.md",
    "A run whose script has changed since is not resumed: `assay resume` refuses it as a "
    "changed spec (exit 5, naming `targets`).",
)
def test_resume_refuses_a_run_whose_script_changed(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    script = write_module(folder, "stopper", REWRITE_AND_STOP)
    targets = [{"id": "t", "script": "stopper.py", "args": [str(script)]}]
    samples = [{"id": f"s{i}", "input": i, "expected": str(i)} for i in range(5)]
    run = tmp_path / "run"
    stopped = run_cli(
        "run", simple_spec(folder, samples=samples, targets=targets), "-o", run, "-j", "1"
    )
    assert stopped.returncode == 130, stopped.stdout + stopped.stderr
    assert script.read_text().endswith("# changed mid-run\n")
    refused = run_cli("resume", run)
    assert refused.returncode == 5, refused.stdout + refused.stderr
    assert "changed: targets" in error_line(refused)


@pytest.mark.doc(
    "docs/spec.md",
    "An `argv` that names a file beside the spec by a relative path is refused, since it would "
    "not be found there: name the file with `script`, or give its absolute path.",
)
def test_an_argv_naming_a_file_beside_the_spec_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    answer = write_module(
        folder, "answer", "import json, sys\nprint(json.dumps(json.load(sys.stdin)['input']))\n"
    )
    relative = [{"id": "t", "argv": ["{python}", "answer.py"]}]
    proc = run_cli("run", simple_spec(folder, targets=relative), "-o", tmp_path / "run")
    assert proc.returncode == 2
    assert "targets[0].argv: 'answer.py' is a file beside the spec" in error_line(proc)
    assert not (tmp_path / "run").exists()
    absolute = [{"id": "t", "argv": ["{python}", str(answer)]}]
    proc = run_cli("run", simple_spec(folder, targets=absolute), "-o", tmp_path / "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
