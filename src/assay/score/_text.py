"""Text helpers the Python scorers share: target values, punctuation, numbers.

Kept in one place so ``match``, ``exact`` and ``f1`` normalise text the same way, and a
fix to (say) Unicode punctuation reaches all of them at once.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata

from assay.solver import Target

_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
STRIPPED = string.whitespace + string.punctuation
"""What is stripped around an answer and a target (``"Paris."`` is Paris)."""
# A number as people write it: optional sign, thousands separators, decimals. Not a
# digit glued to a word before it ("x2"), so identifiers are not read as numbers.
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|(?<![\w.])-?\.\d+")
_CURRENCY = re.compile(r"[$€£¥]")


def target_values(target: Target, scorer: str) -> list[str]:
    """The non-empty target values; a sample with none cannot be judged, so say so.

    An empty target would make ``includes`` or ``match`` pass every answer (``"" in x``
    is always true); raising turns that silent pass into a visible scorer error.
    """
    values = list(filter(str.strip, target.target))  # those with more than whitespace
    if not values:
        raise ValueError(
            f"{scorer}() needs a target to compare with, but the sample's target is empty; "
            "give the sample a target"
        )
    return values


def remove_punctuation(text: str) -> str:
    """*text* with every punctuation character removed, ASCII or not."""
    if text.isascii():
        return text.translate(_ASCII_PUNCTUATION)
    return "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))


def normalize(text: str) -> str:
    """Case-folded, punctuation-free, single-spaced: what ``exact`` and ``f1`` compare."""
    return " ".join(remove_punctuation(text.casefold()).split())


def parse_number(text: str) -> float | None:
    """*text* as a number if it is one (``"$1,234.50"``, ``"-3"``, ``"12."``), else None."""
    cleaned = _CURRENCY.sub("", text.strip()).rstrip(".").replace(",", "")
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def find_numbers(text: str) -> list[str]:
    """The numbers written in *text*, in order, as they were written."""
    return _NUMBER.findall(text)


def same_number(left: float, right: float) -> bool:
    """Equal as numbers (``12`` is ``12.0``), allowing only float rounding noise."""
    return math.isclose(left, right, rel_tol=1e-9, abs_tol=1e-12)
