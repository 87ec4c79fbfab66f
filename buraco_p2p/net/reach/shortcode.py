"""Short codes: an invite a person can read over the phone.

A full invite (invite.py) is 152 to 722 characters because it carries the table id, the host's
identity key and every address. A short code carries one address of the host and the room
secret only, 40 base32 characters for an IPv4 address. The joiner connects to that address and
runs the handshake keyed by the room secret (INIT kind 0x04, whose transcript starts from a
fixed label instead of the table id, handshake.py); the host, having checked the joiner's
message 3 and so its knowledge of the secret, sends the full invite over that link and closes
it. The joiner then joins with the full invite as usual.

What a short code does not give: the host's key is not pinned in advance. Whoever holds the
room secret (any invited player) could answer at that address and pose as the host, so the
host's fingerprint printed after joining is what the players compare by voice.

Binary layout (version 1, integers big-endian)::

    tag          u8        version << 4 | family   (version 1; family 4 or 6)
    ip           4 or 16 bytes
    port         u16       (1..65535)
    room_secret  16 bytes
    checksum     2 bytes   = SHA-256("buraco-p2p/short/v1" || everything above)[:2]

Text form: `BRS-` and the base32 of the binary form without padding, in groups of five.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import struct
from dataclasses import dataclass
from typing import Any

import trio

from buraco_p2p.net.channel.errors import LinkError, NetError
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.channel.link import SecureLink, connect
from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import (
    MAX_ADDRESSES,
    ROOM_SECRET_LEN,
    Endpoint,
    Invite,
    InviteError,
    IPAddress,
    grouped_text,
)

__all__ = [
    "SHORT_VERSION",
    "ShortCode",
    "ShortCodeError",
    "ShortCodeLinkError",
    "fetch_invite",
    "invite_message",
    "is_short_code",
    "send_invite",
]

SHORT_VERSION = 1
TEXT_PREFIX = "BRS"
CHECKSUM_LEN = 2
GROUP = 5
INVITE_TAG = "invite"
_DOMAIN = b"buraco-p2p/short/v1"
_MAX_TEXT_CHARS = 128
_B32 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")


class ShortCodeError(InviteError):
    """A short code that cannot be used (mistyped, cut off, or not a short code at all)."""


class ShortCodeLinkError(NetError):
    """The host reached with a short code did not hand over a usable invite."""


def is_short_code(text: str) -> bool:
    """Whether `text` is meant as a short code (it starts with `BRS`), right or wrong."""
    return text.strip().upper().startswith(TEXT_PREFIX)


@dataclass(frozen=True)
class ShortCode:
    """One address of the host and the table's room secret."""

    endpoint: Endpoint
    room_secret: bytes

    def __post_init__(self) -> None:
        if len(self.room_secret) != ROOM_SECRET_LEN:
            raise ShortCodeError(f"a short code's room secret is {ROOM_SECRET_LEN} bytes")

    @classmethod
    def for_invite(cls, invite: Invite) -> ShortCode | None:
        """The short code of `invite`: the host's public address where it has one (a port
        its router maps, else the address STUN saw: a LAN address means nothing to a joiner
        outside the host's network, and most routers take their own public address from
        inside too), else its first IPv4 address (shorter to read), else its first address;
        None if it lists none."""
        if not invite.addresses:
            return None
        kinds = dict(zip(invite.addresses, invite.kinds, strict=False))

        def rank(ep: Endpoint) -> tuple[int, int]:
            order = (CandidateKind.MAPPED, CandidateKind.REFLEXIVE)
            kind = kinds.get(ep, CandidateKind.HOST)
            return order.index(kind) if kind in order else len(order), ep.ip.version != 4

        return cls(min(invite.addresses, key=rank), invite.room_secret)

    def to_bytes(self) -> bytes:
        ep = self.endpoint
        body = (
            bytes((SHORT_VERSION << 4 | ep.ip.version,))
            + ep.ip.packed
            + struct.pack(">H", ep.port)
            + self.room_secret
        )
        return body + _checksum(body)

    def to_text(self) -> str:
        return grouped_text(TEXT_PREFIX, self.to_bytes())

    @classmethod
    def from_bytes(cls, data: bytes) -> ShortCode:
        if not data:
            raise ShortCodeError("the short code is empty")
        version, family = data[0] >> 4, data[0] & 0x0F
        if version != SHORT_VERSION:
            raise ShortCodeError(
                f"short code version {version} is not supported (this program reads "
                f"{SHORT_VERSION}), or its first characters were mistyped"
            )
        if family not in (4, 6):
            raise ShortCodeError(
                f"unknown address family {family} in the short code: its first characters "
                "were mistyped"
            )
        ip_len = 4 if family == 4 else 16
        size = 1 + ip_len + 2 + ROOM_SECRET_LEN + CHECKSUM_LEN
        if len(data) != size:
            raise ShortCodeError(
                f"the short code has {len(data)} bytes, {size} expected: characters are "
                f"{'missing' if len(data) < size else 'extra'}"
            )
        body, check = data[:-CHECKSUM_LEN], data[-CHECKSUM_LEN:]
        if _checksum(body) != check:
            raise ShortCodeError(
                "the short code's checksum does not match: a character was mistyped"
            )
        raw = body[1 : 1 + ip_len]
        ip: IPAddress = ipaddress.IPv4Address(raw) if family == 4 else ipaddress.IPv6Address(raw)
        (port,) = struct.unpack(">H", body[1 + ip_len : 3 + ip_len])
        if port == 0:
            raise ShortCodeError("port 0 in the short code")
        return cls(Endpoint(ip, port), body[3 + ip_len :])

    @classmethod
    def from_text(cls, text: str) -> ShortCode:
        """Parse a typed code; tolerant of case, spaces and dashes, strict about content."""
        if len(text) > _MAX_TEXT_CHARS:
            raise ShortCodeError(f"a short code is at most {_MAX_TEXT_CHARS} characters")
        cleaned = "".join(ch for ch in text if not ch.isspace() and ch != "-").upper()
        if not cleaned.startswith(TEXT_PREFIX):
            raise ShortCodeError(f"a short code starts with {TEXT_PREFIX}-")
        b32 = cleaned[len(TEXT_PREFIX) :]
        bad = sorted({ch for ch in b32 if ch not in _B32})
        if bad:
            raise ShortCodeError(
                f"the short code contains characters that cannot appear in it: {''.join(bad)!r} "
                "(the digits are 2-7 only; 0, 1, 8 and 9 are letters O, I, B and G misheard)"
            )
        if len(b32) % 8 in (1, 3, 6):
            raise ShortCodeError("the short code is incomplete: characters are missing")
        return cls.from_bytes(base64.b32decode(b32 + "=" * (-len(b32) % 8)))

    def __str__(self) -> str:
        return self.to_text()


def _checksum(body: bytes) -> bytes:
    return hashlib.sha256(_DOMAIN + body).digest()[:CHECKSUM_LEN]


def invite_message(invite: Invite) -> list[Any]:
    """What a host sends on a short-code link: `["invite", <binary invite, 2.5>]`."""
    return [INVITE_TAG, invite.to_bytes()]


async def send_invite(link: SecureLink, invite: Invite) -> None:
    """Host side: the handshake proved the joiner holds the room secret; hand it the invite.

    The link then closes (the caller's server does that): a short-code link carries nothing
    else, and its peer is never seated through it.
    """
    await link.send(invite_message(invite))


def parse_invite_message(message: Any, code: ShortCode, link: SecureLink) -> Invite:
    """Joiner side: the invite the host sent, checked against the code and the handshake."""
    if (
        not isinstance(message, list)
        or len(message) != 2
        or message[0] != INVITE_TAG
        or not isinstance(message[1], bytes)
    ):
        raise ShortCodeLinkError(f"{link.label} sent no invite for the short code")
    try:
        invite = Invite.from_bytes(message[1])
    except InviteError as exc:
        raise ShortCodeLinkError(f"{link.label} sent a bad invite: {exc}") from None
    if invite.room_secret != code.room_secret:
        raise ShortCodeLinkError(f"{link.label} sent an invite for another room secret")
    if invite.host_key != link.peer.raw:
        raise ShortCodeLinkError(f"{link.label} sent an invite naming another host key")
    # The address that answered first, then the host's others.
    pairs = list(zip(invite.addresses, invite.kinds, strict=True))
    first = [(ep, k) for ep, k in pairs if ep == code.endpoint] or [(code.endpoint, 0)]
    ordered = (first + [(ep, k) for ep, k in pairs if ep != code.endpoint])[:MAX_ADDRESSES]
    addresses = tuple(ep for ep, _ in ordered)
    kinds = tuple(k for _, k in ordered)
    return Invite(
        invite.table_id,
        invite.room_secret,
        invite.host_key,
        addresses[:MAX_ADDRESSES],
        invite.version,
        kinds[:MAX_ADDRESSES],
        invite.nat_class,
    )


async def fetch_invite(code: ShortCode, identity: Identity, *, timeout: float = 10.0) -> Invite:
    """Reach the host of `code` and learn the full invite from it, all within `timeout`.

    `ConnectError` if nobody answers at the address, `HandshakeError` if whoever answers
    does not hold the same room secret (or is not a host), `ShortCodeLinkError` if the host's
    answer is not a usable invite.
    """
    ep = code.endpoint
    deadline = trio.current_time() + timeout
    link = await connect(
        ep.host, ep.port, identity, room_secret=code.room_secret, table_id=b"\x00",
        timeout=timeout, short=True,
    )  # fmt: skip
    async with link:
        try:
            with trio.fail_after(max(0.0, deadline - trio.current_time())):
                message = await link.receive()
        except trio.TooSlowError:
            raise ShortCodeLinkError(f"{link.label} sent no invite within {timeout:g} s") from None
        except LinkError as exc:
            raise ShortCodeLinkError(f"{link.label} sent no invite: {exc}") from None
        return parse_invite_message(message, code, link)
