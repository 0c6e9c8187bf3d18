"""``assay show RUN --trial ID``: an agent's transcript turn by turn, from checked evidence,
through the real CLI: tool calls with their arguments, results (and how a call failed),
submissions and the scorer's verdicts, handoffs; hostile text stays inert and is cut;
an edited event is refused, never shown."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.agent.test_react import TASK_FILE
from tests.helpers import bundles_by_sample, error_line, run_cli


def agent_run(folder: Path, *task_args: str) -> Path:
    """Run the agent task through the CLI with ``-T`` *task_args*; its run directory."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(TASK_FILE, folder / "agent_task.py")
    options = [part for arg in task_args for part in ("-T", arg)]
    ran = run_cli(
        "run", f"{folder / 'agent_task.py'}@agent_task", *options, "--log-dir", folder / "runs"
    )
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr  # 1: a sample failed the gate
    (run,) = [p for p in (folder / "runs").iterdir() if (p / "manifest.json").is_file()]
    return run


def shown_alone(folder: Path, sample: str) -> str:
    """What ``assay show RUN --trial SAMPLE`` prints for the agent task's *sample*, run
    alone."""
    shown = run_cli("show", agent_run(folder, f"only={sample}"), "--trial", sample)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def transcript(shown: str) -> list[str]:
    """The transcript's lines (between ``transcript:`` and ``output:``), left-stripped."""
    lines = shown.splitlines()
    start, end = (
        lines.index("  transcript:"),
        next(i for i, line in enumerate(lines) if line.startswith("  output:")),
    )
    return [line.strip() for line in lines[start + 1 : end] if line.strip()]


@pytest.fixture(scope="module")
def attempts_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("attempts")
    return agent_run(folder, "only=wrong_then_right,talks_first,tool_error", "attempts=2")


@pytest.mark.doc(
    "docs/cli.md",
    "the same, with a Python task's conversation as a transcript, turn by turn",
    "With `--trial ID` instead of `ID` the conversation is a transcript, turn by turn: a "
    "`turn N` line for each model answer, then what the assistant said, each tool call as "
    "`call name(arguments)`, each result as `result name: text` (with the error kind in "
    "brackets when the call failed), and each submission to an agent's `submit` tool as "
    "`submission N by AGENT: answer` with the scorer's verdict when it was judged;",
)
def test_each_turn_shows_calls_results_and_the_judged_submissions(attempts_run: Path) -> None:
    trial = bundles_by_sample(attempts_run)["wrong_then_right"]["trial"]["trial_id"]
    shown = run_cli("show", attempts_run, "--trial", trial)
    assert shown.returncode == 0, shown.stderr
    lines = transcript(shown.stdout)
    assert lines[0].startswith("system: Solve the task.")
    turns = lines[lines.index("turn 1") :]
    assert turns == [
        "turn 1",
        'call submit({"answer": "41"})',
        "result submit: 41",
        "submission 1 by react: 41 (judged incorrect, 0.0)",
        "user: Wrong answer, try again.",
        "turn 2",
        'call add({"x": 40, "y": 2})',
        "result add: 42",
        "turn 3",
        'call submit({"answer": "42"})',
        "result submit: 42",
        "submission 2 by react: 42 (not judged during the trial: left to the task's scorers)",
    ]
    assert "  output: 42" in shown.stdout.splitlines()
    assert "  score exact: passed (1.0)" in shown.stdout.splitlines()


@pytest.mark.doc(
    "docs/cli.md",
    "With `--trial ID` instead of `ID` the conversation is a transcript, turn by turn: a "
    "`turn N` line for each model answer, then what the assistant said, each tool call as "
    "`call name(arguments)`, each result as `result name: text` (with the error kind in "
    "brackets when the call failed), and each submission to an agent's `submit` tool as "
    "`submission N by AGENT: answer` with the scorer's verdict when it was judged;",
)
def test_plain_answers_continue_messages_and_failed_calls_are_shown(attempts_run: Path) -> None:
    by_sample = bundles_by_sample(attempts_run)
    talks = run_cli("show", attempts_run, "--trial", by_sample["talks_first"]["trial"]["trial_id"])
    lines = transcript(talks.stdout)
    first = lines.index("turn 1")
    assert lines[first : first + 3] == [
        "turn 1",
        "assistant: I will look it up.",
        "user: Please carry on with the next step as you judge best. If you have finished the "
        "task, call the submit() tool with your final answer.",
    ]
    failed = run_cli("show", attempts_run, "--trial", "tool_error")  # a sample id works too
    assert failed.returncode == 0, failed.stderr
    assert "result lookup (tool_error): Error: no note named 'gamma'" in transcript(failed.stdout)
    assert "result lookup: 17" in transcript(failed.stdout)


@pytest.mark.doc(
    "docs/cli.md",
    "a handoff's sub-agent transcript is indented under the call that started it, as "
    "`handoff to NAME`",
)
def test_a_handoff_shows_the_sub_agents_turns_under_the_call(tmp_path: Path) -> None:
    shown = shown_alone(tmp_path, "handoff")
    lines = transcript(shown)
    start = lines.index("handoff to researcher:")
    assert lines[start - 2 : start] == [
        "call transfer_to_researcher({})",
        "result transfer_to_researcher: alpha is 17, beta is 25",
    ]
    sub = lines[start + 1 :]
    assert sub[0].startswith("system: ROLE:researcher")
    assert 'call lookup({"key": "beta"})' in sub
    assert "submission 1 by researcher: alpha is 17, beta is 25" in sub[sub.index("turn 3") + 3]
    assert lines[-1].startswith("submission 1 by react: 42")
    # nested deeper than the caller's own turns
    raw = shown.splitlines()
    assert raw[raw.index("        turn 1") - 1].strip().startswith("user:")
    assert "          call lookup(" in shown


@pytest.mark.doc(
    "docs/cli.md",
    "an `as_tool()` sub-agent's, under the call that asked it, as `sub-agent NAME, called as a "
    "tool`.",
)
def test_an_as_tool_sub_agent_is_shown_as_a_tool_call_not_a_handoff(tmp_path: Path) -> None:
    shown = shown_alone(tmp_path, "as_tool")
    lines = transcript(shown)
    assert not any(line.startswith("handoff to") for line in lines), lines
    start = lines.index("sub-agent researcher, called as a tool:")
    assert lines[start - 2].startswith('call researcher({"input": ')
    assert lines[start - 1] == "result researcher: alpha is 17, beta is 25"
    sub = lines[start + 1 :]
    assert sub[0].startswith("system: ROLE:researcher")
    said = next(line for line in sub if line.startswith("user:"))
    assert said.startswith('user: {"researcher": ')  # its own input, not the conversation
    assert 'call lookup({"key": "beta"})' in sub
    assert lines[-1].startswith("submission 1 by react: 42")


@pytest.mark.doc(
    "docs/cli.md",
    "Text from a target is printed with control and bidirectional characters escaped "
    "(`\\x1b`, `\\u202e`), and cut at 2,000 characters unless `--full`.",
)
def test_hostile_text_in_a_transcript_is_escaped_and_cut(tmp_path: Path) -> None:
    run = agent_run(tmp_path, "only=hostile")
    shown = run_cli("show", run, "--trial", "hostile")
    assert shown.returncode == 0, shown.stderr
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in shown.stdout
    lines = transcript(shown.stdout)
    assert "assistant: \\x1b]0;pwned\\x07thinking" in lines
    result = next(line for line in lines if line.startswith("result lookup:"))
    assert result.startswith("result lookup: \\x1b[2J\\x1b[31mred\\u202egnp.exe")
    assert result.endswith("… 3020 more characters (--full shows all)")
    assert 'call submit({"answer": "\\u202eok"})' in lines
    full = run_cli("show", run, "--trial", "hostile", "--full")
    assert "x" * 5000 in full.stdout and "more characters" not in full.stdout


@pytest.mark.doc(
    "docs/cli.md",
    "The trial's events it reads are each checked against the hash its bundle lists: an "
    "edited event line is exit 4.",
)
def test_an_edited_event_is_refused_not_shown(attempts_run: Path, tmp_path: Path) -> None:
    edited = tmp_path / "edited"
    shutil.copytree(attempts_run, edited)
    events = edited / "events.jsonl"
    text = events.read_text()
    assert '"error":"tool_error"' in text
    events.write_text(text.replace('"error":"tool_error"', '"error":"arguments"', 1))
    refused = run_cli("show", edited, "--trial", "tool_error")
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert "events.jsonl: event" in error_line(refused)
    assert "does not match its bundle" in error_line(refused)
    assert "(arguments)" not in refused.stdout


@pytest.mark.doc("docs/cli.md", "Neither `ID` nor `--trial ID`, or both, is exit 2.")
def test_show_takes_one_id_either_way(attempts_run: Path) -> None:
    for args in ((), ("tool_error", "--trial", "tool_error")):
        refused = run_cli("show", attempts_run, *args)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "needs one trial or sample id" in error_line(refused)
    plain = run_cli("show", attempts_run, "tool_error")  # without --trial: the messages
    assert plain.returncode == 0 and "  messages:" in plain.stdout
    assert "  transcript:" not in plain.stdout
