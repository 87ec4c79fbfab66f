"""STUN Binding (RFC 8489) over TCP: learning the address a NAT gives one of our sockets.

A peer behind a NAT does not know the public address:port its router maps a connection to.
A STUN server answers a Binding request with that address (XOR-MAPPED-ADDRESS). The request
is sent over TCP from the very local port the peer will later punch from, so the mapping the
server sees is the one a simultaneous open reuses on a NAT whose mapping is
endpoint-independent. Two servers (or two addresses of one) that see the same public port
mean such a NAT; different ports mean a NAT that picks a random port per destination, which no
punch gets through.

Only the Binding method is spoken, with no authentication: the answer is a hint, never
trusted for anything but trying a connection that the handshake then authenticates.
`serve_binding` answers requests; it is what a test lab (or anyone who wants to run their own
server) puts on the other side.

Message layout (RFC 8489 section 5, integers big-endian)::

    type u16 (0x0001 request, 0x0101 success response) | length u16 | cookie u32 0x2112A442
    | transaction id 12 bytes | attributes (type u16, length u16, value, padded to 4)
"""

from __future__ import annotations

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
HEADER_LEN = 20
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
