"""Every sentence assay says to a person, in English and in Chinese.

Keeping the catalog in one table means a translation cannot be forgotten: a test walks
the table and checks that each key has both languages and the same placeholders.
Each entry is ``key: (english_message, english_hint, chinese_message, chinese_hint)``.
The table is kept in files by subject (``_config``, ``_models``, ``_evidence``,
``_output``, ``_reports``, ``_tools``, ``_sandbox``, ``_agent``, ``_sign``,
``_cluster``, ``_targets``) and joined here; a key may be defined once only.
"""

from __future__ import annotations

import os

from assay._messages import (
    _agent,
    _cluster,
    _config,
    _evidence,
    _models,
    _output,
    _reports,
    _sandbox,
    _sign,
    _targets,
    _tools,
)


def _join(*parts: dict[str, tuple[str, str, str, str]]) -> dict[str, tuple[str, str, str, str]]:
    joined: dict[str, tuple[str, str, str, str]] = {}
    for part in parts:
        twice = joined.keys() & part.keys()
        if twice:
            raise RuntimeError(f"message keys defined twice: {sorted(twice)}")
        joined.update(part)
    return joined


MESSAGES = _join(
    _config.MESSAGES,
    _models.MESSAGES,
    _evidence.MESSAGES,
    _output.MESSAGES,
    _reports.MESSAGES,
    _tools.MESSAGES,
    _sandbox.MESSAGES,
    _agent.MESSAGES,
    _sign.MESSAGES,
    _cluster.MESSAGES,
    _targets.MESSAGES,
)

LANGUAGES = ("en", "zh")
_language = "en"


def detect_language(explicit: str | None = None) -> str:
    """Pick the language: an explicit choice wins, then a ``zh_*`` LANG or LC_ALL."""
    if explicit:
        return explicit
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def set_language(lang: str) -> None:
    """Set the language every later message is rendered in (``en`` or ``zh``)."""
    global _language
    _language = lang


def current_language() -> str:
    """The language messages are rendered in now."""
    return _language


def say(key: str, **params: object) -> str:
    """Render an output line (a catalog entry without a hint) in the current language."""
    return render(key, params)[0]


def render(key: str, params: dict[str, object], lang: str | None = None) -> tuple[str, str]:
    """Render the message and hint for *key* in *lang* (default: the current language)."""
    en_msg, en_hint, zh_msg, zh_hint = MESSAGES[key]
    msg, hint = (zh_msg, zh_hint) if (lang or _language) == "zh" else (en_msg, en_hint)
    return msg.format(**params), hint.format(**params)
