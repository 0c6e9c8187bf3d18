"""Observation bundles: one trial's evidence bound under one digest.

A bundle names the trial, its attempts and which one is canonical, the hash of every
event the trial recorded, the artifacts it produced, and the observation a scorer may
read (the output artifact and the expected value). Its digest is the SHA-256 of its
canonical JSON without the ``digest`` field; a score carries that digest, so a score
always points at the exact evidence it judged.
"""

from __future__ import annotations

from hashlib import sha256
from typing import Any

from assay._digest import canonical_json, loads, sha256_hex

BUNDLE_SCHEMA = "assay.bundle/1"
JSON_MEDIA = "application/json"


_EVENTS = b',"events":['
"""Where ``digest`` goes in a bundle's canonical JSON: just before its event list."""
_SPLICED = frozenset(
    {"artifacts", "attempts", "canonical_attempt", "digest", "events", "observation"}
    | {"schema", "state", "trial", "usage"}
)
"""The keys a bundle may have for ``digest`` to be put before ``events``: none sorts
between the two, and those before them hold no ``events`` list. Any other key (a field
added later) and the bundle is encoded again, so the line stays canonical."""


def seal_bundle(bundle: dict[str, Any]) -> tuple[bytes, str]:
    """Digest *bundle* and return ``(line, digest)``; the line includes the digest.

    The line is the digested bytes with ``"digest":...`` put in its sorted place, before
    ``events`` (encoding the bundle twice cost a microsecond a trial): the keys that
    sort before it (``artifacts``, ``attempts``, ``canonical_attempt``) hold no list
    under an ``events`` key, so the first ``,"events":[`` is the bundle's own. A bundle
    without an event list, or with a key not in ``_SPLICED``, is encoded again."""
    if bundle.keys() <= _SPLICED:
        return seal_spliceable(bundle)
    digest = "sha256:" + sha256(canonical_json(bundle)).hexdigest()
    bundle["digest"] = digest
    return canonical_json(bundle), digest


def seal_spliceable(bundle: dict[str, Any]) -> tuple[bytes, str]:
    """``seal_bundle`` of a bundle whose keys are known to be in ``_SPLICED`` (one
    ``bundle_of`` made: the run's path, which skips the check)."""
    body = canonical_json(bundle)
    digest = "sha256:" + sha256(body).hexdigest()
    bundle["digest"] = digest
    # one copy of the body with the digest put in (not two slices, then a third copy)
    line = body.replace(_EVENTS, b',"digest":"%s"%s' % (digest.encode(), _EVENTS), 1)
    if len(line) == len(body):  # no event list: nothing was put in
        return canonical_json(bundle), digest
    return line, digest


def bundle_digest(bundle: dict[str, Any]) -> str:
    """Recompute the digest of a bundle read back from disk."""
    body = {k: v for k, v in bundle.items() if k != "digest"}
    return "sha256:" + sha256_hex(canonical_json(body))


def is_json(media: str) -> bool:
    """True for a media type whose bytes are JSON (decoded before scorers see them)."""
    return media == JSON_MEDIA or media.endswith("+json")


def decode_output(data: bytes, media: str) -> Any:
    """The value a scorer sees for output bytes: decoded JSON, or text."""
    if is_json(media):
        return loads(data)
    return data.decode("utf-8", errors="replace")
