"""Reply codes: a joiner's candidates, pasted back to a host that can only be reached by punching.

With no server, the only channel between a host behind a NAT and a joiner before they connect
is the chat that carried the invite. The joiner prints a short reply code with its candidates;
the host pastes it; both then dial each other (`punch.simultaneous_open`): the joiner from the
moment it prints the code, for as long as it waits, the host as soon as the code is pasted.

The code is authenticated with the room secret (HMAC-SHA256, bound to the table id), so only
an invite holder can make a host dial out: a stranger cannot use the host to send connection
attempts to addresses of their choosing.

Binary layout (version 1, integers big-endian)::

    version     u8    = 1
    counts      u8    nat_class << 6 | n (1..4)
    n times:    kind << 4 | family (4 or 6), ip (4 or 16 bytes), port u16 (1..65535)
                (kind: candidates.CandidateKind, 0..3; 3 is a TURN-relayed address)
    tag         8 bytes = HMAC-SHA256(room_secret,
                    "buraco-p2p/reply/v1" || table_id || everything above)[:8]

Text form: `BRR-` and the base32 of the binary form without padding, in groups of five.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import struct
from dataclasses import dataclass

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.reach.candidates import Candidate, CandidateKind, NatClass, pack_candidates
from buraco_p2p.net.reach.invite import Endpoint, IPAddress, grouped_text

REPLY_VERSION = 1
TEXT_PREFIX = "BRR"
MAX_CANDIDATES = 4
TAG_LEN = 8
GROUP = 5
_DOMAIN = b"buraco-p2p/reply/v1"
# The longest possible code: four IPv6 candidates, grouped, with the prefix.
_MAX_TEXT_CHARS = 16 + 2 * (2 + MAX_CANDIDATES * 19 + TAG_LEN)
_B32 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")


class ReplyCodeError(NetError, ValueError):
    """A reply code that cannot be used; the message says why."""


@dataclass(frozen=True)
class ReplyCode:
    """A joiner's candidates and NAT class."""

    candidates: tuple[Candidate, ...]
    nat_class: NatClass = NatClass.UNKNOWN

    def __post_init__(self) -> None:
        if not 1 <= len(self.candidates) <= MAX_CANDIDATES:
            raise ReplyCodeError(f"a reply code holds 1..{MAX_CANDIDATES} candidates")

    def to_bytes(self, room_secret: bytes, table_id: bytes) -> bytes:
        head = struct.pack(">BB", REPLY_VERSION, self.nat_class << 6 | len(self.candidates))
        body = head + pack_candidates(self.candidates)
        return body + _tag(room_secret, table_id, body)

    def to_text(self, room_secret: bytes, table_id: bytes) -> str:
        return grouped_text(TEXT_PREFIX, self.to_bytes(room_secret, table_id))

    @classmethod
    def from_bytes(cls, data: bytes, room_secret: bytes, table_id: bytes) -> ReplyCode:
        if len(data) < 2 + 7 + TAG_LEN:
            raise ReplyCodeError(f"the reply code is truncated ({len(data)} bytes)")
        if data[0] != REPLY_VERSION:
            raise ReplyCodeError(
                f"reply code version {data[0]} is not supported (this program reads "
                f"{REPLY_VERSION})"
            )
        body, tag = data[:-TAG_LEN], data[-TAG_LEN:]
        if not hmac.compare_digest(tag, _tag(room_secret, table_id, body)):
            raise ReplyCodeError(
                "the reply code does not belong to this table, or a character was changed"
            )
        nat, n = body[1] >> 6, body[1] & 0x3F
        pos, found = 2, []
        for _ in range(n):
            if pos >= len(body):
                raise ReplyCodeError("the reply code lists more candidates than it holds")
            kind, family = body[pos] >> 4, body[pos] & 0x0F
            size = {4: 4, 6: 16}.get(family)
            if size is None or kind > max(CandidateKind):
                raise ReplyCodeError(f"unknown candidate tag {body[pos]:#04x} in reply code")
            if pos + 1 + size + 2 > len(body):
                raise ReplyCodeError("the reply code is truncated inside a candidate")
            raw = body[pos + 1 : pos + 1 + size]
            ip: IPAddress = ipaddress.IPv4Address(raw) if size == 4 else ipaddress.IPv6Address(raw)
            (port,) = struct.unpack(">H", body[pos + 1 + size : pos + 3 + size])
            if port == 0:
                raise ReplyCodeError("port 0 in reply code")
            found.append(Candidate(CandidateKind(kind), Endpoint(ip, port)))
            pos += 3 + size
        if pos != len(body):
            raise ReplyCodeError(f"the reply code has {len(body) - pos} unexpected bytes")
        return cls(tuple(found), NatClass(nat))

    @classmethod
    def from_text(cls, text: str, room_secret: bytes, table_id: bytes) -> ReplyCode:
        if len(text) > _MAX_TEXT_CHARS:
            raise ReplyCodeError(f"a reply code is at most {_MAX_TEXT_CHARS} characters")
        cleaned = "".join(ch for ch in text if not ch.isspace() and ch != "-").upper()
        if not cleaned.startswith(TEXT_PREFIX):
            raise ReplyCodeError(f"a reply code starts with {TEXT_PREFIX}-")
        b32 = cleaned[len(TEXT_PREFIX) :]
        bad = sorted({ch for ch in b32 if ch not in _B32})
        if bad:
            raise ReplyCodeError(f"reply code contains characters outside base32: {''.join(bad)!r}")
        if len(b32) % 8 in (1, 3, 6):
            raise ReplyCodeError("the reply code is truncated (incomplete last group)")
        data = base64.b32decode(b32 + "=" * (-len(b32) % 8))
        return cls.from_bytes(data, room_secret, table_id)


def _tag(room_secret: bytes, table_id: bytes, body: bytes) -> bytes:
    return hmac.new(room_secret, _DOMAIN + table_id + body, hashlib.sha256).digest()[:TAG_LEN]
