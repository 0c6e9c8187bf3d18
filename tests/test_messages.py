"""The message catalog: every sentence in English and Chinese, with the same placeholders."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

import assay
from assay._messages import LANGUAGES, MESSAGES, detect_language, render, say, set_language
from tests.helpers import has_cjk

KEYS = sorted(MESSAGES)


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def _words(text: str) -> str:
    """*text* without its placeholders: what a person actually reads."""
    return re.sub(r"\{[^}]*\}", "", text)


def _params(text: str) -> dict[str, object]:
    """A value for every placeholder that suits its format spec."""
    params: dict[str, object] = {}
    for _, name, spec, _ in string.Formatter().parse(text):
        if name is None:
            continue
        params[name] = 1.5 if spec and spec[-1] in "fgeE%" else 7 if spec.endswith("d") else "v"
    return params


def test_catalog_is_not_empty() -> None:
    assert len(MESSAGES) > 20
    assert LANGUAGES == ("en", "zh")


@pytest.mark.parametrize("key", KEYS)
def test_every_key_has_both_languages(key: str) -> None:
    entry = MESSAGES[key]
    assert len(entry) == 4
    en_msg, en_hint, zh_msg, zh_hint = entry
    assert en_msg.strip() and zh_msg.strip()
    assert bool(en_hint) == bool(zh_hint), "a hint in one language only"
    assert en_msg != zh_msg or not re.search("[A-Za-z]", _words(en_msg))


@pytest.mark.parametrize("key", KEYS)
def test_same_placeholders(key: str) -> None:
    en_msg, en_hint, zh_msg, zh_hint = MESSAGES[key]
    assert _fields(en_msg) == _fields(zh_msg)
    assert _fields(en_hint) == _fields(zh_hint)


@pytest.mark.parametrize("key", KEYS)
def test_chinese_text_is_chinese(key: str) -> None:
    en_msg, en_hint, zh_msg, zh_hint = MESSAGES[key]
    for english, chinese in ((en_msg, zh_msg), (en_hint, zh_hint)):
        if re.search("[A-Za-z]{2,}", _words(english)):
            assert has_cjk(chinese), f"{key}: {chinese!r} has no Chinese characters"


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_message_renders(key: str, lang: str) -> None:
    entry = MESSAGES[key]
    params = {}
    for text in entry:
        params.update(_params(text))
    message, hint = render(key, params, lang)
    assert message.strip()
    assert "{" not in message + hint, "a placeholder was left unfilled"
    if re.search("[A-Za-z]{2,}", _words(entry[0])):
        assert has_cjk(message + hint) == (lang == "zh")


def test_current_language_is_used() -> None:
    set_language("zh")
    assert has_cjk(say("out.gate", status="passed"))
    set_language("en")
    assert say("out.gate", status="passed") == "gate: passed"


def test_detect_language(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    assert detect_language() == "en"
    assert detect_language("zh") == "zh"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert detect_language() == "zh"
    assert detect_language("en") == "en"
    monkeypatch.setenv("LC_ALL", "en_GB.UTF-8")
    assert detect_language() == "en"


_CALL = re.compile(
    r"""\b(?:ConfigError|EvidenceError|RunError|InternalError|AssayError|say|render)\(\s*"""
    r"""(f?)["']([^"']*)["']"""
)


def test_every_key_used_in_the_source_exists() -> None:
    """Messages come from catalog keys, never from a free sentence, and every key exists."""
    source = Path(assay.__file__).parent
    used: dict[str, str] = {}
    for path in source.rglob("*.py"):
        for prefix, key in _CALL.findall(path.read_text(encoding="utf-8")):
            assert not prefix, f"{path.name}: a message built from an f-string: {key!r}"
            used[key] = path.name
    assert len(used) > 10, "the pattern found almost no message keys"
    missing = {key: where for key, where in used.items() if key not in MESSAGES}
    assert not missing, f"keys used in the source but missing from the catalog: {missing}"
