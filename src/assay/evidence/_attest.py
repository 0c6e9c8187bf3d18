"""Signed attestations: an in-toto Statement about a sealed run, in a DSSE envelope.

``verify`` proves a run was not changed by accident; anyone who can write the folder can
recompute every digest in it. A signature binds the run to a key: its subject is the
SHA-256 of ``manifest.json`` as written, and the manifest binds the event chain's head
and every file's digest, so nothing in the run can change without breaking it.

    attestation.dsse.json  {"payloadType": "application/vnd.in-toto+json",
                            "payload": base64(statement), "signatures": [{keyid, sig}]}

The signature is Ed25519 over DSSE's pre-authentication encoding (PAE) of the payload;
a key's id (its fingerprint) is ``sha256:`` + the hex SHA-256 of its 32 raw public bytes.
``cryptography`` is imported only here and only when a key is used (extra ``sign``).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import fcntl
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay import __version__
from assay._digest import canonical_json, loads
from assay.errors import ConfigError, EvidenceError
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


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what is signed, so the type is bound too."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


# --- keys -------------------------------------------------------------------------------


def _require_crypto() -> None:
    """A one-line error (exit 2) when ``cryptography`` (the ``sign`` extra) is missing."""
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise ConfigError("sign.no_crypto") from None


def fingerprint(public: Ed25519PublicKey) -> str:
    """``sha256:<hex>`` of the key's 32 raw bytes: the DSSE keyid and what is printed."""
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def generate_keypair(path: Path) -> str:
    """Write a new Ed25519 key: *path* (private PEM, mode 0600) and *path*.pub (public
    PEM). Either existing is refused: overwriting a key would orphan what it signed."""
    _require_crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    public_path = _pub_path(path)
    for existing in (path, public_path):
        if existing.exists() or existing.is_symlink():
            raise ConfigError("sign.key_exists", path=str(existing))
    key = ed25519.Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    _write_new(path, private_pem, 0o600)
    _write_new(public_path, public_pem, 0o644)
    return fingerprint(key.public_key())


def _pub_path(path: Path) -> Path:
    return path.with_name(path.name + ".pub")


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Create *path* (never replace it) with *mode* from the start: the private key is
    never readable by others, not even between its creation and a chmod."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise ConfigError("sign.key_exists", path=str(path)) from None
    except OSError as exc:
        raise ConfigError("sign.key_unwritable", path=str(path), reason=exc.strerror) from None
    try:
        os.fchmod(descriptor, mode)  # the umask may have taken bits away, never added
        os.write(descriptor, data)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """An unencrypted Ed25519 private key in PEM (``assay keygen``'s or ``openssl genpkey
    -algorithm ed25519``'s); anything else is one line, exit 2."""
    _require_crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    data = _read_key(path)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:  # it needs a password
        raise ConfigError("sign.key_bad", path=str(path), reason="it is encrypted") from None
    except ValueError:
        reason = "it is not a PEM private key" + (
            " (it is a public key)" if b"PUBLIC KEY" in data else ""
        )
        raise ConfigError("sign.key_bad", path=str(path), reason=reason) from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        reason = f"it is a {type(key).__name__.lstrip('_')}, not an Ed25519 key"
        raise ConfigError("sign.key_bad", path=str(path), reason=reason)
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """An Ed25519 public key in PEM (``KEY.pub``, or ``openssl pkey -pubout``'s)."""
    _require_crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    data = _read_key(path)
    if b"PRIVATE KEY" in data:
        reason = "it is a private key: trust the public one (KEY.pub)"
        raise ConfigError("sign.key_bad", path=str(path), reason=reason)
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError:
        reason = "it is not a PEM public key"
        raise ConfigError("sign.key_bad", path=str(path), reason=reason) from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        reason = f"it is a {type(key).__name__.lstrip('_')}, not an Ed25519 key"
        raise ConfigError("sign.key_bad", path=str(path), reason=reason)
    return key


def _read_key(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError("sign.key_bad", path=str(path), reason=reason) from None


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

    def subject_digest(self) -> str | None:
        """The SHA-256 the statement names for ``manifest.json``, if it names one."""
        for subject in self.statement.get("subject") or []:
            if isinstance(subject, dict) and subject.get("name") == MANIFEST:
                digest = subject.get("digest")
                return digest.get("sha256") if isinstance(digest, dict) else None
        return None


def read_envelope(path: Path) -> Envelope | None:
    """The run's envelope, ``None`` when it has none; EvidenceError when it is not one."""
    try:
        data = (path / ATTESTATION).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _bad(path, exc.strerror or str(exc)) from None
    try:
        envelope = loads(data)
        if envelope.get("payloadType") != PAYLOAD_TYPE:
            raise _bad(path, f"its payloadType is not {PAYLOAD_TYPE}")
        payload = base64.b64decode(envelope["payload"], validate=True)
        claimed = loads(payload)
        signatures = envelope["signatures"]
    except (ValueError, TypeError, KeyError, AttributeError, binascii.Error) as exc:
        raise _bad(path, f"{type(exc).__name__}: {exc}"[:160]) from None
    if not isinstance(claimed, dict) or claimed.get("_type") != STATEMENT_TYPE:
        raise _bad(path, "its payload is not an in-toto Statement v1")
    if not isinstance(signatures, list):
        raise _bad(path, "its signatures are not a list")
    return Envelope(payload, claimed, signatures)


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
        others = ", ".join(envelope.keyids) or "no key"
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
    keyids = ", ".join(envelope.keyids) or "no key"
    if envelope.subject_digest() != manifest_digest(path):
        return "out.signed_other_manifest", {"keyids": keyids}
    return "out.signed_by", {"keyids": keyids}
