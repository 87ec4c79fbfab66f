"""STUN Binding (RFC 8489) over TCP: learning the address a NAT gives one of our sockets.

A peer behind a NAT does not know the public address:port its router maps a connection to.
A STUN server answers a Binding request with that address (XOR-MAPPED-ADDRESS). The request
is sent over TCP from the very local port the peer will later punch from, so the mapping the
server sees is the one a simultaneous open reuses on a NAT whose mapping is
endpoint-independent. Two servers (or two addresses of one) that see the same public port
mean such a NAT; different ports mean a NAT that picks a random port per destination, which no
punch gets through.

The Binding method is spoken with no authentication: the answer is a hint, never trusted
for anything but trying a connection that the handshake then authenticates. The message
code here (types, attributes, MESSAGE-INTEGRITY, ERROR-CODE, a framing reader that keeps
what follows a message) is also what the TURN client (turn.py) speaks.
`serve_binding` answers requests; it is what a test lab (or anyone who wants to run their own
server) puts on the other side.

Message layout (RFC 8489 section 5, integers big-endian)::

    type u16 (0x0001 request, 0x0101 success response) | length u16 | cookie u32 0x2112A442
    | transaction id 12 bytes | attributes (type u16, length u16, value, padded to 4)
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import socket
import struct
from dataclasses import dataclass

import trio

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.reach.candidates import NatClass, classify
from buraco_p2p.net.reach.invite import Endpoint, IPAddress

MAGIC_COOKIE = 0x2112A442
BINDING_REQUEST = 0x0001
BINDING_SUCCESS = 0x0101
ATTR_MAPPED_ADDRESS = 0x0001
ATTR_XOR_MAPPED_ADDRESS = 0x0020
ATTR_MESSAGE_INTEGRITY = 0x0008
ATTR_ERROR_CODE = 0x0009
HEADER_LEN = 20
# Message classes (RFC 8489 section 5): the two class bits sit at bits 4 and 8 of the type.
REQUEST, INDICATION, SUCCESS, ERROR = 0x0000, 0x0010, 0x0100, 0x0110
_CLASS_BITS = 0x0110
# A Binding response is a few dozen bytes; anything much longer is not one we asked for.
MAX_MESSAGE = 548


class StunError(NetError):
    """A STUN server did not answer, or answered with something that is not a Binding reply."""


@dataclass(frozen=True)
class StunMessage:
    """A decoded STUN message: its type, transaction id and attributes in order."""

    kind: int
    transaction: bytes
    attributes: tuple[tuple[int, bytes], ...]

    def to_bytes(self) -> bytes:
        body = b"".join(
            struct.pack(">HH", t, len(v)) + v + b"\0" * (-len(v) % 4) for t, v in self.attributes
        )
        return struct.pack(">HHI", self.kind, len(body), MAGIC_COOKIE) + self.transaction + body

    @classmethod
    def from_bytes(cls, data: bytes) -> StunMessage:
        if len(data) < HEADER_LEN:
            raise StunError(f"a STUN message is at least {HEADER_LEN} bytes, got {len(data)}")
        kind, length, cookie = struct.unpack(">HHI", data[:8])
        if kind & 0xC000 or cookie != MAGIC_COOKIE:
            raise StunError("not a STUN message (bad leading bits or magic cookie)")
        if length % 4 or len(data) != HEADER_LEN + length:
            raise StunError(f"STUN length field {length} does not match {len(data)} bytes")
        attrs: list[tuple[int, bytes]] = []
        pos = HEADER_LEN
        while pos < len(data):
            if pos + 4 > len(data):
                raise StunError("STUN attribute header cut off")
            t, n = struct.unpack(">HH", data[pos : pos + 4])
            end = pos + 4 + n
            if end > len(data):
                raise StunError(f"STUN attribute {t:#06x} runs past the message")
            attrs.append((t, data[pos + 4 : end]))
            pos = end + (-n % 4)
        return cls(kind, data[8:HEADER_LEN], tuple(attrs))


def message_type(method: int, klass: int) -> int:
    """The 14-bit type of `method` (12 bits) in `klass` (REQUEST, INDICATION, SUCCESS, ERROR)."""
    return (method & 0x000F) | (method & 0x0070) << 1 | (method & 0x0F80) << 2 | klass


def method_of(kind: int) -> int:
    """The method of a message type (its class bits removed)."""
    return (kind & 0x000F) | (kind & 0x00E0) >> 1 | (kind & 0x3E00) >> 2


def class_of(kind: int) -> int:
    return kind & _CLASS_BITS


def attribute(msg: StunMessage, kind: int) -> bytes | None:
    """The value of the first attribute of `kind` in `msg` (RFC 8489: later ones are ignored)."""
    return next((v for t, v in msg.attributes if t == kind), None)


def with_integrity(msg: StunMessage, key: bytes) -> bytes:
    """`msg` with a MESSAGE-INTEGRITY attribute (RFC 8489 section 14.5) appended: HMAC-SHA1
    under `key` over the message up to that attribute, its length field already counting it."""
    body = msg.to_bytes()
    length = len(body) - HEADER_LEN + 24
    head = body[:2] + struct.pack(">H", length) + body[4:]
    mac = hmac.new(key, head, hashlib.sha1).digest()
    return head + struct.pack(">HH", ATTR_MESSAGE_INTEGRITY, 20) + mac


def integrity_holds(data: bytes, key: bytes) -> bool:
    """Whether the message `data` carries a MESSAGE-INTEGRITY that `key` produced. Attributes
    after it (FINGERPRINT) are outside the hash, as RFC 8489 says."""
    pos = HEADER_LEN
    while pos + 4 <= len(data):
        t, n = struct.unpack(">HH", data[pos : pos + 4])
        if t == ATTR_MESSAGE_INTEGRITY:
            if n != 20 or pos + 24 > len(data):
                return False
            length = pos + 24 - HEADER_LEN
            head = data[:2] + struct.pack(">H", length) + data[4:pos]
            want = hmac.new(key, head, hashlib.sha1).digest()
            return hmac.compare_digest(want, data[pos + 4 : pos + 24])
        pos += 4 + n + (-n % 4)
    return False


def error_code(msg: StunMessage) -> tuple[int, str]:
    """(code, reason) of an error response's ERROR-CODE (RFC 8489 section 14.8); the reason
    is the server's text, cut to printable ASCII and 80 characters before anyone shows it."""
    value = attribute(msg, ATTR_ERROR_CODE)
    if value is None or len(value) < 4:
        return 0, "no error code"
    code = (value[2] & 0x07) * 100 + value[3]
    text = value[4:].decode("utf-8", "replace").rstrip("\0 ")  # some servers add NULs
    reason = "".join(ch if 32 <= ord(ch) < 127 else "?" for ch in text)[:80]
    return code, reason


def error_value(code: int, reason: str) -> bytes:
    """The ERROR-CODE value for `code` and `reason` (what a server sends; tests and vectors)."""
    return struct.pack(">HBB", 0, code // 100, code % 100) + reason.encode("utf-8")


class StunReader:
    """Whole STUN messages from a byte stream, one at a time, keeping whatever follows the
    last one read (`rest`): on a TURN data connection the peer's bytes come right after the
    ConnectionBind response."""

    def __init__(self, stream: trio.abc.ReceiveStream, limit: int, label: str) -> None:
        self.stream, self.limit, self.label = stream, limit, label
        self.rest = b""

    async def message(self) -> bytes:
        """The next message; `StunError` (naming `label`) if the stream ends or sends
        something longer than `limit` or not framed as STUN."""
        buf = self.rest
        while True:
            if len(buf) >= 4:
                if buf[0] & 0xC0:
                    raise StunError(f"{self.label} sent bytes that are not a STUN message")
                end = HEADER_LEN + struct.unpack(">H", buf[2:4])[0]
                if end > self.limit:
                    raise StunError(f"{self.label} sent a message longer than {self.limit} bytes")
                if len(buf) >= end:
                    self.rest = buf[end:]
                    return buf[:end]
            chunk = await self.stream.receive_some(self.limit)
            if not chunk:
                raise StunError(f"{self.label} closed the connection")
            buf += chunk


def binding_request(transaction: bytes | None = None) -> StunMessage:
    return StunMessage(BINDING_REQUEST, transaction or secrets.token_bytes(12), ())


def xor_address(endpoint: Endpoint, transaction: bytes) -> bytes:
    """The XOR-MAPPED-ADDRESS value for `endpoint` (RFC 8489 section 14.2)."""
    mask = struct.pack(">I", MAGIC_COOKIE) + transaction
    family = 0x01 if endpoint.ip.version == 4 else 0x02
    packed = endpoint.ip.packed
    xored = bytes(a ^ b for a, b in zip(packed, mask, strict=False))
    return struct.pack(">BBH", 0, family, endpoint.port ^ (MAGIC_COOKIE >> 16)) + xored


def parse_xor_address(value: bytes, transaction: bytes) -> Endpoint:
    if len(value) not in (8, 20):
        raise StunError(f"XOR-MAPPED-ADDRESS of {len(value)} bytes")
    _, family, xport = struct.unpack(">BBH", value[:4])
    mask = struct.pack(">I", MAGIC_COOKIE) + transaction
    raw = bytes(a ^ b for a, b in zip(value[4:], mask, strict=False))
    ip: IPAddress
    if family == 0x01 and len(raw) == 4:
        ip = ipaddress.IPv4Address(raw)
    elif family == 0x02 and len(raw) == 16:
        ip = ipaddress.IPv6Address(raw)
    else:
        raise StunError(f"XOR-MAPPED-ADDRESS family {family} does not fit its length")
    port = xport ^ (MAGIC_COOKIE >> 16)
    if port == 0:
        raise StunError("XOR-MAPPED-ADDRESS with port 0")
    return Endpoint(ip, port)


def binding_response(request: StunMessage, observed: Endpoint) -> StunMessage:
    return StunMessage(
        BINDING_SUCCESS,
        request.transaction,
        ((ATTR_XOR_MAPPED_ADDRESS, xor_address(observed, request.transaction)),),
    )


def mapped_from_response(data: bytes, transaction: bytes) -> Endpoint:
    """The reflexive address in a Binding success response to our request `transaction`."""
    msg = StunMessage.from_bytes(data)
    if msg.kind != BINDING_SUCCESS:
        raise StunError(f"STUN answer of type {msg.kind:#06x}, not a Binding success")
    if msg.transaction != transaction:
        raise StunError("STUN answer for another transaction")
    for t, v in msg.attributes:
        if t == ATTR_XOR_MAPPED_ADDRESS:
            return parse_xor_address(v, transaction)
    raise StunError("STUN Binding answer without XOR-MAPPED-ADDRESS")


async def _read_message(stream: trio.SocketStream) -> bytes:
    buf = b""
    while len(buf) < HEADER_LEN or len(buf) < HEADER_LEN + struct.unpack(">H", buf[2:4])[0]:
        if len(buf) > MAX_MESSAGE:
            raise StunError(f"STUN message longer than {MAX_MESSAGE} bytes")
        chunk = await stream.receive_some(MAX_MESSAGE)
        if not chunk:
            raise StunError("STUN connection closed before a whole message")
        buf += chunk
    end = HEADER_LEN + struct.unpack(">H", buf[2:4])[0]
    if end > MAX_MESSAGE:
        raise StunError(f"STUN message longer than {MAX_MESSAGE} bytes")
    return buf[:end]


async def binding(
    server: Endpoint, local: trio.socket.SocketType, timeout: float = 3.0
) -> Endpoint:
    """Ask `server` which address it sees for `local`, a bound, unconnected TCP socket.

    `local` is connected to the server and closed afterwards; the caller binds the port again
    (with SO_REUSEADDR/SO_REUSEPORT) to punch from the same mapping.
    """
    request = binding_request()
    with trio.move_on_after(timeout) as scope:
        try:
            await local.connect((server.host, server.port))
        except OSError as exc:
            raise StunError(f"STUN server {server}: {exc.strerror or exc}") from exc
        stream = trio.SocketStream(local)
        async with stream:
            await stream.send_all(request.to_bytes())
            data = await _read_message(stream)
        return mapped_from_response(data, request.transaction)
    assert scope.cancelled_caught
    raise StunError(f"STUN server {server} did not answer within {timeout:g} s")


async def serve_binding(listener: trio.SocketListener) -> None:
    """Answer STUN Binding requests on `listener` forever (one request per connection)."""

    async def one(stream: trio.abc.Stream) -> None:
        assert isinstance(stream, trio.SocketStream)
        async with stream:
            with trio.move_on_after(5):
                try:
                    data = await _read_message(stream)
                    request = StunMessage.from_bytes(data)
                except (StunError, trio.BrokenResourceError):
                    return
                if request.kind != BINDING_REQUEST:
                    return
                host, port = stream.socket.getpeername()[:2]
                answer = binding_response(request, Endpoint.parse(host, port))
                try:
                    await stream.send_all(answer.to_bytes())
                except trio.BrokenResourceError:
                    return

    await trio.serve_listeners(one, [listener])


async def probe(
    local_port: int, servers: tuple[Endpoint, Endpoint], local_ips: tuple[IPAddress, ...] = ()
) -> tuple[Endpoint, NatClass]:
    """Our reflexive address for `local_port` and the NAT class, from two STUN servers.

    Both requests leave from `local_port` (shared with SO_REUSEPORT), so a NAT that keeps one
    public port per local port answers the same port twice.
    """
    from buraco_p2p.net.reach.punch import reusable_socket

    seen: list[Endpoint] = []
    for server in servers:
        family = socket.AF_INET6 if server.ip.version == 6 else socket.AF_INET
        seen.append(await binding(server, await reusable_socket(family, local_port)))
    return seen[0], classify(local_ips, seen[0], seen[1])
