"""No test asserts on the wall clock or waits a fixed time (issue 12).

A test that asserts ``elapsed < 2.5`` fails on a busy machine and passes on a fast one
whatever the code does; a ``time.sleep(0.3)`` before looking at a result hopes the work is
done instead of knowing it. Tests wait on the run's own evidence (``wait_for`` on a file,
a marker a sleeper writes when it wakes, an event the test sets) and leave speed to
bench/. This guard parses every test module with ``ast`` and names each offence:

(a) an ``assert`` whose expression reads a clock (``time.monotonic()``, ``time.time()``,
    ``perf_counter()``, ...) or a variable computed from one in the same function;
(b) a ``time.sleep``, ``asyncio.sleep`` or ``anyio.sleep`` of a constant made directly in
    a test function, a fixture, or a module-level helper the module calls (sleeps inside
    nested functions, and in module-level functions only passed around, are the programs
    under test: targets, tools, solvers that simulate slow work).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
CLOCKS = {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns"}
CLOCK_MODULES = {"time"}
SLEEP_MODULES = {"time", "asyncio", "anyio", "trio"}
ALLOWED: dict[str, str] = {}  # "path:line" → why (keep it empty or tiny)

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _is_clock_call(node: ast.AST) -> bool:
    """``time.monotonic()`` and the like, or a bare ``monotonic()`` / ``perf_counter()``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id in CLOCK_MODULES and func.attr in CLOCKS
    return isinstance(func, ast.Name) and func.id in CLOCKS - {"time"}


def _reads_clock(node: ast.AST, clocked: set[str]) -> bool:
    """*node* calls a clock or reads a name that holds a clock's value."""
    return any(
        _is_clock_call(sub) or (isinstance(sub, ast.Name) and sub.id in clocked)
        for sub in ast.walk(node)
    )


def _own_nodes(function: Function) -> Iterator[ast.AST]:
    """The nodes of *function*'s body, not those of functions or classes nested in it."""
    nested = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
    stack: list[ast.AST] = [node for node in function.body if not isinstance(node, nested)]
    while stack:
        node = stack.pop()
        yield node
        stack += [child for child in ast.iter_child_nodes(node) if not isinstance(child, nested)]


def _clocked_names(function: Function) -> set[str]:
    """Names assigned (directly or through others) from a clock in *function*."""
    assigns = [n for n in _own_nodes(function) if isinstance(n, ast.Assign | ast.AugAssign)]
    clocked: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in assigns:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is None or not _reads_clock(node.value, clocked):
                continue
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and name.id not in clocked:
                        clocked.add(name.id)
                        changed = True
    return clocked


def _is_constant(node: ast.AST) -> bool:
    """A literal, or arithmetic on literals only (``0.3``, ``3 * 0.1``)."""
    return all(
        isinstance(sub, ast.Constant | ast.BinOp | ast.UnaryOp | ast.operator | ast.unaryop)
        for sub in ast.walk(node)
    )


def _is_fixed_sleep(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "sleep"
        and isinstance(func.value, ast.Name)
        and func.value.id in SLEEP_MODULES
        and _is_constant(node.args[0])
    )


def _is_fixture(function: Function) -> bool:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "fixture":
            return True
        if isinstance(target, ast.Name) and target.id == "fixture":
            return True
    return False


def _functions(tree: ast.Module) -> Iterator[Function]:
    """Every function of a module at any depth (methods of classes included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _top_level(tree: ast.Module) -> Iterator[Function]:
    """Module-level functions and methods of module-level classes: test functions,
    fixtures and helpers, not the targets and tools defined inside them."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item


def offences(source: str, name: str) -> list[str]:
    """``name:line: what`` for each clock assertion and fixed sleep in *source*."""
    tree = ast.parse(source, filename=name)
    found: list[str] = []
    for function in _functions(tree):
        clocked = _clocked_names(function)
        for node in _own_nodes(function):
            if isinstance(node, ast.Assert) and _reads_clock(node.test, clocked):
                found.append(f"{name}:{node.lineno}: an assert on the wall clock")
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    for function in _top_level(tree):
        is_test = function.name.startswith("test") or _is_fixture(function)
        if not (is_test or function.name in called):  # not a test, fixture or helper
            continue
        for node in _own_nodes(function):
            if _is_fixed_sleep(node):
                found.append(f"{name}:{node.lineno}: a fixed sleep in {function.name}")
    return [f for f in found if f.split(": ")[0] not in ALLOWED]


def test_no_test_asserts_on_the_clock_or_sleeps_a_fixed_time() -> None:
    found: list[str] = []
    for path in sorted(TESTS.rglob("*.py")):
        name = str(path.relative_to(TESTS.parent))
        found += offences(path.read_text(encoding="utf-8"), name)
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "import time\ndef test_x():\n    t = time.monotonic()\n    run()\n"
        "    assert time.monotonic() - t < 2.5\n",
        "import time\ndef test_x():\n    began = time.perf_counter()\n    run()\n"
        "    took = time.perf_counter() - began\n    assert took < 3\n",
        "from time import monotonic\ndef test_x():\n    t = monotonic()\n    assert t > 0\n",
        "import time\ndef test_x():\n    run()\n    time.sleep(0.3)\n    assert done()\n",
        "import asyncio\nasync def test_x():\n    await asyncio.sleep(0.1)\n",
        "import anyio, pytest\n@pytest.fixture\ndef f():\n    anyio.run(anyio.sleep, 1)\n"
        "    anyio.sleep(2 * 0.5)\n",
        "import time\nclass TestX:\n    def test_y(self):\n        time.sleep(1)\n",
        "import time\ndef _stop(p):\n    time.sleep(0.03)\n    p.kill()\n"
        "def test_x():\n    _stop(start())\n",
    ],
)
def test_the_guard_names_each_kind_of_offence(source: str) -> None:
    assert offences(source, "t.py"), source


@pytest.mark.parametrize(
    "source",
    [
        # a target that simulates slow work, defined inside the test
        "import time\ndef test_x():\n    def answer(x):\n        time.sleep(1)\n"
        "        return x\n    run(answer)\n",
        # polling with a deadline as a failure guard, no assert on the time itself
        "import time\ndef wait(p):\n    deadline = time.monotonic() + 30\n"
        "    while time.monotonic() < deadline:\n        if p():\n            return True\n"
        "        time.sleep(0.01)\n    return False\n",
        # a sleep whose length the test computes is not a constant one (caught by review)
        "import time\ndef helper(step):\n    time.sleep(step)\n",
        # a module-level target, passed to the run, never called by the test
        "import anyio\nasync def slow(state):\n    await anyio.sleep(10)\n"
        "def test_x():\n    run(solver=[slow])\n",
        # code in a string run as a subprocess
        "def test_x():\n    run('import time; time.sleep(60)')\n",
    ],
)
def test_the_guard_leaves_programs_under_test_and_polling_alone(source: str) -> None:
    assert offences(source, "t.py") == [], source
