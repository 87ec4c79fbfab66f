"""Re-join codes: a host whose public address changed, pasted to the players it cannot reach.

A host's router that restarts takes a new public address, and every link through it dies.
The table finds itself again over the links that are left (a signed `moved` record relayed
by the joiners, net/mesh/moved.py); where no joiner can be reached at all, the host prints a
*re-join code*, which travels as a reply code does (the chat that carried the invite), and
each player pastes it into the running client, which dials (or punches toward) the host's
new addresses (docs/protocol.md 2.15).

The code is authenticated with the table's mesh secret (HMAC-SHA256, bound to the table id),
which only seated players hold: nobody else can make a player dial out, and whatever answers
at the code's addresses must still prove the host's key in the handshake.

Binary layout (version 1, integers big-endian)::

    version     u8    = 1
    count       u8    n (1..4)
    n times:    kind << 4 | family (4 or 6), ip (4 or 16 bytes), port u16 (1..65535)
    tag         8 bytes = HMAC-SHA256(mesh_secret,
                    "buraco-p2p/rejoin/v1" || table_id || everything above)[:8]

Text form: `BRJ-` and the base32 of the binary form without padding, in groups of five.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import struct
from dataclasses import dataclass

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.reach.candidates import Candidate, CandidateKind, pack_candidates
from buraco_p2p.net.reach.invite import Endpoint, IPAddress, grouped_text

__all__ = ["REJOIN_VERSION", "TEXT_PREFIX", "RejoinCode", "RejoinCodeError", "looks_like_rejoin"]

REJOIN_VERSION = 1
TEXT_PREFIX = "BRJ"
MAX_CANDIDATES = 4
TAG_LEN = 8
GROUP = 5
_DOMAIN = b"buraco-p2p/rejoin/v1"
_MAX_TEXT_CHARS = 16 + 2 * (2 + MAX_CANDIDATES * 19 + TAG_LEN)
_B32 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
_KINDS = frozenset(int(k) for k in (CandidateKind.HOST, CandidateKind.MAPPED,
                                    CandidateKind.REFLEXIVE))  # fmt: skip


class RejoinCodeError(NetError, ValueError):
    """A re-join code that cannot be used; the message says why."""


def looks_like_rejoin(line: str) -> bool:
    """Whether a pasted line is meant as a re-join code (`BRJ-...`, any case)."""
    return line.strip().upper().startswith(TEXT_PREFIX + "-")


@dataclass(frozen=True)
class RejoinCode:
    """The host's new addresses, in the order to try them."""

    candidates: tuple[Candidate, ...]

    def __post_init__(self) -> None:
        if not 1 <= len(self.candidates) <= MAX_CANDIDATES:
            raise RejoinCodeError(f"a re-join code holds 1..{MAX_CANDIDATES} addresses")

    def to_bytes(self, mesh_secret: bytes, table_id: bytes) -> bytes:
        head = struct.pack(">BB", REJOIN_VERSION, len(self.candidates))
        body = head + pack_candidates(self.candidates)
        return body + _tag(mesh_secret, table_id, body)

    def to_text(self, mesh_secret: bytes, table_id: bytes) -> str:
        return grouped_text(TEXT_PREFIX, self.to_bytes(mesh_secret, table_id))

    @classmethod
    def from_bytes(cls, data: bytes, mesh_secret: bytes, table_id: bytes) -> RejoinCode:
        if len(data) < 2 + 7 + TAG_LEN:
            raise RejoinCodeError(f"the re-join code is truncated ({len(data)} bytes)")
        if data[0] != REJOIN_VERSION:
            raise RejoinCodeError(
                f"re-join code version {data[0]} is not supported (this program reads "
                f"{REJOIN_VERSION})"
            )
        body, tag = data[:-TAG_LEN], data[-TAG_LEN:]
        if not hmac.compare_digest(tag, _tag(mesh_secret, table_id, body)):
            raise RejoinCodeError(
                "the re-join code does not belong to this table, or a character was changed"
            )
        n = body[1]
        if not 1 <= n <= MAX_CANDIDATES:
            raise RejoinCodeError(f"a re-join code holds 1..{MAX_CANDIDATES} addresses, not {n}")
        pos, found = 2, []
        for _ in range(n):
            if pos >= len(body):
                raise RejoinCodeError("the re-join code lists more addresses than it holds")
            kind, family = body[pos] >> 4, body[pos] & 0x0F
            size = {4: 4, 6: 16}.get(family)
            if size is None or kind not in _KINDS:
                raise RejoinCodeError(f"unknown address tag {body[pos]:#04x} in re-join code")
            if pos + 1 + size + 2 > len(body):
                raise RejoinCodeError("the re-join code is truncated inside an address")
            raw = body[pos + 1 : pos + 1 + size]
            ip: IPAddress = ipaddress.IPv4Address(raw) if size == 4 else ipaddress.IPv6Address(raw)
            (port,) = struct.unpack(">H", body[pos + 1 + size : pos + 3 + size])
            if port == 0:
                raise RejoinCodeError("port 0 in re-join code")
            found.append(Candidate(CandidateKind(kind), Endpoint(ip, port)))
            pos += 3 + size
        if pos != len(body):
            raise RejoinCodeError(f"the re-join code has {len(body) - pos} unexpected bytes")
        return cls(tuple(found))

    @classmethod
    def from_text(cls, text: str, mesh_secret: bytes, table_id: bytes) -> RejoinCode:
        if len(text) > _MAX_TEXT_CHARS:
            raise RejoinCodeError(f"a re-join code is at most {_MAX_TEXT_CHARS} characters")
        cleaned = "".join(ch for ch in text if not ch.isspace() and ch != "-").upper()
        if not cleaned.startswith(TEXT_PREFIX):
            raise RejoinCodeError(f"a re-join code starts with {TEXT_PREFIX}-")
        b32 = cleaned[len(TEXT_PREFIX) :]
        bad = sorted({ch for ch in b32 if ch not in _B32})
        if bad:
            raise RejoinCodeError(
                f"re-join code contains characters outside base32: {''.join(bad)!r}"
            )
        if len(b32) % 8 in (1, 3, 6):
            raise RejoinCodeError("the re-join code is truncated (incomplete last group)")
        data = base64.b32decode(b32 + "=" * (-len(b32) % 8))
        return cls.from_bytes(data, mesh_secret, table_id)


def _tag(mesh_secret: bytes, table_id: bytes, body: bytes) -> bytes:
    return hmac.new(mesh_secret, _DOMAIN + table_id + body, hashlib.sha256).digest()[:TAG_LEN]
