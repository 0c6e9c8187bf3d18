"""The candidate's host: runs the model's code, then answers the test driver's calls.

Started by ``_code_run`` inside the candidate's sandbox as ``python -I -c SOURCE
REQUESTS RESPONSES`` (this file after ``_code_wire``'s source; the ``assay`` imports
below are dropped then), with the candidate's program in ``main.py``. Nothing here is
trusted once the candidate's code runs: it shares this process and may rewrite any of
it. That is the point of the design: this process holds no secret and decides nothing.
The verdict is the driver's, in another sandbox; all the candidate can do from here is
answer a call with plain data, which is what its functions do anyway.
"""

import os
import sys
from typing import Any

from assay.score._code_wire import WireError, decode, encode, receive, send

_VALUE_ITEMS = 10_000  # items (or characters) of a global copied to the tests, at most


def main(argv: list[str]) -> None:
    """Run ``main.py``, tell the driver its names, then answer calls until the pipe ends."""
    requests = os.fdopen(int(argv[1]), "rb")
    responses = os.fdopen(int(argv[2]), "wb")
    _quiet_stdin()
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": "main.py"}
    sys.argv = ["main.py"]
    try:
        with open("main.py", encoding="utf-8") as handle:
            exec(compile(handle.read(), "main.py", "exec"), namespace)
    except BaseException as exc:  # a program that fails to load fails
        _print_traceback(exc)
        send(responses, {"failed": f"{type(exc).__name__}: {exc}"[:2000]})
        return
    sys.stdout.flush()
    send(responses, {"ready": describe(namespace)})
    serve(namespace, requests, responses)


def _quiet_stdin() -> None:
    """The program reads an empty stdin, as it would when run on its own."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)


def describe(namespace: dict[str, Any]) -> dict[str, Any]:
    """What the program defined that the tests may use: callables by name, plain values,
    and the standard modules it imported (the driver imports its own copy)."""
    names: dict[str, Any] = {}
    for name, value in list(namespace.items()):
        if name.startswith("__"):
            continue
        if type(value).__name__ == "module":
            names[name] = {"module": getattr(value, "__name__", name)}
        elif callable(value):
            names[name] = {"callable": True}
        elif _small(value):
            try:
                names[name] = {"value": encode(value)}
            except (WireError, RecursionError, ValueError):
                continue  # an object the tests cannot use across the wire
    return names


def _small(value: Any) -> bool:
    """Whether a global is worth copying to the tests: a big table (a precomputed list
    of primes) would make the first message too long to cross, for nothing."""
    try:
        return len(value) <= _VALUE_ITEMS if hasattr(value, "__len__") else True
    except Exception:
        return False


def serve(namespace: dict[str, Any], requests: Any, responses: Any) -> None:
    """Answer each ``call`` with its value or the exception it raised."""
    while True:
        try:
            request = receive(requests)
        except EOFError:
            return
        answer: dict[str, Any] = {"id": request.get("id")}
        try:
            answer["value"] = encode(call(namespace, request))
        except BaseException as exc:  # the test decides what it means
            answer["raised"] = [type(exc).__name__, str(exc)[:2000]]
            _print_traceback(exc)  # the candidate's side of it, for the explanation
        sys.stdout.flush()
        sys.stderr.flush()
        send(responses, answer)


def call(namespace: dict[str, Any], request: dict[str, Any]) -> Any:
    """Call the named function with the decoded arguments (looked up now: the program
    may have rebound the name since it loaded)."""
    function = namespace[request["call"]]
    args = decode(request["args"])
    kwargs = decode(request["kwargs"])
    return function(*args, **kwargs)


def _print_traceback(exc: BaseException) -> None:
    """The traceback from the program's frames on (``main.py``), not the host's."""
    import traceback  # only when something failed: it costs start-up time otherwise

    sys.stdout.flush()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "main.py"]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    lines += traceback.format_exception_only(type(exc), exc)
    sys.stderr.write("".join(lines))
    sys.stderr.flush()


if __name__ == "__main__":
    main(sys.argv)
