"""TURN's pieces that hold no connection: its codes, the server a user names (`--turn
USER:PASSWORD@IP:PORT`, parsed without any name lookup), the error words a person sees, and
the stream a bound data connection becomes. The client proper is turn.py."""

from __future__ import annotations

import hashlib
import ipaddress
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass

import trio

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.reach.invite import Endpoint, InviteError
from buraco_p2p.net.reach.stun import REQUEST, StunMessage, message_type, with_integrity

# Methods (RFC 8656 section 18, RFC 6062 section 6.1).
ALLOCATE, REFRESH, CREATE_PERMISSION = 0x003, 0x004, 0x008
CONNECT, CONNECTION_BIND, CONNECTION_ATTEMPT = 0x00A, 0x00B, 0x00C
# Attributes.
ATTR_USERNAME, ATTR_REALM, ATTR_NONCE = 0x0006, 0x0014, 0x0015
ATTR_LIFETIME, ATTR_XOR_PEER_ADDRESS = 0x000D, 0x0012
ATTR_XOR_RELAYED_ADDRESS, ATTR_REQUESTED_TRANSPORT = 0x0016, 0x0019
ATTR_XOR_MAPPED_ADDRESS, ATTR_CONNECTION_ID = 0x0020, 0x002A
ATTR_MESSAGE_INTEGRITY = 0x0008
TRANSPORT_TCP = 6
# The comprehension-required attributes (types below 0x8000) that STUN, TURN and TCP
# allocations define (RFC 8489 section 18.3, RFC 8656 section 18, RFC 6062 section 6.2). An
# answer holding any other is one we do not understand, which RFC 8489 section 6.3 makes a
# failed transaction (an indication holding one is dropped).
KNOWN_REQUIRED = frozenset({
    0x0001, 0x0006, 0x0008, 0x0009, 0x000A, 0x000C, 0x000D, 0x0012, 0x0013, 0x0014, 0x0015,
    0x0016, 0x0017, 0x0018, 0x0019, 0x001A, 0x001C, 0x001D, 0x001E, 0x0020, 0x0022, 0x002A,
})  # fmt: skip
TURN_DEFAULT_PORT = 3478
# Our requests' answers are a few hundred bytes; more is not an answer we asked for.
MAX_TURN_MESSAGE = 2048
# REALM and NONCE hold fewer than 128 characters, so at most 763 bytes (RFC 8489 sections
# 14.9 and 14.10): a longer one is not TURN, and we would sign with what the server never meant.
MAX_REALM_OR_NONCE = 763
# At most this many data connections being bound at once, and waiting to be taken: a peer
# that floods the relayed address (from a permitted IP) costs us no more than that.
MAX_BINDING = 8
MAX_WAITING = 8


Attrs = Callable[[bytes], list[tuple[int, bytes]]]


class TurnError(NetError):
    """A TURN server that cannot be used, or that sent what TURN does not allow; the message
    names the server and the reason on one line."""


@dataclass(frozen=True)
class TurnServer:
    """A TURN server the user named, with the long-term credentials it knows us by."""

    user: str
    password: str
    endpoint: Endpoint

    def __str__(self) -> str:
        return f"TURN server {self.endpoint}"


class _PeerName:
    """What `peer_name` asks of a stream's `socket`: the peer behind the relay."""

    def __init__(self, peer: Endpoint) -> None:
        self._peer = peer

    def getpeername(self) -> tuple[str, int]:
        return (self._peer.host, self._peer.port)


class TurnStream(trio.abc.Stream):
    """A bound data connection: bytes to and from `peer`, through the TURN server.

    Its `socket.getpeername()` names the peer (not the server), so the handshake, the
    admission limits and error messages see the peer's address as for a direct connection.
    """

    def __init__(
        self, inner: trio.SocketStream, peer: Endpoint, server: TurnServer, first: bytes = b""
    ) -> None:
        self.inner, self.peer, self.server = inner, peer, server
        self.socket = _PeerName(peer)
        self._first = first

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        if self._first:
            await trio.lowlevel.checkpoint()
            n = len(self._first) if max_bytes is None else max_bytes
            out, self._first = self._first[:n], self._first[n:]
            return out
        return await self.inner.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Refused(Exception):
    """An error response from the server (the client turns it into a `TurnError`)."""

    def __init__(self, code: int, reason: str, realm: bytes | None, nonce: bytes | None) -> None:
        super().__init__(code, reason)
        self.code, self.reason, self.realm, self.nonce = code, reason, realm, nonce

    def words(self) -> str:
        meaning = _MEANING.get(self.code)
        said = f"{self.code} {self.reason}".strip()
        return f"{meaning} ({said})" if meaning else f"refused: {said}"


_MEANING = {
    401: "refused the user name or password",
    403: "forbids this (a peer address it will not relay to, say)",
    437: "says the allocation does not match (it may have expired)",
    440: "does not offer that address family",
    441: "refused the user name or password",
    442: "refuses TCP allocations",
    486: "refuses more allocations for this user",
    508: "has no relay port left",
}


def why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return f"connection failed: {os_reason(exc)}"
    if isinstance(exc, trio.BrokenResourceError):
        return "the connection broke"
    text = str(exc)
    # StunReader names the server already; keep the reason only.
    return text.split(": ", 1)[1] if text.startswith("TURN server") and ": " in text else text




async def connect_tcp(ep: Endpoint) -> trio.SocketStream:
    """A TCP connection to the numeric `ep` (no name lookup), whose failure is an `OSError`
    with the system's reason ("Connection refused", "No route to host")."""
    family = socket.AF_INET6 if ep.ip.version == 6 else socket.AF_INET
    sock = trio.socket.socket(family, socket.SOCK_STREAM)
    try:
        await sock.connect((ep.host, ep.port))
    except BaseException:
        sock.close()
        raise
    return trio.SocketStream(sock)


def os_reason(exc: OSError) -> str:
    """The system's words for `exc` ("Connection refused"), without the address trio adds."""
    return os.strerror(exc.errno) if exc.errno else str(exc)


def not_understood(attributes: tuple[tuple[int, bytes], ...]) -> int | None:
    """The first comprehension-required attribute type in `attributes` that we do not know."""
    return next((t for t, _ in attributes if t < 0x8000 and t not in KNOWN_REQUIRED), None)


def before_integrity(attributes: tuple[tuple[int, bytes], ...]) -> tuple[tuple[int, bytes], ...]:
    """The attributes up to MESSAGE-INTEGRITY: what follows it is not covered by the key, so
    RFC 8489 section 14.5 has a reader ignore it (FINGERPRINT among them)."""
    out: list[tuple[int, bytes]] = []
    for t, v in attributes:
        if t == ATTR_MESSAGE_INTEGRITY:
            break
        out.append((t, v))
    return tuple(out)


def long_term_key(user: str, realm: bytes, password: str) -> bytes:
    """The long-term credential key (RFC 8489 section 9.2.2): MD5(user ":" realm ":" password)."""
    return hashlib.md5(user.encode() + b":" + realm + b":" + password.encode()).digest()


def signed_request(
    method: int, transaction: bytes, attrs: list[tuple[int, bytes]], *, user: str,
    realm: bytes, nonce: bytes, key: bytes,
) -> bytes:
    """A request with `attrs`, then USERNAME, REALM, NONCE and MESSAGE-INTEGRITY under `key`."""
    auth = [(ATTR_USERNAME, user.encode()), (ATTR_REALM, realm), (ATTR_NONCE, nonce)]
    msg = StunMessage(message_type(method, REQUEST), transaction, (*attrs, *auth))
    return with_integrity(msg, key)


class TurnOptionError(NetError, ValueError):
    """A `--turn` value that is not USER:PASSWORD@IP[:PORT] with a numeric address."""


MAX_CREDENTIAL = 256


def parse_turn_server(text: str) -> TurnServer:
    """`USER:PASSWORD@IP`, `USER:PASSWORD@IP:PORT` or `USER:PASSWORD@[IPv6]:PORT`; the
    address numeric (no name is looked up), the port 3478 unless given. The password may
    hold ':' and '@' (the address follows the last '@'); the user may not hold ':'."""
    at = text.rfind("@")
    if at < 0:
        raise TurnOptionError("--turn: expected USER:PASSWORD@IP:PORT")
    cred, where = text[:at], text[at + 1 :].strip()
    user, colon, password = cred.partition(":")
    if not user or not colon or not password:
        raise TurnOptionError("--turn: give the user and the password as USER:PASSWORD@...")
    if len(user) > MAX_CREDENTIAL or len(password) > MAX_CREDENTIAL:
        raise TurnOptionError(f"--turn: user and password are at most {MAX_CREDENTIAL} characters")
    if any(ord(ch) < 32 for ch in cred):
        raise TurnOptionError("--turn: the user or password holds a control character")
    host, port = where, str(TURN_DEFAULT_PORT)
    if where.startswith("["):
        end = where.find("]")
        if end < 0:
            raise TurnOptionError(f"--turn ...@{where}: missing ']'")
        host, rest = where[1:end], where[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                raise TurnOptionError(f"--turn ...@{where}: expected ':PORT' after ']'")
            port = rest[1:]
    elif where.count(":") == 1:
        host, port = where.split(":")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise TurnOptionError(f"--turn ...@{where}: give a numeric IP address") from None
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise TurnOptionError(f"--turn ...@{where}: the port must be 1..65535")
    try:
        return TurnServer(user, password, Endpoint.parse(host, int(port)))
    except InviteError as exc:
        raise TurnOptionError(f"--turn ...@{where}: {exc}") from None
