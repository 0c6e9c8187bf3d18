"""Plugins from a real installed distribution (a ``.dist-info`` folder with its
``entry_points.txt``, on the ``sys.path`` of the real CLI in a subprocess): a provider,
hooks, scorers and solvers found by name, loaded only when asked for; a hook that raises
is one line on stderr and leaves the evidence as it would have been."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import error_line, read_jsonl, run_cli

PLUGIN = '''
import json
import os
from pathlib import Path

from assay import Sample, Task, generate, match, scorer, solver, task
from assay.hooks import Hooks
from assay.model import ModelOutput

Path(os.environ["PLUGIN_IMPORTED"]).write_text("imported")


class ShoutAPI:
    """A provider: answers the prompt in capitals."""

    def __init__(self, name, config, answer=None):
        self.name = f"shout/{name}"
        self.answer = answer

    async def generate(self, messages, tools, config):
        if self.answer == "raise":
            raise RuntimeError("the shouting failed")
        answer = self.answer or messages[-1].content.upper()
        return ModelOutput.from_content(self.name, answer)


def shout_provider(name, config, answer=None):
    return ShoutAPI(name, config, answer)


def record(event, data):
    with open(os.environ["HOOK_LOG"], "a") as log:
        from msgspec import to_builtins

        log.write(json.dumps({"event": event, **to_builtins(data)}) + "\\n")


class AuditHooks(Hooks):
    async def on_run_start(self, data):
        record("on_run_start", data)

    async def on_sample_start(self, data):
        record("on_sample_start", data)

    def on_sample_end(self, data):  # a plain method works too
        record("on_sample_end", data)

    async def on_run_end(self, data):
        record("on_run_end", data)


class ClearHooks(Hooks):
    async def on_sample_end(self, data):
        data.scores.clear()  # called before AuditHooks (by name): its copy is its own


class BoomHooks(Hooks):
    async def on_run_start(self, data):
        raise RuntimeError("boom at start")

    async def on_sample_end(self, data):
        data.scores.clear()  # a payload is a copy: this changes nothing recorded
        raise ValueError("boom")

    async def on_run_end(self, data):
        raise RuntimeError("boom at end")


@scorer(metrics=[])
def loud():
    async def score(state, target):
        from assay import Score
        return Score(value="C" if state.output.completion.isupper() else "I")
    return score


@solver
def exclaim():
    async def solve(state, generate):
        state.user_prompt.text = state.user_prompt.text + "!"
        return state
    return solve


@task
def shouting():
    return Task(
        dataset=[Sample(input="hello", target="HELLO"), Sample(input="bye", target="BYE")],
        solver=generate(),
        scorer=match(),
    )
'''


def install_plugin(folder: Path, entry_points: dict[str, dict[str, str]]) -> Path:
    """A distribution ``assay-plug`` installed into *folder* as pip lays one out: the
    module, and a ``.dist-info`` with METADATA and the *entry_points* by group."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "assay_plug.py").write_text(PLUGIN)
    dist = folder / "assay_plug-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: assay-plug\nVersion: 1.0\n")
    groups = [
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in names.items())
        for group, names in entry_points.items()
    ]
    (dist / "entry_points.txt").write_text("\n".join(groups))
    return folder


def plugin_env(site: Path, tmp_path: Path) -> dict[str, str]:
    """The subprocess environment: *site* on its path, the hook log and import marker."""
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    return {
        "PYTHONPATH": path,
        "HOOK_LOG": str(tmp_path / "hooks.jsonl"),
        "PLUGIN_IMPORTED": str(tmp_path / "imported"),
    }


def task_file(tmp_path: Path) -> Path:
    """A task file that imports nothing of the plugin (the provider comes by name)."""
    path = tmp_path / "tasks.py"
    path.write_text(
        textwrap.dedent(
            """
            from assay import Sample, Task, generate, match, task

            @task
            def shouting():
                return Task(
                    dataset=[
                        Sample(input="hello", target="HELLO"),
                        Sample(input="bye", target="BYE"),
                    ],
                    solver=generate(),
                    scorer=match(),
                )
            """
        )
    )
    return path


def run_task(tmp_path: Path, env: dict[str, str], *args: str, model: str = "shout/any") -> Any:
    return run_cli(
        "run", task_file(tmp_path), "--model", model, "-o", tmp_path / "run", *args, env=env
    )


def python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
        check=False,
    )


@pytest.mark.doc(
    "docs/cli.md",
    "an installed package may add model providers, scorers, solvers, sandboxes and"
    " hooks through entry points",
)
def test_a_provider_from_an_installed_package_answers_a_run_by_its_name(tmp_path: Path) -> None:
    site = install_plugin(
        tmp_path / "site", {"assay.providers": {"shout": "assay_plug:shout_provider"}}
    )
    proc = run_task(tmp_path, plugin_env(site, tmp_path))
    assert proc.returncode == 0, proc.stderr
    scores = read_jsonl(tmp_path / "run" / "scores.jsonl")
    assert sorted(s["status"] for s in scores) == ["passed", "passed"]


def test_provider_arguments_reach_the_plugins_factory(tmp_path: Path) -> None:
    site = install_plugin(
        tmp_path / "site", {"assay.providers": {"shout": "assay_plug:shout_provider"}}
    )
    proc = run_task(tmp_path, plugin_env(site, tmp_path), "-M", "answer=whisper")
    assert proc.returncode == 0, proc.stderr  # a Python task without a minimum: ungated
    scores = read_jsonl(tmp_path / "run" / "scores.jsonl")
    assert sorted(s["status"] for s in scores) == ["failed", "failed"]


def test_nothing_is_imported_from_a_plugin_until_its_name_is_asked_for(tmp_path: Path) -> None:
    site = install_plugin(
        tmp_path / "site", {"assay.providers": {"shout": "assay_plug:shout_provider"}}
    )
    env = plugin_env(site, tmp_path)
    marker = Path(env["PLUGIN_IMPORTED"])
    proc = python(
        "import sys\n"
        "before = 'importlib.metadata' in sys.modules\n"
        "import assay\n"
        "from assay.model import get_model\n"
        "get_model('mock/x')\n"
        "print('importlib.metadata' in sys.modules and not before)",
        env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"  # no entry point was even read
    assert not marker.exists()
    proc = python("from assay.model import get_model; print(get_model('shout/x').name)", env)
    assert proc.stdout.strip() == "shout/x", proc.stderr
    assert marker.exists()


@pytest.mark.doc(
    "docs/cli.md", "A plugin that fails to load is one line naming it and its entry point (exit 2)."
)
def test_a_plugin_that_fails_to_load_is_one_line_naming_it_exit_2(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site", {"assay.providers": {"shout": "assay_missing:nope"}})
    proc = run_task(tmp_path, plugin_env(site, tmp_path))
    assert proc.returncode == 2
    line = error_line(proc)
    assert "plugin 'shout' (assay_missing:nope, entry point group assay.providers)" in line
    assert "ModuleNotFoundError" in line


def test_an_unknown_provider_lists_the_installed_ones(tmp_path: Path) -> None:
    site = install_plugin(
        tmp_path / "site", {"assay.providers": {"shout": "assay_plug:shout_provider"}}
    )
    proc = run_task(tmp_path, plugin_env(site, tmp_path), model="nosuch/x")
    assert proc.returncode == 2
    known = error_line(proc).partition("(known: ")[2].partition(")")[0]
    services = ["deepseek", "fireworks", "grok", "groq", "moonshot", "ollama", "openai-api"]
    services += ["openrouter", "perplexity", "sambanova", "sglang", "together", "vllm"]
    builtin = ["anthropic", "google", "local", "mock", "mockllm", "openai", *services]
    assert known.split(", ") == sorted([*builtin, "shout"])


def hook_events(tmp_path: Path) -> list[dict[str, Any]]:
    return read_jsonl(tmp_path / "hooks.jsonl")


@pytest.mark.doc(
    "docs/cli.md",
    "an installed package may add model providers, scorers, solvers, sandboxes and"
    " hooks through entry points",
)
def test_hooks_hear_the_run_start_each_sample_and_the_end_with_their_payloads(
    tmp_path: Path,
) -> None:
    site = install_plugin(
        tmp_path / "site",
        {
            "assay.providers": {"shout": "assay_plug:shout_provider"},
            "assay.hooks": {"audit": "assay_plug:AuditHooks", "aaa": "assay_plug:ClearHooks"},
        },
    )
    proc = run_task(tmp_path, plugin_env(site, tmp_path))
    assert proc.returncode == 0, proc.stderr
    events = hook_events(tmp_path)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "on_run_start" and kinds[-1] == "on_run_end"
    assert sorted(kinds[1:-1]) == ["on_sample_end"] * 2 + ["on_sample_start"] * 2
    run = tmp_path / "run"
    manifest = json.loads((run / "manifest.json").read_text())
    start, end = events[0], events[-1]
    assert start == {
        "event": "on_run_start",
        "evaluation": manifest["evaluation"],
        "spec_digest": manifest["spec_digest"],
        "planned": 2,
        "path": str(run),
        "resumed": False,
    }
    assert end == {
        "event": "on_run_end",
        "evaluation": manifest["evaluation"],
        "path": str(run),
        "status": "complete",
        "gate": "ungated",
        "error": None,
    }
    scores = {s["trial_id"]: s for s in read_jsonl(run / "scores.jsonl")}
    bundles = {b["trial"]["trial_id"]: b for b in read_jsonl(run / "bundles.jsonl")}
    for ended in (e for e in events if e["event"] == "on_sample_end"):
        trial = bundles[ended["trial_id"]]["trial"]
        recorded = scores[ended["trial_id"]]
        assert (ended["sample_id"], ended["target_id"], ended["epoch"]) == (
            trial["sample_id"],
            trial["target_id"],
            trial["repetition"],
        )
        assert ended["state"] == bundles[ended["trial_id"]]["state"]
        assert ended["scores"] == {
            recorded["scorer_id"]: {"status": recorded["status"], "value": recorded["value"]}
        }


@pytest.mark.doc(
    "docs/cli.md",
    "A hook that raises is one line on stderr naming it and the event; the run goes on, its"
    " evidence and exit code as they would be without the hook.",
)
def test_a_hook_that_raises_is_one_line_each_time_and_the_evidence_is_unchanged(
    tmp_path: Path,
) -> None:
    providers = {"shout": "assay_plug:shout_provider"}
    plain = install_plugin(tmp_path / "plain", {"assay.providers": providers})
    boom = install_plugin(
        tmp_path / "boom",
        {"assay.providers": providers, "assay.hooks": {"boom": "assay_plug:BoomHooks"}},
    )
    without = run_cli(
        "run", task_file(tmp_path), "--model", "shout/any", "-o", tmp_path / "without",
        env=plugin_env(plain, tmp_path),
    )  # fmt: skip
    proc = run_cli(
        "run", task_file(tmp_path), "--model", "shout/any", "-o", tmp_path / "with",
        env=plugin_env(boom, tmp_path),
    )  # fmt: skip
    assert (proc.returncode, without.returncode) == (0, 0), proc.stderr
    assert "Traceback" not in proc.stderr
    failures = [line for line in proc.stderr.splitlines() if line.startswith("hook 'boom'")]
    assert failures == [
        "hook 'boom' failed in on_run_start: RuntimeError: boom at start"
        " (the run goes on; its evidence is unaffected)",
        *["hook 'boom' failed in on_sample_end: ValueError: boom"
          " (the run goes on; its evidence is unaffected)"] * 2,
        "hook 'boom' failed in on_run_end: RuntimeError: boom at end"
        " (the run goes on; its evidence is unaffected)",
    ]  # fmt: skip
    assert run_cli("verify", tmp_path / "with").returncode == 0

    def recorded(run: Path) -> list[tuple[str, str, Any]]:
        return sorted(
            (s["trial_id"], s["status"], s["value"]) for s in read_jsonl(run / "scores.jsonl")
        )

    assert recorded(tmp_path / "with") == recorded(tmp_path / "without")
    assert len(recorded(tmp_path / "with")) == 2


def test_a_run_refused_before_it_starts_tells_hooks_nothing(tmp_path: Path) -> None:
    site = install_plugin(
        tmp_path / "site",
        {
            "assay.providers": {"shout": "assay_missing:nope"},
            "assay.hooks": {"audit": "assay_plug:AuditHooks"},
        },
    )
    proc = run_task(tmp_path, plugin_env(site, tmp_path))
    assert proc.returncode == 2  # the provider fails before any run starts: no hook event
    assert not (tmp_path / "hooks.jsonl").exists()


@pytest.mark.parametrize(
    ("kind", "group", "name", "value"),
    [
        ("scorer", "assay.scorers", "loud", "assay_plug:loud"),
        ("solver", "assay.solvers", "exclaim", "assay_plug:exclaim"),
    ],
)
@pytest.mark.doc(
    "docs/cli.md",
    "an installed package may add model providers, scorers, solvers, sandboxes and"
    " hooks through entry points",
)
def test_scorers_and_solvers_are_found_by_name_in_their_groups(
    tmp_path: Path, kind: str, group: str, name: str, value: str
) -> None:
    site = install_plugin(tmp_path / "site", {group: {name: value}})
    env = plugin_env(site, tmp_path)
    proc = python(
        "from assay._registry import lookup, registry_info\n"
        f"factory = lookup({kind!r}, {name!r})\n"
        "info = registry_info(factory())\n"
        "print(info.kind, info.name)\n"
        f"print(lookup({kind!r}, 'absent'))",
        env,
    )
    assert proc.stdout.split("\n")[:2] == [f"{kind} {name}", "None"], proc.stderr


def test_hooks_hear_a_stopped_run_end_after_its_evidence_is_sealed(tmp_path: Path) -> None:
    site = install_plugin(
        tmp_path / "site",
        {
            "assay.providers": {"shout": "assay_plug:shout_provider"},
            "assay.hooks": {"audit": "assay_plug:AuditHooks"},
        },
    )
    proc = run_task(tmp_path, plugin_env(site, tmp_path), "-M", "answer=raise")
    assert proc.returncode == 5, proc.stderr  # errors past fail_on_error: the run stopped
    end = hook_events(tmp_path)[-1]
    assert (end["event"], end["status"], end["gate"]) == ("on_run_end", "stopped", "stopped")
    assert "RuntimeError: the shouting failed" in end["error"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] != "running"  # sealed before the hook heard of the end


INLINE_HOOK = """
import json
import os

from assay import Sample, Task, generate, match, task
from assay.hooks import Hooks, SampleEnd, hooks


@hooks("inline", description="registered in code, not installed")
class Inline(Hooks):
    def enabled(self) -> bool:
        return os.environ.get("INLINE_HOOK") == "on"

    def on_sample_end(self, data: SampleEnd) -> None:
        with open(os.environ["HOOK_LOG"], "a") as log:
            log.write(json.dumps({"trial": data.trial_id, "state": data.state}) + "\\n")


@task
def one():
    return Task(dataset=[Sample(input="a", target="a")], solver=generate(), scorer=match())
"""


@pytest.mark.parametrize("switch", ["on", "off"])
def test_a_hook_registered_in_code_runs_when_it_says_it_is_enabled(
    tmp_path: Path, switch: str
) -> None:
    (tmp_path / "inline.py").write_text(INLINE_HOOK)
    log = tmp_path / "hooks.jsonl"
    proc = run_cli(
        "run", tmp_path / "inline.py", "--model", "mock/x", "-o", tmp_path / "run",
        env={"HOOK_LOG": str(log), "INLINE_HOOK": switch},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    if switch == "off":
        assert not log.exists()
        return
    (bundle,) = read_jsonl(tmp_path / "run" / "bundles.jsonl")
    assert read_jsonl(log) == [{"trial": bundle["trial"]["trial_id"], "state": bundle["state"]}]


def test_a_hooks_entry_point_that_is_not_a_hooks_class_is_one_line_exit_2(tmp_path: Path) -> None:
    site = install_plugin(
        tmp_path / "site",
        {
            "assay.providers": {"shout": "assay_plug:shout_provider"},
            "assay.hooks": {"bad": "assay_plug:shout_provider"},
        },
    )
    proc = run_task(tmp_path, plugin_env(site, tmp_path))
    assert proc.returncode == 2
    assert error_line(proc) == (
        "assay: hook 'bad' is a function, not a subclass of assay.hooks.Hooks"
        " — point the 'assay.hooks' entry point at a Hooks subclass"
    )
