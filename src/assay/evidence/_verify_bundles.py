"""Reading a bundle line for ``verify``: the digest recomputed from the line itself, and
the bundle's event list hashed the way the event pass hashes a trial's events.

Both sides hash the canonical JSON of the list ``[[n, "event hash"], ...]``: the event
pass builds it from the log, a bundle carries it verbatim, so the usual line is checked
by hashing its bytes, with no list decoded. A bundle whose list is spelled differently
(other white space, ``1.0`` for ``1``) no longer matches, which is right: it was changed.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from assay._digest import fast_json, loads
from assay.evidence._bundle import bundle_digest


class _TrialRef(msgspec.Struct):
    trial_id: str


class _BundleHead(msgspec.Struct):
    """What verify reads of a bundle when the line has the usual shape (else: a dict)."""

    trial: _TrialRef
    digest: str = ""
    events: msgspec.Raw = msgspec.Raw(b"[]")
    artifacts: dict[str, str] = {}


_decode_bundle = msgspec.json.Decoder(_BundleHead).decode


def read_bundle(line: bytes) -> tuple[str, Any, str, Any, Any] | None:
    """Trial id, digest as written, digest recomputed, events and artifacts of one bundle
    line; None if it is not a bundle. The usual canonical line is decoded into a struct
    (only what verify needs); anything else is read as a plain dict."""
    try:
        head = _decode_bundle(line)
        member = b'"digest":"%s",' % head.digest.encode()
        at = line.find(member)
        if at >= 0:  # the line's bytes around the member, hashed without joining them
            digest = hashlib.sha256(line[:at])
            digest.update(line[at + len(member) :])
            actual = "sha256:" + digest.hexdigest()
            return head.trial.trial_id, head.digest, actual, head.events, head.artifacts
    except msgspec.DecodeError:
        pass
    try:
        bundle = loads(line)
        tid = bundle["trial"]["trial_id"]
    except (ValueError, KeyError, TypeError):
        return None
    digest = bundle.get("digest", "")
    events, artifacts = bundle.get("events", []), bundle.get("artifacts", {})
    return tid, digest, line_digest(line, bundle), events, artifacts


def line_digest(line: bytes, bundle: dict[str, Any]) -> str:
    """A bundle's digest recomputed from its own line: the ``"digest"`` member cut out of
    the canonical bytes it was taken over (keys sorted), without decoding and encoding
    again. Any other change to the line, even of white space, then fails to match."""
    member = b'"digest":"%s",' % str(bundle.get("digest", "")).encode()
    if member not in line:
        return bundle_digest(bundle)
    return "sha256:" + hashlib.sha256(line.replace(member, b"", 1)).hexdigest()


def events_json(events: Any) -> bytes:
    """The bundle's event list as canonical JSON (its bytes as read, for the usual
    line; encoded again, for a bundle read as a dict)."""
    return bytes(events) if isinstance(events, msgspec.Raw) else fast_json(events)
