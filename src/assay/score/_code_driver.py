"""The test driver: runs the sample's tests, calling the candidate's functions over a pipe.

Started by ``_code_run`` in a sandbox of its own as ``python -I -c SOURCE REQUESTS
RESPONSES`` (this file after ``_code_wire``'s source; the ``assay`` imports below are
dropped then), with the tests on stdin. The candidate runs in another sandbox (another
PID namespace: it cannot see, signal or trace this process, nor read its memory), so
the verdict written here is out of its reach. Each name the candidate's program
defined is bound in the tests' namespace: a function as a ``Remote`` whose call crosses
the pipe and comes back as plain data, a plain value as its decoded copy, a standard
module as the driver's own import of it. The tests pass when they run to their end in
this process; the verdict is one JSON line on the stdout it keeps for itself (what the
tests print goes to stderr).
"""

import builtins
import importlib
import os
import sys
from typing import Any

from assay.score._code_wire import WireError, decode, dumps, encode, receive, send

_NOT_RAISED = (StopIteration, StopAsyncIteration)  # would change the tests' control flow
_BUILTIN_NAMES = frozenset(vars(builtins))


class CandidateError(Exception):
    """An exception the candidate raised, of a type the driver has no builtin for."""


class CandidateGone(BaseException):
    """The candidate's process ended (it exited, or was killed) while the tests ran.

    A ``BaseException``, like ``ProtocolBroken``: a test's ``except Exception`` (there
    for a function that raises) must not swallow it and pass a candidate that killed
    itself or wrote garbage on the pipe."""


class ProtocolBroken(BaseException):
    """The candidate's end of the pipe answered out of order or with no plain data."""


class Link:
    """The driver's end of the pipe pair: one call out, its answer back, in order."""

    def __init__(self, requests: Any, responses: Any) -> None:
        self.requests = requests
        self.responses = responses
        self.calls = 0

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call *name* in the candidate's process; its value, or its exception raised."""
        self.calls += 1
        number = self.calls
        request = {"id": number, "call": name, "args": encode(list(args))}
        request["kwargs"] = encode(dict(kwargs))
        try:
            send(self.requests, request)
            answer = receive(self.responses)
            if answer.get("id") != number:
                raise WireError(f"the answer to call {number} ({name}) came out of order")
            if "value" in answer:
                return decode(answer["value"])
        except (EOFError, BrokenPipeError) as exc:
            raise CandidateGone(f"the candidate's process ended during a call to {name}()") from exc
        except (WireError, RecursionError, TypeError, ValueError) as exc:
            raise ProtocolBroken(f"{name}(): {exc}") from None
        raise exception_of(answer.get("raised"))


class Remote:
    """A function of the candidate's, called across the pipe."""

    def __init__(self, link: Link, name: str) -> None:
        self._link = link
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._link.call(self.__name__, args, kwargs)

    def __repr__(self) -> str:
        return f"<candidate function {self.__name__}>"


def exception_of(raised: Any) -> BaseException:
    """The exception to raise in the tests for the candidate's ``[type name, message]``:
    the builtin of that name (so ``except ValueError`` in a test works), else a
    ``CandidateError``; never one that is not an ``Exception`` (``SystemExit``)."""
    if type(raised) is not list or len(raised) != 2 or not all(type(x) is str for x in raised):
        return ProtocolBroken("an answer that is neither a value nor an exception")
    name, message = raised
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception) and not issubclass(kind, _NOT_RAISED):
        try:
            return kind(message)
        except Exception:  # a builtin that takes other arguments
            pass
    return CandidateError(f"{name}: {message}")


def namespace_of(names: Any, link: Link) -> dict[str, Any]:
    """The tests' globals: builtins, and what the candidate's program defined, except
    names of builtins (in one process a program's global ``abs`` or ``isinstance``
    would shadow the builtin in the tests too: that was a forged pass)."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    if type(names) is not dict:
        return namespace
    for name, kind in names.items():
        if type(name) is not str or not name.isidentifier() or type(kind) is not dict:
            continue
        if name in _BUILTIN_NAMES:
            continue  # a program's `def abs(x): return 0` must not become the tests' abs
        if kind.get("callable") is True:
            namespace[name] = Remote(link, name)
        elif "value" in kind:
            try:
                namespace[name] = decode(kind["value"])
            except (WireError, RecursionError, TypeError, ValueError):
                continue
        elif type(kind.get("module")) is str and _standard(kind["module"], name):
            namespace[name] = importlib.import_module(kind["module"])
    return namespace


def _standard(module: str, name: str) -> bool:
    """A standard module bound under its own name (``import os.path`` binds ``os``):
    never another module under a name the tests know (``math`` standing for ``cmath``)."""
    top = module.partition(".")[0]
    return top in sys.stdlib_module_names and name in (module, top, module.rpartition(".")[2])


def run_tests(tests: str, link: Link) -> dict[str, Any]:
    """Wait for the candidate's program to load, run *tests*, return the verdict."""
    try:
        loaded = receive(link.responses)
    except (EOFError, WireError) as exc:
        return _failed(f"the candidate's program ended before it loaded ({exc})", link)
    if "failed" in loaded:
        return _failed(f"the candidate's program raised {str(loaded['failed'])[:500]}", link)
    namespace = namespace_of(loaded.get("ready"), link)
    try:
        exec(compile(tests, "tests.py", "exec"), namespace)
    except SystemExit as exc:
        return _failed(f"the tests left early (SystemExit: {exc.code})", link)
    except BaseException as exc:  # any failure of the tests is a fail
        sys.stdout.flush()
        print(tests_traceback(exc), file=sys.stderr, flush=True)
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return _failed(f"the tests failed: {detail}"[:500], link)
    return {"passed": True, "summary": "passed", "calls": link.calls}


def tests_traceback(exc: BaseException) -> str:
    """The traceback of the tests' failure, their own frames only (``tests.py``): the
    driver's frames, and the pipe a call crossed, would only hide the line that failed.
    The candidate's side of a call that raised is in its own stderr."""
    import traceback  # only when the tests failed: it costs start-up time otherwise

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "tests.py"]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def _failed(summary: str, link: Link) -> dict[str, Any]:
    return {"passed": False, "summary": summary, "calls": link.calls}


def main(argv: list[str]) -> None:
    """Read the tests, run them against the candidate, write the verdict on stdout."""
    requests = os.fdopen(int(argv[1]), "wb")
    responses = os.fdopen(int(argv[2]), "rb")
    verdict = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what the tests print goes to stderr, beside their traceback
    sys.stdout = os.fdopen(1, "w", encoding="utf-8", errors="replace", closefd=False)
    tests = sys.stdin.read()
    result = run_tests(tests, Link(requests, responses))
    verdict.write(dumps(result) + "\n")
    verdict.flush()


if __name__ == "__main__":
    main(sys.argv)
