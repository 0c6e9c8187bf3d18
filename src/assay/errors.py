"""The errors assay raises, all under one root so a caller can catch them together.

    AssayError                 anything assay reports to a person; carries a hint
    ├── ConfigError            a spec, dataset or option is wrong      (exit 2)
    ├── EvidenceError          a run directory is missing or tampered  (exit 4)
    ├── RunError               the run could not go on (storage, sink) (exit 5)
    ├── Interrupted            Ctrl-C or SIGTERM stopped the run       (exit 130)
    └── InternalError          a bug in assay itself                   (exit 70)

Every error is built from a key in the message catalog (``assay._messages``), so it can
be shown in English or Chinese, and names where it is (file, line, field) and what to do.
Target failures are not here: they are evidence, recorded in the run, not raised.
"""

from __future__ import annotations

from assay._messages import render

__all__ = [
    "EXIT_CONFIG",
    "EXIT_EVIDENCE",
    "EXIT_FAILED",
    "EXIT_INCONCLUSIVE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_PASSED",
    "EXIT_RUN",
    "AssayError",
    "ConfigError",
    "EvidenceError",
    "InternalError",
    "Interrupted",
    "RunError",
]

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
EXIT_INCONCLUSIVE = 3
EXIT_EVIDENCE = 4
EXIT_RUN = 5
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


class AssayError(Exception):
    """Root of assay's errors: a catalog key, its parameters and an exit code."""

    exit_code = EXIT_INTERNAL

    def __init__(self, key: str, **params: object) -> None:
        self.key = key
        self.params = params
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """What went wrong, where, in the current language."""
        return render(self.key, self.params)[0]

    @property
    def hint(self) -> str:
        """What to do about it, in the current language."""
        return render(self.key, self.params)[1]

    def one_line(self) -> str:
        """The single line the CLI prints: ``message (hint)``."""
        msg, hint = render(self.key, self.params)
        # a value from the input (a key, a path) may hold a line break: shown escaped
        return printable(f"{msg} — {hint}")

    def __str__(self) -> str:
        return self.one_line()


def printable(text: str) -> str:
    """*text* on one line with no terminal control: each character that is not printable
    (a line break, an escape) shown escaped (``\\n``, ``\\x1b``). For text whoever wrote
    a run folder chose (a file name, a claimed key id) before it is printed."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class ConfigError(AssayError):
    """A spec, a dataset or a command-line option is wrong; nothing was run."""

    exit_code = EXIT_CONFIG


class EvidenceError(AssayError):
    """A run directory is not one, or its evidence does not verify."""

    exit_code = EXIT_EVIDENCE


class RunError(AssayError):
    """The run could not go on: storage failed, a sink failed too often."""

    exit_code = EXIT_RUN

    @classmethod
    def storage(cls, path: object, exc: OSError) -> RunError:
        """``run.storage`` for *exc*, naming the file it failed on (the run folder alone
        does not say which of its files was missing or unwritable). Raise it ``from exc``,
        so ``--debug`` shows where the failure happened."""
        reason = exc.strerror or str(exc)
        if exc.filename is not None:
            reason = f"{reason}: {exc.filename}"
        return cls("run.storage", path=str(path), reason=reason)


class Interrupted(AssayError):
    """The run was stopped by a signal; finished trials are kept and it can be resumed."""

    exit_code = EXIT_INTERRUPTED


class InternalError(AssayError):
    """A bug in assay: the CLI shows one line and asks for --debug."""

    exit_code = EXIT_INTERNAL
