"""A user's long-term identity: an Ed25519 key pair and a nickname.

The key is what peers really know each other by (the nickname is only a label anyone can
choose), so its fingerprint is made for reading aloud: two people on a call compare
``k7dq-m3xa-...`` and know no one sits between them. The private key is kept in the user's
config directory, in a file only the user can read, written atomically so a crash can never
leave half a key behind.
"""

from __future__ import annotations

import base64
import functools
import getpass
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import platformdirs
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from buraco_p2p.net.channel.edwards import check_identity_key
from buraco_p2p.net.channel.errors import BadSignature, IdentityError
from buraco_p2p.privatefile import write_private

__all__ = [
    "APP_NAME",
    "HOME_ENV",
    "IDENTITY_FILE",
    "Identity",
    "PeerKey",
    "confusable_nicknames",
    "default_config_dir",
    "load_or_create_identity",
    "nickname_skeleton",
    "validate_nickname",
]

APP_NAME = "buraco-p2p"
HOME_ENV = "BURACO_P2P_HOME"
IDENTITY_FILE = "identity.json"
MAX_NICKNAME_LEN = 24
_FILE_VERSION = 1
_FINGERPRINT_DOMAIN = b"buraco-p2p fingerprint v1\x00"
_FINGERPRINT_CHARS = 20  # 100 bits in base32
_MAX_FILE_BYTES = 4096


# Code points that draw nothing (or a blank) yet are letters or symbols to Unicode, so the
# PRECIS classes let them through: a name made of them is invisible, a name holding them can
# hide a gap. Hangul fillers, the Braille blank, the Mongolian vowel separator, Khmer
# inherent vowels, the combining grapheme joiner and the Hangul half-width filler.
_BLANK_LOOKING = frozenset("\u115f\u1160\u17b4\u17b5\u180e\u2800\u3164\uffa0\u034f")
# What the lobby draws around names and keys ("<nick> ...", "nick (k7dq)"): a name holding
# them could pass for a name with a fingerprint.
_DELIMITERS = frozenset("<>()[]")
# Fingerprint groups joined by dashes, as the lobby prints them: three or more, or two of
# which one holds a digit (so "luiz-vita" stays a name while "k7dq-m3xa" does not).
_GROUPS = re.compile(r"(?<![a-z0-9])[a-z2-7]{4}(?:-[a-z2-7]{4})+(?![a-z0-9-])")


def _fingerprint_shaped(name: str) -> bool:
    for match in _GROUPS.finditer(name.lower()):
        groups = match.group().split("-")
        if len(groups) >= 3 or any(ch in "234567" for ch in match.group()):
            return True
    return False


@functools.cache
def _profiles() -> tuple[Any, Any]:
    from precis_i18n import get_profile

    return get_profile("NicknameCasePreserved"), get_profile("NicknameCaseMapped")


def validate_nickname(nickname: str) -> str:
    """Return `nickname` in its enforced form, or raise ValueError saying why not.

    The rules are the PRECIS Nickname profile (RFC 8266, case preserved; as implemented by
    `precis-i18n` over Python's Unicode database), then three of our own, because nicknames
    are shown beside each other in other people's terminals: no blank-looking code points,
    none of the characters the lobby draws around names and keys, and nothing shaped like a
    fingerprint. A name is 1 to 24 code points after enforcement.
    """
    if not isinstance(nickname, str):
        raise ValueError("nickname must be a string")
    preserved, _ = _profiles()
    try:
        name: str = preserved.enforce(nickname)
    except UnicodeEncodeError as exc:
        if exc.reason == "DISALLOWED/empty":
            raise ValueError("nickname is empty") from None
        bad = exc.object[exc.start : exc.end] if exc.end > exc.start else ""
        where = f" U+{ord(bad[0]):04X}" if bad else ""
        raise ValueError(
            f"nickname has a character{where} that is not allowed ({exc.reason})"
        ) from None
    if len(name) > MAX_NICKNAME_LEN:
        raise ValueError(f"nickname is longer than {MAX_NICKNAME_LEN} characters")
    for char in name:
        if char in _BLANK_LOOKING:
            raise ValueError(f"nickname contains the blank-looking character U+{ord(char):04X}")
        if char in _DELIMITERS:
            raise ValueError(f"nickname contains {char!r}, which the lobby draws around names")
    if _fingerprint_shaped(name):
        raise ValueError("nickname looks like a key fingerprint")
    return name


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each confusable code point mapped to the look-alike that stands for it.

    From the Unicode confusables data (UTS #39, as shipped by the `confusable-homoglyphs`
    package, which lists each pair both ways without saying which is the prototype): a
    character stands for itself or for the lowest of its look-alikes (on lower case, since
    names are compared case-mapped), followed a few steps so that two look-alikes of one
    letter meet. Only direct look-alikes are joined, so ordinary letters keep apart while
    Cyrillic a (U+0430) becomes Latin a, and "0" and "o" meet.
    """
    from confusable_homoglyphs.confusables import (  # type: ignore[import-untyped]
        confusables_data,
    )

    def lower(char: str) -> str:
        folded = char.lower()
        return folded if len(folded) == 1 else char

    lowest: dict[str, str] = {}
    for char, entries in confusables_data.items():
        if len(char) != 1:
            continue
        key = lower(char)
        for entry in entries:
            glyph = entry["c"].strip("\u200e\u200f")
            if len(glyph) == 1:
                lowest[key] = min(lowest.get(key, key), lower(glyph))
    out: dict[str, str] = {}
    for char in lowest:
        target = char
        for _ in range(4):
            target = lowest.get(target, target)
        out[char] = target
    return out


def nickname_skeleton(nickname: str) -> str:
    """What a nickname looks like, for comparison: case-mapped (RFC 8266 comparison),
    spaces dropped, and each character replaced by its class of look-alikes."""
    _, mapped = _profiles()
    try:
        folded: str = mapped.enforce(nickname)
    except UnicodeEncodeError:
        folded = nickname.casefold()
    prototypes = _prototypes()
    return "".join(
        prototypes.get(char.lower(), char.lower()) for char in folded if not char.isspace()
    )


def confusable_nicknames(a: str, b: str) -> bool:
    """True if `a` and `b` could be taken for each other on screen."""
    return nickname_skeleton(a) == nickname_skeleton(b)


@dataclass(frozen=True)
class PeerKey:
    """A peer's long-term Ed25519 public key: what links, rosters and signed logs name."""

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        """An immutable value: a copy of a table shares it."""
        return self

    raw: bytes
    _key: Ed25519PublicKey = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.raw, bytes) or len(self.raw) != 32:
            raise ValueError("an Ed25519 public key is exactly 32 bytes")
        # Small-order and non-canonical keys are refused wherever an identity is read.
        check_identity_key(self.raw)
        try:
            key = Ed25519PublicKey.from_public_bytes(self.raw)
        except ValueError as exc:
            raise ValueError(f"not a valid Ed25519 public key: {exc}") from exc
        object.__setattr__(self, "_key", key)

    def fingerprint(self) -> str:
        """Twenty base32 characters (100 bits of SHA-256) in groups of four, for reading aloud.

        100 bits keeps a second-preimage search (making a key with someone else's fingerprint)
        far out of reach while staying short enough to compare over the phone.
        """
        digest = hashlib.sha256(_FINGERPRINT_DOMAIN + self.raw).digest()
        text = base64.b32encode(digest).decode("ascii").lower()[:_FINGERPRINT_CHARS]
        return "-".join(text[i : i + 4] for i in range(0, _FINGERPRINT_CHARS, 4))

    def short(self) -> str:
        """The first group of the fingerprint: enough to tell peers apart in log lines."""
        return self.fingerprint()[:4]

    def verify(self, signature: bytes, data: bytes) -> None:
        """Raise `BadSignature` unless `signature` is this key's signature over `data`."""
        if not isinstance(signature, bytes) or len(signature) != 64:
            raise BadSignature(f"signature by {self.fingerprint()} is not 64 bytes")
        try:
            self._key.verify(signature, data)
        except InvalidSignature as exc:
            raise BadSignature(f"signature does not verify under {self.fingerprint()}") from exc

    def __str__(self) -> str:
        return self.fingerprint()


class Identity:
    """Our own key pair and nickname. Holds the private key; never sent anywhere."""

    def __init__(self, private_key: Ed25519PrivateKey, nickname: str) -> None:
        self._private = private_key
        self.nickname = validate_nickname(nickname)
        raw = private_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.public = PeerKey(raw)

    @classmethod
    def generate(cls, nickname: str) -> Identity:
        """A fresh identity that lives only in memory (tests, bots, benchmarks)."""
        return cls(Ed25519PrivateKey.generate(), nickname)

    @classmethod
    def from_seed(cls, seed: bytes, nickname: str) -> Identity:
        """The identity whose RFC 8032 private key is `seed` (32 bytes): for test vectors."""
        if len(seed) != 32:
            raise ValueError("an Ed25519 seed is exactly 32 bytes")
        return cls(Ed25519PrivateKey.from_private_bytes(seed), nickname)

    def sign(self, data: bytes) -> bytes:
        """Ed25519 signature over `data` (64 bytes)."""
        return self._private.sign(data)

    def private_seed(self) -> bytes:
        return self._private.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )

    def __repr__(self) -> str:
        return f"Identity(nickname={self.nickname!r}, fingerprint={self.public.fingerprint()!r})"


def default_config_dir() -> Path:
    """`$BURACO_P2P_HOME` if set (tests, several identities on one machine), else platformdirs'."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir(APP_NAME))


def _default_nickname() -> str:
    try:
        return validate_nickname(getpass.getuser())
    except (ValueError, OSError, KeyError):
        return "player"


def _restrict_permissions(path: Path) -> None:
    """Take back read access others were given to the key file (e.g. by a careless copy)."""
    try:
        mode = path.stat().st_mode
        if mode & 0o077:
            os.chmod(path, 0o600)
    except OSError as exc:
        raise IdentityError(f"cannot restrict access to identity file {path}: {exc}") from exc


def _encode_file(identity: Identity) -> bytes:
    document = {
        "version": _FILE_VERSION,
        "nickname": identity.nickname,
        "ed25519_seed": base64.b64encode(identity.private_seed()).decode("ascii"),
        "fingerprint": identity.public.fingerprint(),
    }
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _decode_file(path: Path, data: bytes) -> Identity:
    def corrupt(why: str) -> IdentityError:
        return IdentityError(
            f"identity file {path} is corrupt ({why}); move it away to create a new identity "
            "(peers will then see a different fingerprint)"
        )

    if len(data) > _MAX_FILE_BYTES:
        raise corrupt("too large")
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise corrupt(f"not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise corrupt("not a JSON object")
    if document.get("version") != _FILE_VERSION:
        raise corrupt(f"unsupported version {document.get('version')!r}")
    seed_text = document.get("ed25519_seed")
    nickname = document.get("nickname")
    if not isinstance(seed_text, str) or not isinstance(nickname, str):
        raise corrupt("missing ed25519_seed or nickname")
    try:
        seed = base64.b64decode(seed_text, validate=True)
    except ValueError as exc:
        raise corrupt("ed25519_seed is not base64") from exc
    if len(seed) != 32:
        raise corrupt("ed25519_seed is not 32 bytes")
    try:
        identity = Identity.from_seed(seed, nickname)
    except ValueError as exc:
        raise corrupt(str(exc)) from exc
    stored_fingerprint = document.get("fingerprint")
    if stored_fingerprint is not None and stored_fingerprint != identity.public.fingerprint():
        raise corrupt("the stored fingerprint does not match the key")
    return identity


def load_or_create_identity(
    config_dir: Path | None = None, nickname: str | None = None
) -> Identity:
    """Load the user's identity, creating it on first run.

    A given `nickname` replaces the stored one (the key, and so the fingerprint, stays).
    Raises `IdentityError` for an unreadable or corrupt file rather than silently replacing it:
    a new key would make every peer who knew the old fingerprint distrust this user.
    """
    directory = config_dir if config_dir is not None else default_config_dir()
    path = directory / IDENTITY_FILE
    if nickname is not None:
        try:
            nickname = validate_nickname(nickname)
        except ValueError as exc:
            raise IdentityError(f"invalid nickname: {exc}") from exc
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        identity = Identity.generate(nickname if nickname is not None else _default_nickname())
        try:
            write_private(path, _encode_file(identity))
        except OSError as exc:
            raise IdentityError(f"cannot write identity file {path}: {exc}") from exc
        return identity
    except OSError as exc:
        raise IdentityError(f"cannot read identity file {path}: {exc}") from exc
    identity = _decode_file(path, data)
    _restrict_permissions(path)
    if nickname is not None and nickname != identity.nickname:
        identity = Identity.from_seed(identity.private_seed(), nickname)
        try:
            write_private(path, _encode_file(identity))
        except OSError as exc:
            raise IdentityError(f"cannot write identity file {path}: {exc}") from exc
    return identity
