"""Ed25519 keys for signing runs: making a pair, loading either half, its fingerprint.

A key file is whatever a user points ``--sign``, ``--key`` or ``--trust`` at, so it is
read with a bound (``read_at_most``): an Ed25519 key in PEM is under 200 bytes, and a
path such as ``/dev/zero`` must be one line (exit 2), not a read that never ends.
``cryptography`` is imported only when a key is used (extra ``sign``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import ConfigError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

KEY_LIMIT = 64 * 1024
"""The most a key file may hold (64 KiB): a PEM key with any comment around it fits."""


def read_at_most(path: Path, limit: int) -> bytes | None:
    """The bytes of *path*, or ``None`` when it holds more than *limit*: only *limit*
    + 1 bytes are ever read, so an endless or huge file costs nothing. OSError as is."""
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    return None if len(data) > limit else data


def require_crypto() -> None:
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
    if not path.name:  # ".", "/" or "": a folder, with no key file name in it
        raise ConfigError("sign.key_no_name", path=str(path))
    require_crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    public_path = path.with_name(path.name + ".pub")
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
    require_crypto()
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
        raise _not_ed25519(key, path)
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """An Ed25519 public key in PEM (``KEY.pub``, or ``openssl pkey -pubout``'s)."""
    require_crypto()
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
        raise _not_ed25519(key, path)
    return key


def _not_ed25519(key: object, path: Path) -> ConfigError:
    """An RSA or EC key where an Ed25519 one belongs: one line naming what it is."""
    reason = f"its type is {type(key).__name__.lstrip('_')}, not Ed25519"
    return ConfigError("sign.key_bad", path=str(path), reason=reason)


def _read_key(path: Path) -> bytes:
    try:
        data = read_at_most(path, KEY_LIMIT)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError("sign.key_bad", path=str(path), reason=reason) from None
    if data is None:
        reason = "it is larger than 64 KiB"
        raise ConfigError("sign.key_bad", path=str(path), reason=reason)
    return data
