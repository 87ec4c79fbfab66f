"""Invite codes: everything a joiner needs to find and authenticate a table.

An invite is pasted by hand between people (chat, e-mail, voice), so it is a compact
binary record with a checksum, written as dash-grouped base32 that survives copy-paste,
line wrapping and case changes. The host's full public key is inside, so the first
handshake with the host is already pinned: a man in the middle would need the key too.

Binary layout (version 1, all integers big-endian)::

    version      u8        = 1
    table_id     16 bytes
    room_secret  16 bytes  (128-bit; mixed into every handshake of the table)
    host_key     32 bytes  (Ed25519 public key of the host)
    counts       u8        nat_class << 6 | n_addr   (n_addr 0..16, bit 5 zero)
    n_addr times:
        family   u8        kind << 4 | 4 or 6   (kind: 0 own interface, 1 mapped, 2 reflexive,
                                                3 relayed by a TURN server)
        ip       4 or 16 bytes
        port     u16       (1..65535)
    checksum     4 bytes   = SHA-256("buraco-p2p/invite/v1" || everything above)[:4]

The candidate kinds and the NAT class (0 unknown, 1 open, 2 endpoint-independent, 3 random)
sit in bits an invite without them leaves zero, so such an invite reads the same as before.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import struct
from dataclasses import dataclass

from buraco_p2p.net.channel.errors import NetError

INVITE_VERSION = 1
TEXT_PREFIX = "BRC"
TABLE_ID_LEN = 16
ROOM_SECRET_LEN = 16
KEY_LEN = 32
MAX_ADDRESSES = 16
MAX_KIND = 3
MAX_NAT_CLASS = 3
CHECKSUM_LEN = 4
GROUP = 5
_CHECKSUM_DOMAIN = b"buraco-p2p/invite/v1"
_HEADER_LEN = 1 + TABLE_ID_LEN + ROOM_SECRET_LEN + KEY_LEN + 1
# The longest text we will even try to decode: every address IPv6, every char grouped.
_MAX_TEXT_CHARS = 4 * (_HEADER_LEN + MAX_ADDRESSES * 19 + CHECKSUM_LEN)


class InviteError(NetError, ValueError):
    """An invite code that cannot be used; the message says what is wrong with it."""


class InviteFormatError(InviteError):
    """Not an invite code at all (bad characters, trailing bytes, impossible field values)."""


class InviteChecksumError(InviteError):
    """The code has the right shape but a character was changed (typo or tampering)."""


class InviteVersionError(InviteError):
    """The code was made by a newer or older, incompatible buraco-p2p."""


class InviteTruncatedError(InviteError):
    """Part of the code is missing, usually from an incomplete copy-paste."""


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Endpoint:
    """One address a peer can be reached at. Kept numeric: invites never carry hostnames."""

    ip: IPAddress
    port: int

    def __post_init__(self) -> None:
        if not 1 <= self.port <= 65535:
            raise InviteFormatError(f"port {self.port} is out of range 1..65535")

    @classmethod
    def parse(cls, ip: str, port: int) -> Endpoint:
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError as exc:
            raise InviteFormatError(f"{ip!r} is not a numeric IP address") from exc
        return cls(addr, port)

    @property
    def host(self) -> str:
        return str(self.ip)

    def __str__(self) -> str:
        if self.ip.version == 6:
            return f"[{self.ip}]:{self.port}"
        return f"{self.ip}:{self.port}"


@dataclass(frozen=True)
class Invite:
    """A decoded invite. `host_key` is the raw 32-byte Ed25519 public key of the host."""

    table_id: bytes
    room_secret: bytes
    host_key: bytes
    addresses: tuple[Endpoint, ...]
    version: int = INVITE_VERSION
    # Per address, how it was learnt (candidates.CandidateKind); empty means all own addresses.
    kinds: tuple[int, ...] = ()
    # The host's NAT class (candidates.NatClass); 0 when it asked no STUN server.
    nat_class: int = 0

    def __post_init__(self) -> None:
        if not self.kinds:
            object.__setattr__(self, "kinds", (0,) * len(self.addresses))
        if len(self.kinds) != len(self.addresses):
            raise InviteFormatError("an invite needs one candidate kind per address")
        if any(not 0 <= k <= MAX_KIND for k in self.kinds):
            raise InviteFormatError(f"candidate kinds are 0..{MAX_KIND}")
        if not 0 <= self.nat_class <= MAX_NAT_CLASS:
            raise InviteFormatError(f"NAT classes are 0..{MAX_NAT_CLASS}")
        if len(self.table_id) != TABLE_ID_LEN:
            raise InviteFormatError(f"table id must be {TABLE_ID_LEN} bytes")
        if len(self.room_secret) != ROOM_SECRET_LEN:
            raise InviteFormatError(f"room secret must be {ROOM_SECRET_LEN} bytes")
        if len(self.host_key) != KEY_LEN:
            raise InviteFormatError(f"host key must be {KEY_LEN} bytes")
        if len(self.addresses) > MAX_ADDRESSES:
            raise InviteFormatError(f"at most {MAX_ADDRESSES} addresses fit in an invite")

    def to_bytes(self) -> bytes:
        parts = [
            struct.pack(">B", self.version),
            self.table_id,
            self.room_secret,
            self.host_key,
            struct.pack(">B", self.nat_class << 6 | len(self.addresses)),
        ]
        for ep, kind in zip(self.addresses, self.kinds, strict=True):
            parts.append(struct.pack(">B", kind << 4 | ep.ip.version))
            parts.append(ep.ip.packed)
            parts.append(struct.pack(">H", ep.port))
        body = b"".join(parts)
        return body + _checksum(body)

    def to_text(self) -> str:
        """The copy-pasteable form: `BRC-XXXXX-XXXXX-...` (base32, no padding)."""
        return grouped_text(TEXT_PREFIX, self.to_bytes())

    @classmethod
    def from_bytes(cls, data: bytes) -> Invite:
        if not data:
            raise InviteTruncatedError("the invite code is empty")
        version = data[0]
        if version != INVITE_VERSION:
            raise InviteVersionError(
                f"invite code version {version} is not supported (this program reads version "
                f"{INVITE_VERSION}); ask the host for a code from a matching buraco-p2p"
            )
        if len(data) < _HEADER_LEN + CHECKSUM_LEN:
            raise InviteTruncatedError(
                f"the invite code is truncated ({len(data)} bytes, at least "
                f"{_HEADER_LEN + CHECKSUM_LEN} needed)"
            )
        nat_class, n_addr = data[_HEADER_LEN - 1] >> 6, data[_HEADER_LEN - 1] & 0x3F
        needed = _HEADER_LEN
        families: list[int] = []
        pos = _HEADER_LEN
        for _ in range(min(n_addr, MAX_ADDRESSES + 1)):
            if pos >= len(data) - CHECKSUM_LEN:
                needed = pos + 1
                break
            family = data[pos] & 0x0F
            families.append(data[pos])
            ip_len = 4 if family == 4 else 16
            pos += 1 + ip_len + 2
            needed = pos
        else:
            needed = pos
        if len(data) < needed + CHECKSUM_LEN:
            raise InviteTruncatedError(
                f"the invite code is truncated ({len(data)} bytes, {needed + CHECKSUM_LEN} needed)"
            )
        body, check = data[:needed], data[needed : needed + CHECKSUM_LEN]
        if _checksum(body) != check:
            raise InviteChecksumError(
                "the invite code's checksum does not match: a character was mistyped or changed"
            )
        if len(data) != needed + CHECKSUM_LEN:
            raise InviteFormatError(
                f"the invite code has {len(data) - needed - CHECKSUM_LEN} unexpected trailing bytes"
            )
        if n_addr > MAX_ADDRESSES:
            raise InviteFormatError(f"invite lists {n_addr} addresses, at most {MAX_ADDRESSES}")
        off = 1
        table_id = data[off : off + TABLE_ID_LEN]
        off += TABLE_ID_LEN
        room_secret = data[off : off + ROOM_SECRET_LEN]
        off += ROOM_SECRET_LEN
        host_key = data[off : off + KEY_LEN]
        off += KEY_LEN + 1
        addresses: list[Endpoint] = []
        kinds: list[int] = []
        for tagged in families:
            family, kind = tagged & 0x0F, tagged >> 4
            if kind > MAX_KIND:
                raise InviteFormatError(f"unknown candidate kind {kind} in invite")
            kinds.append(kind)
            off += 1
            ip: IPAddress
            if family == 4:
                ip = ipaddress.IPv4Address(data[off : off + 4])
                off += 4
            elif family == 6:
                ip = ipaddress.IPv6Address(data[off : off + 16])
                off += 16
            else:
                raise InviteFormatError(f"unknown address family {family} in invite")
            (port,) = struct.unpack(">H", data[off : off + 2])
            off += 2
            addresses.append(Endpoint(ip, port))
        return cls(
            table_id, room_secret, host_key, tuple(addresses), version, tuple(kinds), nat_class
        )

    @classmethod
    def from_text(cls, text: str) -> Invite:
        """Parse a pasted code; tolerant of case, whitespace and dashes, strict about content."""
        if len(text) > _MAX_TEXT_CHARS:
            raise InviteFormatError(f"an invite code is at most {_MAX_TEXT_CHARS} characters")
        cleaned = "".join(ch for ch in text if not ch.isspace() and ch != "-").upper()
        if not cleaned.startswith(TEXT_PREFIX):
            raise InviteFormatError(f"an invite code starts with {TEXT_PREFIX}-")
        b32 = cleaned[len(TEXT_PREFIX) :]
        bad = sorted({ch for ch in b32 if ch not in _B32_ALPHABET})
        if bad:
            raise InviteFormatError(
                f"invite code contains characters that cannot appear in it: {''.join(bad)!r}"
            )
        need = _HEADER_LEN + CHECKSUM_LEN
        if len(b32) * 5 // 8 < need:
            # Too short to hold even the header: say so, rather than read its first byte as
            # a version number.
            raise InviteTruncatedError(
                f"this is not a whole invite code: {len(b32)} characters after {TEXT_PREFIX}-, "
                f"a code has at least {-(-need * 8 // 5)}; copy the whole code the host shows"
            )
        if len(b32) % 8 in (1, 3, 6):
            # No whole number of bytes encodes to these lengths: something was cut off.
            raise InviteTruncatedError("the invite code is truncated (incomplete last group)")
        padded = b32 + "=" * (-len(b32) % 8)
        try:
            data = base64.b32decode(padded)
        except ValueError as exc:  # binascii.Error is a ValueError
            raise InviteFormatError(f"invite code is not valid base32: {exc}") from exc
        return cls.from_bytes(data)

    def __str__(self) -> str:
        return self.to_text()


_B32_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")


def _checksum(body: bytes) -> bytes:
    return hashlib.sha256(_CHECKSUM_DOMAIN + body).digest()[:CHECKSUM_LEN]


def grouped_text(prefix: str, data: bytes) -> str:
    """The copy-pasteable form every code shares (invite, short, reply and re-join codes):
    `prefix`, then `data` in base32 without padding, in dash-separated groups of `GROUP`."""
    b32 = base64.b32encode(data).decode("ascii").rstrip("=")
    return "-".join([prefix, *(b32[i : i + GROUP] for i in range(0, len(b32), GROUP))])
