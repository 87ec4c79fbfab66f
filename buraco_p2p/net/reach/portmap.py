"""Port mapping by PCP (RFC 6887) or NAT-PMP (RFC 6886): asking the home router to forward a port.

Most routers that map at all speak one of these beside UPnP-IGD (miniupnpd serves all three).
Both are a few bytes of UDP to the default gateway's port 5351, sent only when the user allows
it (`--internet`). PCP is asked first; a router that answers with NAT-PMP's "unsupported
version" (or a PCP result of the same meaning) is asked again in NAT-PMP.

PCP MAP request (integers big-endian): version 2, opcode 1, reserved u16, lifetime u32, client
IP (16, IPv4-mapped), then nonce (12), protocol 6 (TCP), reserved (3), internal port u16,
suggested external port u16, suggested external IP (16, zero). Its answer: version 2, opcode
0x81, reserved u8, result u8, lifetime u32, epoch u32, reserved (12), then the same nonce,
protocol, reserved, internal port, assigned external port, assigned external IP.

NAT-PMP: a public-address request (version 0, opcode 0) answered by (0, 128, result u16, epoch
u32, IPv4), and a TCP map request (0, 2, reserved u16, internal port u16, suggested external
port u16, lifetime u32) answered by (0, 130, result u16, epoch u32, internal port u16, external
port u16, lifetime u32).
"""

from __future__ import annotations

import contextlib
import ipaddress
import secrets
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.reach.invite import Endpoint

PORT = 5351
PCP_VERSION = 2
PCP_MAP = 1
NATPMP_VERSION = 0
TCP = 6
RESULT_UNSUPP_VERSION = 1
LIFETIME = 7200
# Answers are a few dozen bytes; the retry schedule is the RFCs' first attempts, shortened.
TRIES = (0.25, 0.5, 1.0)


class PortMapError(NetError):
    """The router did not answer, refused the mapping or answered something else."""


# PCP result codes (RFC 6887 section 7.4), each with what it means for a person at home.
PCP_RESULTS = {
    1: ("UNSUPP_VERSION", "it speaks another PCP version"),
    2: ("NOT_AUTHORIZED", "it does not let this machine map ports (see its settings)"),
    3: ("MALFORMED_REQUEST", "it could not read the request"),
    4: ("UNSUPP_OPCODE", "it does not map ports"),
    5: ("UNSUPP_OPTION", "it does not take an option of the request"),
    6: ("MALFORMED_OPTION", "it could not read an option of the request"),
    7: ("NETWORK_FAILURE", "it has no working internet connection just now"),
    8: ("NO_RESOURCES", "it has no public port to give; a router whose own internet address "
                        "is private (carrier-grade NAT at the provider) answers so, and then "
                        "only a reply code or a relay can reach you"),
    9: ("UNSUPP_PROTOCOL", "it does not map TCP"),
    10: ("USER_EX_QUOTA", "this machine has all the mappings it may have"),
    11: ("CANNOT_PROVIDE_EXTERNAL", "it cannot give the port asked for"),
    12: ("ADDRESS_MISMATCH", "it sees this machine at another address (a second NAT in between?)"),
    13: ("EXCESSIVE_REMOTE_PEERS", "it has too many remote peers for this mapping"),
}
# NAT-PMP result codes (RFC 6886 section 3.5).
NATPMP_RESULTS = {
    1: ("Unsupported Version", "it speaks another NAT-PMP version"),
    2: ("Not Authorized/Refused", "port mapping is switched off in its settings"),
    3: ("Network Failure", "it has no working internet connection (or no public address)"),
    4: ("Out of resources", "it has no port to give"),
    5: ("Unsupported opcode", "it does not map TCP ports"),
}


def result_words(protocol: str, result: int) -> str:
    """A router's refusal in words: the result's name, its number, and what it means."""
    table = PCP_RESULTS if protocol == "PCP" else NATPMP_RESULTS
    name, meaning = table.get(result, ("unknown result", "a reason this program does not know"))
    return f"{name} ({result}): {meaning}"


@dataclass(frozen=True)
class Mapping:
    protocol: str  # "PCP" or "NAT-PMP"
    external: Endpoint
    lifetime: int


def default_gateway(route_table: str | None = None) -> ipaddress.IPv4Address | None:
    """The IPv4 default gateway from /proc/net/route (or the given text), or None."""
    if route_table is None:
        # thread-self: the network namespace of this thread, which may differ from the process's.
        path = Path("/proc/thread-self/net/route")
        if not path.exists():
            path = Path("/proc/net/route")
        if not path.exists():
            return None
        route_table = path.read_text(encoding="ascii", errors="replace")
    for line in route_table.splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 3 and fields[1] == "00000000":
            try:
                return ipaddress.IPv4Address(struct.pack("<I", int(fields[2], 16)))
            except ValueError:
                continue
    return None


def _mapped_v6(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bytes:
    if ip.version == 4:
        return b"\0" * 10 + b"\xff\xff" + ip.packed
    return ip.packed


def pcp_map_request(
    client: ipaddress.IPv4Address, internal_port: int, nonce: bytes, lifetime: int = LIFETIME
) -> bytes:
    header = struct.pack(">BBHI", PCP_VERSION, PCP_MAP, 0, lifetime) + _mapped_v6(client)
    body = nonce + struct.pack(">B3xHH", TCP, internal_port, internal_port) + b"\0" * 16
    return header + body


def parse_pcp_map_response(data: bytes, nonce: bytes) -> Mapping:
    raw_mapping = _pcp_answer(data, nonce, "PCP mapping")
    protocol, _internal, external_port = struct.unpack(">B3xHH", raw_mapping[36:44])
    raw = ipaddress.IPv6Address(raw_mapping[44:60])
    ip = raw.ipv4_mapped or raw
    if protocol != TCP or external_port == 0:
        raise PortMapError("PCP answer maps another protocol or no port")
    (lifetime,) = struct.unpack(">I", data[4:8])
    return Mapping("PCP", Endpoint(ip, external_port), lifetime)


def check_pcp_deleted(data: bytes, nonce: bytes) -> None:
    """The router's answer to our deletion (a MAP request of lifetime 0): granted, and with
    lifetime 0 (RFC 6887 section 15); `PortMapError` with the router's refusal otherwise."""
    if len(data) >= 4 and data[:2] == bytes((PCP_VERSION, 0x80 | PCP_MAP)) and data[3] == 2:
        # For a deletion, NOT_AUTHORIZED says whose the mapping is, not what the router allows.
        raise PortMapError("the router refused the deletion of the PCP mapping: NOT_AUTHORIZED "
                           "(2): it holds the mapping for another request (another nonce)")
    _pcp_answer(data, nonce, "deletion of the PCP mapping")
    (lifetime,) = struct.unpack(">I", data[4:8])
    if lifetime != 0:
        raise PortMapError(f"the router kept the PCP mapping for {lifetime} s more")


def _pcp_answer(data: bytes, nonce: bytes, what: str) -> bytes:
    """`data` if it is a successful PCP MAP answer to our request of `nonce`."""
    if data[:1] == bytes((NATPMP_VERSION,)):
        raise PortMapError("the router speaks NAT-PMP, not PCP")
    if len(data) < 60:
        raise PortMapError(f"PCP answer of {len(data)} bytes, a MAP answer is 60")
    version, opcode, _, result = struct.unpack(">BBBB", data[:4])
    if version != PCP_VERSION or opcode != 0x80 | PCP_MAP:
        raise PortMapError(f"not a PCP MAP answer (version {version}, opcode {opcode:#x})")
    if result == RESULT_UNSUPP_VERSION:
        raise PortMapError("the router does not speak this PCP version")
    if result != 0:
        raise PortMapError(f"the router refused the {what}: {result_words('PCP', result)}")
    if data[24:36] != nonce:
        raise PortMapError("PCP answer for another request")
    return data


def natpmp_map_request(internal_port: int, lifetime: int = LIFETIME) -> bytes:
    """A TCP mapping request; with `lifetime` 0 a deletion, whose suggested external port
    must be 0 (RFC 6886 section 3.4)."""
    external = internal_port if lifetime else 0
    return struct.pack(">BBHHHI", NATPMP_VERSION, 2, 0, internal_port, external, lifetime)


def natpmp_address_request() -> bytes:
    return struct.pack(">BB", NATPMP_VERSION, 0)


def parse_natpmp_address(data: bytes) -> ipaddress.IPv4Address:
    if len(data) != 12 or data[:2] != b"\x00\x80":
        raise PortMapError("not a NAT-PMP public address answer")
    (result,) = struct.unpack(">H", data[2:4])
    if result != 0:
        raise PortMapError(
            f"the router refused to tell its address: {result_words('NAT-PMP', result)}"
        )
    return ipaddress.IPv4Address(data[8:12])


def parse_natpmp_map(data: bytes, public: ipaddress.IPv4Address) -> Mapping:
    if len(data) != 16 or data[:2] != b"\x00\x82":
        raise PortMapError("not a NAT-PMP TCP mapping answer")
    result, _epoch, _internal, external, lifetime = struct.unpack(">HIHHI", data[2:16])
    if result != 0:
        raise PortMapError(
            f"the router refused the NAT-PMP mapping: {result_words('NAT-PMP', result)}"
        )
    if external == 0:
        raise PortMapError("NAT-PMP answer with external port 0")
    return Mapping("NAT-PMP", Endpoint(public, external), lifetime)


async def _ask(sock: trio.socket.SocketType, gateway: str, request: bytes) -> bytes:
    for wait in TRIES:
        try:
            await sock.send(request)
            with trio.move_on_after(wait):
                while True:
                    data, source = await sock.recvfrom(1100)
                    if source[0] == gateway:
                        return bytes(data)
        except ConnectionRefusedError:
            raise PortMapError(
                f"the router at {gateway} did not answer: nothing listens on its UDP port {PORT}"
            ) from None
    raise PortMapError(f"the router at {gateway} did not answer on UDP port {PORT}")


class _Asker:
    """One client of the gateway for one internal port, for the mapping's whole life: the
    first request picks PCP or NAT-PMP, and every later one (a renewal, a check of the
    external address, the deletion) speaks the same from the same socket with the same nonce.
    The nonce names the mapping's owner (RFC 6887 section 11.1): a router that saw another
    would take us for another client, and refuse our deletion of the mapping ("not
    authorized"), leaving the port open. Requests go one at a time (`lock`): the answers
    share one socket."""

    def __init__(self, sock: trio.socket.SocketType, gateway: str, internal_port: int) -> None:
        self.sock, self.gateway, self.internal_port = sock, gateway, internal_port
        self.client = ipaddress.IPv4Address(sock.getsockname()[0])
        self.nonce = secrets.token_bytes(12)
        self.protocol: str | None = None
        self.public: ipaddress.IPv4Address | None = None
        self.lock = trio.Lock()

    async def map(self) -> Mapping:
        async with self.lock:
            return await self._map(LIFETIME)

    async def delete(self) -> None:
        """Ask the router to delete the mapping, and check that it did (`PortMapError` with
        its refusal otherwise)."""
        async with self.lock:
            if self.protocol == "PCP":
                request = pcp_map_request(self.client, self.internal_port, self.nonce, 0)
                check_pcp_deleted(await _ask(self.sock, self.gateway, request), self.nonce)
                return
            # A deletion's answer carries external port 0 (RFC 6886 section 3.4).
            answer = await _ask(self.sock, self.gateway, natpmp_map_request(self.internal_port, 0))
            if len(answer) != 16 or answer[:2] != b"\x00\x82":
                raise PortMapError("not a NAT-PMP answer to the deletion")
            (result,) = struct.unpack(">H", answer[2:4])
            if result != 0:
                raise PortMapError("the router refused to delete the NAT-PMP mapping: "
                                   + result_words("NAT-PMP", result))  # fmt: skip

    async def _map(self, lifetime: int) -> Mapping:
        """A mapping of `lifetime` seconds: PCP first, NAT-PMP where the router speaks only
        that (the first answer decides for the mapping's life)."""
        if self.protocol != "NAT-PMP":
            request = pcp_map_request(self.client, self.internal_port, self.nonce, lifetime)
            try:
                mapping = parse_pcp_map_response(
                    await _ask(self.sock, self.gateway, request), self.nonce
                )
            except PortMapError as exc:
                speaks_natpmp = "NAT-PMP" in str(exc) or "PCP version" in str(exc)
                if self.protocol == "PCP" or not (speaks_natpmp or "did not answer" in str(exc)):
                    raise
            else:
                self.protocol = "PCP"
                return mapping
        if self.public is None:
            self.public = parse_natpmp_address(
                await _ask(self.sock, self.gateway, natpmp_address_request())
            )
        request = natpmp_map_request(self.internal_port, lifetime)
        answer = await _ask(self.sock, self.gateway, request)
        mapping = parse_natpmp_map(answer, self.public)
        self.protocol = "NAT-PMP"
        return mapping


async def map_port(
    internal_port: int, gateway: ipaddress.IPv4Address | None = None
) -> Mapping:
    """A TCP mapping of `internal_port` on the default gateway: PCP first, then NAT-PMP.

    It lapses after its lifetime; `hold_mapping` renews it and deletes it at the end.
    """
    gateway = gateway or default_gateway()
    if gateway is None:
        raise PortMapError("no IPv4 default gateway to ask for a port mapping")
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with sock:
        await sock.connect((str(gateway), PORT))
        return await _Asker(sock, str(gateway), internal_port).map()


@dataclass
class HeldMapping:
    """A mapping kept alive by `hold_mapping`: the latest answer, renewals, the last error.
    `ask_again` asks the router once more for it (its external address after the router
    restarted, say), as its owner: same socket, same nonce."""

    mapping: Mapping
    renewals: int = 0
    error: PortMapError | None = None
    _asker: _Asker | None = None

    async def ask_again(self) -> Mapping:
        """The router's answer for this mapping now (`PortMapError` if it refuses)."""
        assert self._asker is not None
        self.mapping = await self._asker.map()
        return self.mapping


# A renewal that fails is tried again this long after (while the mapping still holds).
RENEW_RETRY = 30.0
# The shortest wait between renewals, whatever lifetime the router grants.
MIN_RENEW = 10.0
Sleep = Callable[[float], Awaitable[None]]


@contextlib.asynccontextmanager
async def hold_mapping(
    internal_port: int,
    gateway: ipaddress.IPv4Address | None = None,
    *,
    sleep: Sleep = trio.sleep,
    say: Callable[[str], None] | None = None,
) -> AsyncIterator[HeldMapping]:
    """A TCP mapping of `internal_port` (as `map_port`), renewed and then deleted.

    A mapping lapses at the end of the lifetime the router granted, so it is renewed at half
    of it (RFC 6886 section 3.3, RFC 6887 section 11.2.1), with the same nonce; when the block
    ends it is deleted with a request of lifetime 0, so the router does not keep a port open
    to a program that has stopped. A router that refuses the deletion, or does not answer it,
    is said to `say` with how long the port stays open. `sleep` is the clock (tests drive it).
    """
    gateway = gateway or default_gateway()
    if gateway is None:
        raise PortMapError("no IPv4 default gateway to ask for a port mapping")
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with sock:
        await sock.connect((str(gateway), PORT))
        asker = _Asker(sock, str(gateway), internal_port)
        held = HeldMapping(await asker.map(), _asker=asker)

        async def renew() -> None:
            wait = max(held.mapping.lifetime / 2, MIN_RENEW)
            while True:
                await sleep(wait)
                try:
                    held.mapping = await asker.map()
                    held.renewals += 1
                    held.error = None
                    wait = max(held.mapping.lifetime / 2, MIN_RENEW)
                except PortMapError as exc:
                    held.error = exc
                    wait = RENEW_RETRY

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(renew)
                try:
                    yield held
                finally:
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # the caller's own error comes out unwrapped
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            with trio.CancelScope(shield=True):
                await _delete(asker, held, say)


async def _delete(asker: _Asker, held: HeldMapping, say: Callable[[str], None] | None) -> None:
    """Delete the mapping (shielded by the caller: it runs while the table unwinds)."""
    why = f"no answer within {sum(TRIES) + 0.5:g} s"
    with trio.move_on_after(sum(TRIES) + 0.5):
        try:
            await asker.delete()
            return
        except (PortMapError, OSError) as exc:
            why = str(exc)
    if say is not None:
        say(f"* the port mapping {held.mapping.external} was not deleted ({why}); the router "
            f"keeps it open for up to {held.mapping.lifetime} s")  # fmt: skip
