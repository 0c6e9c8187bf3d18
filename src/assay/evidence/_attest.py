"""Signed attestations: an in-toto Statement about a sealed run, in a DSSE envelope.

``verify`` proves a run was not changed by accident; anyone who can write the folder can
recompute every digest in it. A signature binds the run to a key: its subject is the
SHA-256 of ``manifest.json`` as written, and the manifest binds the event chain's head
and every file's digest, so nothing in the run can change without breaking it.

    attestation.dsse.json  {"payloadType": "application/vnd.in-toto+json",
                            "payload": base64(statement), "signatures": [{keyid, sig}]}

The signature is Ed25519 over DSSE's pre-authentication encoding (PAE) of the payload;
a key's id (its fingerprint) is ``sha256:`` + the hex SHA-256 of its 32 raw public bytes.
Keys are ``_keys``'s; ``cryptography`` is imported only when a key is used (extra ``sign``).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import fcntl
import hashlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay import __version__
from assay._digest import canonical_json, loads
from assay.errors import EvidenceError, printable
from assay.evidence._keys import fingerprint, read_at_most
from assay.evidence._layout import ATTESTATION, LOCK, MANIFEST, REPORTS
from assay.evidence._rundir import read_manifest

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
PREDICATE_TYPE = "urn:assay:run-verdict:v1"
SEALED = ("complete", "interrupted")
_BOUND_FIELDS = ("evaluation", "spec_digest", "planned", "events", "events_head")
SHOWN_KEYIDS = 4
ENVELOPE_LIMIT = 64 * 1024 * 1024
"""The most an attestation may hold (64 MiB): a statement of thousands of targets fits."""


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what is signed, so the type is bound too."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


# --- the statement ----------------------------------------------------------------------


def statement(path: Path, manifest_bytes: bytes) -> dict[str, Any]:
    """The in-toto Statement for the run at *path* whose manifest is *manifest_bytes*."""
    manifest = loads(manifest_bytes)
    predicate: dict[str, Any] = {field: manifest.get(field) for field in _BOUND_FIELDS}
    predicate.update(
        run_status=manifest.get("status"),
        gate=_gate_of(path / REPORTS[0]),
        assay_version=manifest.get("assay_version"),
        signed_with=__version__,
        started=_timestamp(manifest.get("started_at")),
        finished=_timestamp(manifest.get("finished_at")),
    )
    return {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": MANIFEST, "digest": {"sha256": hashlib.sha256(manifest_bytes).hexdigest()}}
        ],
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    }


def _gate_of(report_path: Path) -> dict[str, Any] | None:
    """The gate decision with its numbers, from ``report.json`` (whose digest the manifest
    holds); ``None`` when the run wrote no report."""
    try:
        gate = loads(report_path.read_bytes()).get("gate")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(gate, dict):
        return None
    targets = [
        {key: target.get(key) for key in ("target_id", "status", "gated", "minimum", "numbers")}
        for target in gate.get("targets", [])
        if isinstance(target, dict)
    ]
    return {"status": gate.get("status"), "targets": targets, "reasons": gate.get("reasons")}


def _timestamp(seconds: Any) -> str | None:
    """RFC 3339 UTC, as in-toto predicates write times."""
    if not isinstance(seconds, (int, float)):
        return None
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- signing ----------------------------------------------------------------------------


def sign_run(path: Path, key: Ed25519PrivateKey) -> str:
    """Sign the sealed run at *path* with *key*; write its envelope and return the keyid.

    Only a sealed run (``complete`` or ``interrupted``) is signed: a running one's
    manifest will change. The run's lock is held while signing, so no resume can seal a
    new manifest under a signature of the old one. An earlier attestation is replaced.
    """
    manifest = read_manifest(path)
    if manifest.get("status") not in SEALED:
        raise EvidenceError("sign.unsealed", path=str(path), status=manifest.get("status"))
    with open(path / LOCK, "ab") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise EvidenceError("sign.locked", path=str(path)) from None
        manifest_bytes = (path / MANIFEST).read_bytes()
        payload = canonical_json(statement(path, manifest_bytes))
        keyid = fingerprint(key.public_key())
        signature = key.sign(pae(PAYLOAD_TYPE, payload))
        envelope = {
            "payloadType": PAYLOAD_TYPE,
            "payload": _b64(payload),
            "signatures": [{"keyid": keyid, "sig": _b64(signature)}],
        }
        _write_atomic(path / ATTESTATION, canonical_json(envelope) + b"\n")
    return keyid


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _write_atomic(path: Path, data: bytes) -> None:
    temp = path.with_name(f".{path.name}.tmp")
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


# --- checking ---------------------------------------------------------------------------


class Envelope:
    """A run's attestation as read: its payload bytes, statement and claimed signatures."""

    def __init__(self, payload: bytes, claimed: dict[str, Any], signatures: list[Any]) -> None:
        self.payload = payload
        self.statement = claimed
        self.signatures = signatures

    @property
    def keyids(self) -> list[str]:
        """The key ids the envelope claims (unchecked until a trusted key verifies one)."""
        return [str(s.get("keyid")) for s in self.signatures if isinstance(s, dict)]

    def shown_keyids(self) -> str:
        """The claimed key ids as printed: anyone may have written them, so each is
        escaped (no control character can start a line or recolour the terminal) and
        cut, and only the first SHOWN_KEYIDS are named, then how many more."""
        ids = self.keyids
        shown = [printable(key)[:80] for key in ids[:SHOWN_KEYIDS]]
        if len(ids) > SHOWN_KEYIDS:
            shown.append(f"+{len(ids) - SHOWN_KEYIDS}")
        return ", ".join(shown) or "no key"

    def subject_digest(self) -> str | None:
        """The SHA-256 the statement names for ``manifest.json``, if it names one."""
        for subject in self.statement.get("subject") or []:
            if isinstance(subject, dict) and subject.get("name") == MANIFEST:
                digest = subject.get("digest")
                return digest.get("sha256") if isinstance(digest, dict) else None
        return None


def read_envelope(path: Path) -> Envelope | None:
    """The run's envelope, ``None`` when it has none; EvidenceError when it is not one."""
    data = _envelope_bytes(path)
    if data is None:
        return None
    try:
        envelope = loads(data)
        if not isinstance(envelope, dict):
            raise _bad(path, "it is not a JSON object")
        if envelope.get("payloadType") != PAYLOAD_TYPE:
            raise _bad(path, f"its payloadType is not {PAYLOAD_TYPE}")
        payload = base64.b64decode(envelope["payload"], validate=True)
        claimed = loads(payload)
        signatures = envelope["signatures"]
    except RecursionError:  # deeper than the JSON reader goes: no envelope assay writes
        raise _bad(path, "nested too deeply") from None
    except (ValueError, TypeError, KeyError, binascii.Error) as exc:
        raise _bad(path, f"{type(exc).__name__}: {exc}"[:160]) from None
    if not isinstance(claimed, dict) or claimed.get("_type") != STATEMENT_TYPE:
        raise _bad(path, "its payload is not an in-toto Statement v1")
    if not isinstance(signatures, list):
        raise _bad(path, "its signatures are not a list")
    return Envelope(payload, claimed, signatures)


def _envelope_bytes(path: Path) -> bytes | None:
    """The attestation's bytes, ``None`` when there is none. Anyone can put a file there,
    so a link or a device (``/dev/zero``) is refused unread and a file over
    ENVELOPE_LIMIT is not read past it: a claim costs at most that much to look at."""
    where = path / ATTESTATION
    try:
        if not stat.S_ISREG(where.lstat().st_mode):
            raise _bad(path, "it is not a regular file")
        data = read_at_most(where, ENVELOPE_LIMIT)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _bad(path, exc.strerror or str(exc)) from None
    if data is None:
        raise _bad(path, "it is larger than 64 MiB")
    return data


def _bad(path: Path, reason: str) -> EvidenceError:
    return EvidenceError("sign.unreadable", path=str(path / ATTESTATION), reason=reason)


def manifest_digest(path: Path) -> str:
    """The hex SHA-256 of ``manifest.json`` as it is now."""
    return hashlib.sha256((path / MANIFEST).read_bytes()).hexdigest()


def check_trusted(path: Path, trusted: list[Ed25519PublicKey]) -> str:
    """Raise EvidenceError (one line, exit 4) unless the run at *path* is signed by one
    of *trusted* and the signature covers the manifest as it is now; return the keyid.

    What the signature binds beyond the manifest (the event chain's head, every file's
    digest) is then ``verify``'s to check: the manifest holds them.
    """
    from cryptography.exceptions import InvalidSignature

    read_manifest(path)  # not a run at all: that one line first
    envelope = read_envelope(path)
    wanted = {fingerprint(key): key for key in trusted}
    trusted_ids = ", ".join(sorted(wanted))
    if envelope is None:
        raise EvidenceError("sign.unsigned", path=str(path), trusted=trusted_ids)
    signed_by = [k for k in envelope.keyids if k in wanted]
    if not signed_by:
        others = envelope.shown_keyids()
        raise EvidenceError("sign.other_key", path=str(path), keyids=others, trusted=trusted_ids)
    message = pae(PAYLOAD_TYPE, envelope.payload)
    keyid = signed_by[0]
    for entry in envelope.signatures:
        if not isinstance(entry, dict) or entry.get("keyid") != keyid:
            continue
        try:
            wanted[keyid].verify(base64.b64decode(str(entry.get("sig")), validate=True), message)
        except (InvalidSignature, ValueError, binascii.Error):
            raise EvidenceError("sign.bad_signature", path=str(path), keyid=keyid) from None
    _check_subject(path, envelope, keyid)
    return keyid


def _check_subject(path: Path, envelope: Envelope, keyid: str) -> None:
    """The signed statement must name the manifest as it is now, and say what it says."""
    signed, now = envelope.subject_digest(), manifest_digest(path)
    if signed != now:
        raise EvidenceError(
            "sign.changed",
            path=str(path),
            keyid=keyid,
            signed=str(signed)[:16],
            now=now[:16],
        )
    if envelope.statement.get("predicateType") != PREDICATE_TYPE:
        raise EvidenceError("sign.predicate", path=str(path), field="predicateType")
    predicate = envelope.statement.get("predicate")
    manifest = read_manifest(path)
    for field in _BOUND_FIELDS:
        if not isinstance(predicate, dict) or predicate.get(field) != manifest.get(field):
            raise EvidenceError("sign.predicate", path=str(path), field=field)


def signature_line(path: Path) -> tuple[str, dict[str, object]]:
    """What plain ``verify`` says about a signature it has no trusted key to check: the
    catalog key and its parameters. The envelope is a claim only (anyone could have
    written it), so nothing here changes verify's exit code."""
    try:
        envelope = read_envelope(path)
    except EvidenceError as exc:
        return "out.signature_unreadable", {"reason": exc.params.get("reason", "")}
    if envelope is None:
        return "out.unsigned", {}
    keyids = envelope.shown_keyids()
    if envelope.subject_digest() != manifest_digest(path):
        return "out.signed_other_manifest", {"keyids": keyids}
    return "out.signed_by", {"keyids": keyids}
