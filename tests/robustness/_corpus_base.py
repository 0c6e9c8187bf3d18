"""The bad-input corpus's base spec, its files and how a case is written down
(``test_bad_input.py`` says what the corpus is for)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

EXIT_CONFIG = 2
MAX_LINE = 2_000  # an error line stays readable, whatever the input held

BASE: dict[str, Any] = {
    "evaluation": "bad-input",
    "dataset": "data.jsonl",
    "targets": [{"id": "t", "callable": "answers:echo"}],
    "scorers": [{"id": "exact", "type": "exact"}],
}
GOOD = b'{"id": "a", "input": "x", "expected": "x"}\n{"id": "b", "input": "y", "expected": "y"}\n'
ANSWERS = "NOT_CALLABLE = 5\n\n\ndef echo(text):\n    return text\n"
MODULES = {
    "syntax_error.py": "def f(:\n",
    "raises.py": "raise ImportError('a dependency is missing')\n",
    "raises_value.py": "raise ValueError('bad configuration at import')\n",
    "exits0.py": "import sys\nsys.exit(0)\n",
    "exits3.py": "import sys\nsys.exit(3)\n",
}


@dataclass
class Case:
    """One malformed input: the files of its spec folder and what its error must name."""

    id: str
    needles: tuple[str, ...]
    spec: bytes | None = None  # None: the base spec
    data: bytes | None = GOOD
    setup: Callable[[Path, Path], None] | None = None  # (spec folder, outside folder)
    spec_name: str = "eval.yaml"
    bug: str | None = None


def dump(spec: dict[str, Any]) -> bytes:
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True).encode()


def _walk(spec: Any, path: str) -> tuple[Any, Any]:
    parts: list[Any] = [int(p) if p.isdigit() else p for p in path.split(".")]
    node = spec
    for part in parts[:-1]:
        node = node[part]
    return node, parts[-1]


def setting(path: str, value: Any) -> bytes:
    spec = copy.deepcopy(BASE)
    node, key = _walk(spec, path)
    if isinstance(node, dict) or key < len(node):
        node[key] = value
    else:
        node.append(value)
    return dump(spec)


def without(path: str) -> bytes:
    spec = copy.deepcopy(BASE)
    node, key = _walk(spec, path)
    del node[key]
    return dump(spec)


def base_text(extra: str = "", replace: tuple[str, str] | None = None) -> bytes:
    text = dump(BASE).decode()
    if replace is not None:
        assert replace[0] in text, replace
        text = text.replace(*replace)
    return (text + extra).encode()


# Text the fuzzers generate. Left out (each has its own corpus case): NUL characters in
# paths, integers past int64, NaN.
TEXT = st.text(
    st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12
)
