"""The ``assay`` command: a thin group whose subcommands load only when used.

Every command module parses its options, calls the library and prints; errors become one
line and a documented exit code here, in one place (see ``docs/cli.md``):

    0 passed · 1 failed · 2 usage or config error · 3 inconclusive ·
    4 evidence missing or tampered · 5 run could not go on · 70 internal error ·
    130 interrupted
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import signal
import sys
from typing import Any, NoReturn

import click

from assay import __version__
from assay._messages import LANGUAGES, detect_language, set_language

# name -> (module, function, one-line help); modules import only when their command runs.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("assay.cli._run", "run", "Run a spec: plan, trials, evidence, scores, gate, reports."),
    "resume": ("assay.cli._run", "resume", "Finish an interrupted run; keep finished trials."),
    "merge": ("assay.cli._merge", "merge", "Merge the shards of a sharded run into one run."),
    "verify": (
        "assay.cli._verify",
        "verify",
        "Re-derive every digest of a run; name what changed.",
    ),
    "inspect": ("assay.cli._verify", "verify", "Alias of 'verify'."),
    "show": ("assay.cli._show", "show", "Show one trial or sample of a run, checked."),
    "list": ("assay.cli._tasks", "list_group", "List the tasks in Python files."),
    "score": ("assay.cli._score", "score", "Re-score a run from its verified evidence alone."),
    "gate": ("assay.cli._score", "gate", "Re-decide the gate from verified evidence alone."),
    "compare": ("assay.cli._compare", "compare", "Paired comparison of two runs' samples."),
    "export": ("assay.cli._export", "export", "Write every trial of a run as CSV or JSON lines."),
    "view": ("assay.cli._view", "view", "Browse runs in a local web viewer (127.0.0.1)."),
    "cache": ("assay.cli._cache", "cache_group", "List, clear or prune the response cache."),
    "keygen": ("assay.cli._sign", "keygen", "Write an Ed25519 key pair for signing runs."),
    "sign": ("assay.cli._sign", "sign", "Sign a sealed run (in-toto statement, DSSE envelope)."),
}


class LazyGroup(click.Group):
    """A click group that imports a command's module only when that command is invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, _, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="assay")
@click.option(
    "--lang", type=click.Choice(LANGUAGES), help="Language of messages (default: from LANG)."
)
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.option(
    "--no-env-file", is_flag=True, help="Do not read ./.env (variables for keys and servers)."
)
@click.pass_context
def cli(ctx: click.Context, lang: str | None, debug: bool, no_env_file: bool) -> None:
    """assay: evaluations whose every score can be re-checked offline."""
    set_language(detect_language(lang))
    ctx.obj = {"debug": debug}
    if not no_env_file:
        from assay.cli._env_file import load_env_file

        load_env_file()


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI and turn every failure into one line and an exit code."""
    from assay.errors import EXIT_INTERRUPTED, AssayError, InternalError, Interrupted

    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    set_language(detect_language(_lang_from(argv)))
    try:
        code: Any = cli.main(args=argv, prog_name="assay", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except SystemExit as exc:  # a command's own exit code
        code = exc.code
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except click.exceptions.Abort:
        code = EXIT_INTERRUPTED
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except AssayError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        if isinstance(exc, Interrupted):
            # exiting now anyway: a second signal must not cut this one line short
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        click.echo(f"assay: {exc.one_line()}", err=True)
        code = exc.exit_code
        if isinstance(exc, Interrupted):
            # The run is sealed; do not wait for a blocked target's worker thread.
            _leave(code)
    except Exception as exc:  # a bug: one line unless --debug
        if debug:
            import traceback

            traceback.print_exc()
        error = InternalError("internal", reason=f"{type(exc).__name__}: {exc}")
        click.echo(f"assay: {error.one_line()}", err=True)
        code = error.exit_code
    if isinstance(code, str):  # as sys.exit("why") does: the reason, then exit 1
        click.echo(code, err=True)
        code = 1
    code = code if isinstance(code, int) else 0
    if argv is None:  # the `assay` program itself, not a caller in Python
        _leave(code)
    sys.exit(code)


def _leave(code: int) -> NoReturn:
    """End the program without the interpreter's teardown, which frees every loaded module
    one object at a time: 60-100 ms of a small run's half second, for nothing a finished
    command needs. Exit hooks still run (the local model's server is stopped by one) and
    the standard streams are flushed; the evidence was closed and synced before this."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe, a closed stream
            stream.flush()
    os._exit(code)


def _lang_from(argv: list[str] | None) -> str | None:
    args = argv if argv is not None else sys.argv[1:]
    for i, arg in enumerate(args):
        if arg == "--lang" and i + 1 < len(args):
            return args[i + 1] if args[i + 1] in LANGUAGES else None
        if arg.startswith("--lang="):
            value = arg.split("=", 1)[1]
            return value if value in LANGUAGES else None
    return None
