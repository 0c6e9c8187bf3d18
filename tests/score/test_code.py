"""``python_tests`` and ``extract_code``: code from completions, judged by running tests."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from assay.model import ModelOutput
from assay.score import CORRECT, INCORRECT, Score, extract_code, python_tests
from assay.solver import Target, TaskState

TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"


def judge(completion: str, tests: str = TESTS, prompt: str = "", **options: object) -> Score:
    state = TaskState(model="mock/x", sample_id=1, epoch=1, input=prompt, target=Target(tests))
    state.output = ModelOutput.from_content("mock/x", completion)
    # 60 s unless a test times the code out: a loaded machine may take seconds to start
    # the two sandboxes (the default 10 s is the product's, not this test's)
    scorer = python_tests(**{"timeout": 60.0, **options})  # type: ignore[arg-type]
    return anyio.run(scorer, state, state.target)


@pytest.mark.parametrize(
    ("completion", "code"),
    [
        ("def f():\n    return 1", "def f():\n    return 1"),
        ("Sure:\n```python\ndef f():\n    return 1\n```\nDone.", "def f():\n    return 1"),
        ("```py\nx = 1\n```", "x = 1"),
        ("```\nx = 2\n```", "x = 2"),
        ("```bash\nls\n```\nthen\n```python\nx = 3\n```", "x = 3"),
        ("```python\ndef f():\n    return 1", "def f():\n    return 1"),  # cut off
        ("\n\n    return x + 1\n", "    return x + 1"),  # a body keeps its indent
        ("def f():\n    return 1\n```", "def f():\n    return 1"),  # closed, never opened
    ],
)
def test_extract_code(completion: str, code: str) -> None:
    assert extract_code(completion) == code


def test_correct_code_passes() -> None:
    score = judge("```python\ndef add(a, b):\n    return a + b\n```")
    assert score.value == CORRECT
    assert score.answer == "def add(a, b):\n    return a + b"
    assert score.metadata is not None and score.metadata["exit_code"] == 0
    assert score.explanation is None  # a quiet pass needs none
    printed = judge("def add(a, b):\n    return a + b\nprint('ok so far')")
    assert printed.value == CORRECT and printed.explanation == "passed\n--- stdout ---\nok so far"


def test_wrong_code_fails_and_the_explanation_keeps_what_it_printed() -> None:
    score = judge("def add(a, b):\n    print('adding', a, b)\n    return a - b")
    assert score.value == INCORRECT
    assert score.explanation is not None
    assert score.explanation.startswith("the tests failed: AssertionError")
    assert "AssertionError" in score.explanation and "adding 2 3" in score.explanation


def test_a_slow_answer_is_a_wrong_answer() -> None:
    score = judge("def add(a, b):\n    while True:\n        pass", timeout=1.0)
    assert score.value == INCORRECT
    assert score.metadata is not None and score.metadata["timed_out"] is True
    assert score.explanation is not None and "timed out" in score.explanation


def test_the_input_can_come_first() -> None:
    prompt = 'def add(a, b):\n    """Add two numbers."""\n'
    assert judge("    return a + b\n", prompt=prompt, include_input=True).value == CORRECT
    assert judge("    return a + b\n", prompt=prompt).value == INCORRECT  # a bare body


def test_an_empty_target_is_refused() -> None:
    with pytest.raises(ValueError, match="test code"):
        judge("x = 1", tests="  ")


def test_at_most_max_concurrency_programs_run_at_once(tmp_path: Path) -> None:
    log, started = tmp_path / "spans.jsonl", tmp_path / "started"
    started.mkdir()
    # Each program says it started, waits until two have (the first waits for the
    # second: two at once are seen however slowly the machine starts them), then leaves
    # 0.3 s in which a third, which must not start, would overlap both.
    body = (
        "import json, os, time\n"
        "start = time.time()\n"
        f"open(os.path.join({str(started)!r}, str(os.getpid())), 'w').close()\n"
        "deadline = time.monotonic() + 60\n"
        f"while len(os.listdir({str(started)!r})) < 2 and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
        "time.sleep(0.3)\n"
        f"open({str(log)!r}, 'a').write(json.dumps([start, time.time()]) + '\\n')\n"
    )
    scorer = python_tests(max_concurrency=2, sandbox="local")  # it reports through host files

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for index in range(5):
                state = TaskState(
                    model="m", sample_id=index, epoch=1, input="", target=Target("pass")
                )
                state.output = ModelOutput.from_content("m", body)
                group.start_soon(scorer, state, state.target)

    anyio.run(main)
    spans = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(spans) == 5
    most = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert most == 2


def test_plain_data_crosses_the_pipe_with_its_types() -> None:
    code = (
        "import math\nLIMIT = (3, 'x')\n"
        "def values():\n"
        "    return [(1, 2), {1, 2}, frozenset({3}), {'a': (1,), 2: None}, b'\\x00b',"
        " 1 + 2j, 2.5, True, 10**30, float('inf')]\n"
    )
    tests = (
        "got = values()\n"
        "assert got == [(1, 2), {1, 2}, frozenset({3}), {'a': (1,), 2: None}, b'\\x00b',"
        " 1 + 2j, 2.5, True, 10**30, float('inf')]\n"
        "assert [type(v).__name__ for v in got] == ['tuple', 'set', 'frozenset', 'dict',"
        " 'bytes', 'complex', 'float', 'bool', 'int', 'float']\n"
        "assert LIMIT == (3, 'x') and math.sqrt(4) == 2\n"  # a constant, a module it imported
    )
    score = judge(code, tests=tests)
    assert score.value == CORRECT, score.explanation
    assert score.metadata is not None and score.metadata["calls"] == 1


def test_a_candidate_exception_is_raised_in_the_tests_by_its_builtin_name() -> None:
    code = (
        "class Odd(Exception):\n    pass\n"
        "def check(n):\n"
        "    if n < 0:\n        raise ValueError('negative')\n"
        "    if n == 1:\n        raise Odd('one')\n"
        "    if n == 2:\n        raise SystemExit(0)\n"
        "    return n\n"
    )
    tests = (
        "try:\n    check(-1)\nexcept ValueError as e:\n    assert str(e) == 'negative'\n"
        "else:\n    raise AssertionError('no ValueError')\n"
        "for n in (1, 2):\n"
        "    try:\n        check(n)\n"
        "    except Exception as e:\n        assert type(e).__name__ == 'CandidateError', e\n"
        "    else:\n        raise AssertionError('nothing raised')\n"
        "assert check(5) == 5\n"
    )
    score = judge(code, tests=tests)
    assert score.value == CORRECT, score.explanation


def test_an_object_cannot_cross_so_the_tests_fail_saying_why() -> None:
    code = "class Box:\n    pass\ndef make():\n    return Box()\n"
    score = judge(code, tests="make()\n")
    assert score.value == INCORRECT
    assert score.explanation is not None
    assert "a Box cannot cross to the test driver (plain data only)" in score.explanation


def test_the_tests_never_reach_the_candidate() -> None:
    # a program that looks for the tests in every file it can read (its needle is built at
    # run time, so its own main.py does not hold it)
    code = (
        "import os\nfound = []\nNEEDLE = ('SECRET' + '-EXPECTATION').encode()\n"
        "for root, dirs, files in os.walk('/', onerror=lambda e: None):\n"
        "    if root.startswith(('/proc', '/sys', '/usr')):\n        dirs[:] = []\n"
        "        continue\n"
        "    for name in files:\n"
        "        path = os.path.join(root, name)\n"
        "        try:\n"
        "            if os.path.isfile(path) and NEEDLE in open(path, 'rb').read():\n"
        "                found.append(path)\n"
        "        except OSError:\n            pass\n"
        "def add(a, b):\n    return found\n"
    )
    score = judge(code, tests="assert add(1, 2) == [], 'SECRET-EXPECTATION'\n")
    assert score.value == CORRECT, score.explanation


def test_a_big_global_table_does_not_stop_the_program_from_loading() -> None:
    code = "TABLE = list(range(3_000_000))\nNAME = 'small'\ndef nth(n):\n    return TABLE[n]\n"
    score = judge(code, tests="assert nth(2_999_999) == 2_999_999 and NAME == 'small'\n")
    assert score.value == CORRECT, score.explanation


def test_a_sandbox_the_two_processes_cannot_use_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^python_tests\(sandbox='docker'\): .*'bwrap'") as info:
        python_tests(sandbox="docker")
    assert "\n" not in str(info.value)


GUARDED = "try:\n    got = add(1, 1)\nexcept Exception:\n    got = 2\nassert got == 2\n"


@pytest.mark.parametrize(
    ("body", "passes"),
    [
        ("    raise ValueError('no')\n", True),  # the tests' own except takes a raise
        ("    import os\n    os._exit(0)\n", False),  # never a candidate that left
        (  # nor one that answered with garbage
            "    import os\n    for fd in range(3, 64):\n        try:\n"
            '            os.write(fd, b\'{"id": 1, "value": {"s": [[1]]}}\\n\')\n'
            "        except OSError:\n            pass\n    return 0\n",
            False,
        ),
    ],
)
def test_a_tests_except_exception_cannot_swallow_a_dead_or_lying_candidate(
    body: str, passes: bool
) -> None:
    score = judge(f"def add(a, b):\n{body}", tests=GUARDED)
    assert (score.value == CORRECT) is passes, score.explanation
