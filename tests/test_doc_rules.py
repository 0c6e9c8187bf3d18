"""Every rule stated in docs/cli.md, docs/spec.md and docs/evidence.md has a test naming it.

A test names the rule it checks with ``@pytest.mark.doc("docs/cli.md", "quote")``: the
quote is copied from the doc (line breaks may differ), so a doc edit that changes a
rule breaks the link here instead of leaving a test that checks something else. A rule
is one sentence of a paragraph or list item, or one table row; code blocks are examples,
not rules, and HTML comments are notes to tools.

Run ``python -m tests.test_doc_rules`` to list the rules and the tests that name them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = ("docs/cli.md", "docs/spec.md", "docs/evidence.md")

# Sentences that state no behaviour a test could check (a heading-like lead-in, a
# pointer to another page). Keyed by the sentence's start; each says why.
DESCRIPTIVE: dict[str, str] = {
    "Each line is one JSON record:": "evidence.md: the lead-in to the example event record",
    "The files under `artifacts/`, as written:": (
        "evidence.md: the lead-in to the layout block; its facts are the rules around it"
    ),
    "For mean scores in [0, 1] the binomial variance is the largest possible": (
        "docs/spec.md: why the n of the min_effect rule also suits mean scores (a bound of "
        "statistics, not a behaviour); the n itself is checked by "
        "test_the_n_needed_is_the_normal_approximation_two_sided"
    ),
    "See [cluster.md](cluster.md).": "a pointer to another page",
    "The mapping:": "cli.md, --junit: the lead-in to the JUnit mapping table (each row named)",
    "See `docs/cache.md`.": "a pointer to another page",
    "A typical CI step: `assay run eval.yaml": "an example command line, no behaviour of its own",
    "A fixed-size run spends every planned trial": "spec.md: why `sequential` exists",
    "`sequential` stops a run when the evidence suffices": (
        "spec.md: the lead-in to the sequential rules listed (and tested) below it"
    ),
    "The method, its prior and its guarantee are in": "a pointer to another page",
    "What `verify` alone proves: the run is consistent with itself.": (
        'evidence.md, threat model: a summary of "What `verify` checks", whose rules are '
        "named there"
    ),
    "Every file, record and artifact hashes to what the manifest": (
        "evidence.md, threat model: the same summary (the tamper tests name each check)"
    ),
    "What neither covers:": "evidence.md: the lead-in to the list of limits below it",
    "Trust a key as far as you trust": "evidence.md: advice to the reader, no behaviour",
    "Checking needs only the public key; keep the private key": "evidence.md: advice",
    "- A target that cheats.": "evidence.md: a limit of evidence, pointing to sandbox.md",
    "Evidence records what the target did; it cannot tell": (
        "evidence.md: a limit (what no check can see), not a behaviour"
    ),
    "Keeping a target from reaching the harness": "a pointer to sandbox.md's threat model",
    "- A stolen key, or a key that should no longer be trusted": (
        "evidence.md: a limit: there is no revocation mechanism to test"
    ),
    "- What happened outside the run:": "evidence.md: a limit outside the run folder",
    "`regates.jsonl`, written after the seal, is not covered either.": (
        "evidence.md: a limit of what the signature covers, nothing assay does"
    ),
}

# Rules with no named test yet. This list may only shrink: a rule here that gains a
# test, or leaves its doc, fails test_pending_rules_are_still_pending.
PENDING: dict[str, list[str]] = {}

_SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+(?=[A-Z`(\"])")
_TABLE_RULE = re.compile(r"\|[\s|:-]+\|")
_LIST_ITEM = re.compile(r"([-*]|\d+\.)\s")


def normal(text: str) -> str:
    """Whitespace collapsed, so a quote may wrap where the doc does not."""
    return " ".join(text.split())


def blocks(text: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of each paragraph, list item and table body row, outside code."""
    fenced = in_table = False
    start, current = 0, []
    for number, line in enumerate([*text.splitlines(), ""], 1):
        stripped = line.strip()
        starts_item = bool(_LIST_ITEM.match(stripped)) or stripped.startswith("|")
        if stripped.startswith("<!--"):  # a note to tools (tests/test_doc_commands.py)
            stripped = ""
        if current and (not stripped or stripped.startswith(("#", "```")) or starts_item):
            yield start, normal(" ".join(current))
            current = []
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        if fenced or not stripped or stripped.startswith("#"):
            in_table = in_table and stripped.startswith("|")
            continue
        if stripped.startswith("|"):
            if in_table and not _TABLE_RULE.fullmatch(stripped):
                yield number, stripped
            in_table = True  # the first row of a table is its header
            continue
        in_table = False
        if not current:
            start = number
        current.append(stripped)


def rules(doc: str) -> list[tuple[int, str]]:
    """(line, sentence) of every rule in the doc at *doc*."""
    return rules_of((REPO / doc).read_text(encoding="utf-8"))


def rules_of(markdown: str) -> list[tuple[int, str]]:
    """(line, sentence) of every rule in *markdown*; a table row is one rule."""
    found = []
    for line, text in blocks(markdown):
        parts = [text] if text.startswith("|") else _SENTENCE_END.split(text)
        found.extend((line, part) for part in parts if part)
    return found


def doc_marks() -> list[tuple[str, str, str]]:
    """(test file::name, doc, quote) for every ``pytest.mark.doc`` in tests/."""
    marks = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        tree = ast.parse(path.read_bytes(), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            for decorator in node.decorator_list:
                if not (
                    isinstance(decorator, ast.Call)
                    and isinstance(decorator.func, ast.Attribute)
                    and decorator.func.attr == "doc"
                    and ast.unparse(decorator.func.value) == "pytest.mark"
                ):
                    continue
                doc, *quotes = (ast.literal_eval(arg) for arg in decorator.args)
                where = f"{path.relative_to(REPO)}::{node.name}"
                marks.extend((where, doc, normal(quote)) for quote in quotes)
    return marks


def covering(sentence: str, quotes: list[str]) -> bool:
    """A quote names a rule when one lies within the other (a quote may span several)."""
    return any(quote in sentence or sentence in quote for quote in quotes)


def uncovered() -> dict[str, list[str]]:
    """The rules of each doc that no test names and that are not descriptive."""
    marks = doc_marks()
    missing: dict[str, list[str]] = {}
    for doc in DOCS:
        quotes = [quote for _, d, quote in marks if d == doc]
        for _, sentence in rules(doc):
            if covering(sentence, quotes) or any(map(sentence.startswith, DESCRIPTIVE)):
                continue
            missing.setdefault(doc, []).append(sentence)
    return missing


def test_every_quote_is_in_its_doc() -> None:
    wrong = []
    for where, doc, quote in doc_marks():
        path = REPO / doc
        if not path.is_file() or quote not in normal(path.read_text(encoding="utf-8")):
            wrong.append(f"{where}: {doc} does not say {quote!r}")
    assert not wrong, "\n".join(wrong)


def test_every_rule_has_a_named_test() -> None:
    new = {
        doc: [s for s in sentences if s not in PENDING.get(doc, [])]
        for doc, sentences in uncovered().items()
    }
    lines = [f"{doc}: {sentence}" for doc, sentences in new.items() for sentence in sentences]
    assert not lines, "no test names these rules (add @pytest.mark.doc):\n" + "\n".join(lines)


def test_pending_rules_are_still_pending() -> None:
    missing = uncovered()
    done = [
        f"{doc}: {sentence}"
        for doc, sentences in PENDING.items()
        for sentence in sentences
        if sentence not in missing.get(doc, [])
    ]
    assert not done, "named by a test now (or gone from the doc): remove from PENDING\n" + (
        "\n".join(done)
    )


def test_descriptive_sentences_exist() -> None:
    every = [sentence for doc in DOCS for _, sentence in rules(doc)]
    stale = [start for start in DESCRIPTIVE if not any(s.startswith(start) for s in every)]
    assert not stale, stale


def test_rules_are_split_into_sentences() -> None:
    markdown = (
        "# Title\n\nIntro\nline.\n\n<!-- not run: an example -->\n```sh\nassay run x\n```\n\n"
        "- `a` is refused, e.g. `b`. Then exit 2.\n- Second.\n\n"
        "| code | meaning |\n|---|---|\n| 0 | ok |\n"
    )
    assert rules_of(markdown) == [
        (3, "Intro line."),
        (11, "- `a` is refused, e.g. `b`."),
        (11, "Then exit 2."),
        (12, "- Second."),
        (16, "| 0 | ok |"),
    ]


if __name__ == "__main__":
    marks = doc_marks()
    total = named = 0
    for doc in DOCS:
        quotes = [(where, quote) for where, d, quote in marks if d == doc]
        for line, sentence in rules(doc):
            tests = [w for w, q in quotes if covering(sentence, [q])]
            total += 1
            named += bool(tests)
            print(f"{doc}:{line}: {len(tests)} test(s): {sentence[:90]}")
    print(f"{named} of {total} rules named by a test")
