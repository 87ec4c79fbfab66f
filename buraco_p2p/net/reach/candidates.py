"""Candidates: the addresses a peer may be reached at, each with how it was learnt.

As in ICE, a peer gathers every address it has and lets the other side try them:

- host: an address of one of its own interfaces (a LAN address, or a global IPv6 address,
  which needs no NAT but still a simultaneous open through routers that drop unsolicited
  inbound). Temporary IPv6 addresses (RFC 8981) come before stable ones, so an invite does
  not publish an address derived from the machine's hardware when a private one exists.
  Loopback is left out unless the peer listens only on loopback.
- mapped: a port its router forwards on request (PCP, NAT-PMP or UPnP-IGD).
- reflexive: the public address:port a STUN server saw for its punching port.
- relayed: a port a TURN server lends it (turn.py): a plain TCP connection to it is forwarded
  to the peer, from the IPs the peer permitted; the path of last resort, tried after the others.

The NAT class, learnt from two STUN answers from one local port, tells whether punching can
work: `OPEN` (the reflexive address is one of our own), `INDEPENDENT` (the same public port
whatever the destination: punchable) or `RANDOM` (a different port per destination: only a
mapping or the relay gets through). `UNKNOWN` is what a peer that asked no STUN server says.
"""

from __future__ import annotations

import enum
import ipaddress
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.reach.invite import Endpoint, Invite, IPAddress

# /proc/net/if_inet6 flag bits (linux/if_addr.h).
_IFA_F_TEMPORARY = 0x01
_IFA_F_DEPRECATED = 0x20
_IFA_F_TENTATIVE = 0x40


class CandidateKind(enum.IntEnum):
    """How a candidate address was learnt; the value is its wire code (docs/protocol.md 2.5)."""

    HOST = 0
    MAPPED = 1
    REFLEXIVE = 2
    RELAYED = 3


class NatClass(enum.IntEnum):
    """What a peer's NAT does to its punching port; the value is its wire code."""

    UNKNOWN = 0
    OPEN = 1
    INDEPENDENT = 2
    RANDOM = 3

    @property
    def punchable(self) -> bool:
        return self in (NatClass.OPEN, NatClass.INDEPENDENT)


@dataclass(frozen=True)
class Candidate:
    kind: CandidateKind
    endpoint: Endpoint

    def __str__(self) -> str:
        return f"{self.kind.name.lower()} {self.endpoint}"


def classify(local_ips: Iterable[IPAddress], first: Endpoint, second: Endpoint) -> NatClass:
    """The NAT class from two reflexive answers for one local port (two servers or addresses)."""
    if first.ip != second.ip:
        # Two public addresses for one port: a NAT pool that spreads connections, as random.
        return NatClass.RANDOM
    if first.ip in set(local_ips):
        return NatClass.OPEN
    return NatClass.INDEPENDENT if first.port == second.port else NatClass.RANDOM


@dataclass(frozen=True)
class _V6:
    ip: ipaddress.IPv6Address
    temporary: bool


def _ipv6_from_proc(text: str) -> list[_V6]:
    """Usable IPv6 addresses from /proc/net/if_inet6, with the temporary flag."""
    found: list[_V6] = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6:
            continue
        try:
            ip = ipaddress.IPv6Address(bytes.fromhex(fields[0]))
            flags = int(fields[4], 16)
        except ValueError:
            continue
        if flags & (_IFA_F_DEPRECATED | _IFA_F_TENTATIVE):
            continue
        found.append(_V6(ip, bool(flags & _IFA_F_TEMPORARY)))
    return found


def order_addresses(ips: Iterable[IPAddress], temporary: frozenset[IPAddress]) -> list[IPAddress]:
    """Advertised order: IPv4 LAN, temporary global IPv6, other IPv6, loopback only if alone.

    Link-local addresses are dropped (they need a zone no invite carries); loopback is kept
    only when nothing else is left, i.e. when the peer listens only there.
    """
    usable = [ip for ip in dict.fromkeys(ips) if not ip.is_link_local and not ip.is_unspecified]
    loop = [ip for ip in usable if ip.is_loopback]
    rest = [ip for ip in usable if not ip.is_loopback]
    v4 = [ip for ip in rest if ip.version == 4]
    v6 = [ip for ip in rest if ip.version == 6]
    v6.sort(key=lambda ip: (ip not in temporary, not ip.is_global))
    return (v4 + v6) or loop


def host_candidates(port: int, listen_host: str) -> tuple[Candidate, ...]:
    """This machine's own addresses for a listener on `listen_host`:`port`, in advertised order."""
    if listen_host not in ("", "0.0.0.0", "::"):
        return (Candidate(CandidateKind.HOST, Endpoint.parse(listen_host, port)),)
    import ifaddr

    ips: list[IPAddress] = []
    for adapter in ifaddr.get_adapters():
        for entry in adapter.ips:
            text = entry.ip if isinstance(entry.ip, str) else entry.ip[0]
            try:
                ips.append(ipaddress.ip_address(text))
            except ValueError:
                continue
    temporary: frozenset[IPAddress] = frozenset()
    proc = Path("/proc/thread-self/net/if_inet6")
    if not proc.exists():
        proc = Path("/proc/net/if_inet6")
    if proc.exists():
        v6 = _ipv6_from_proc(proc.read_text(encoding="ascii", errors="replace"))
        temporary = frozenset(a.ip for a in v6 if a.temporary)
        known = {a.ip for a in v6}
        # Addresses the kernel marks deprecated or tentative are absent from `known`.
        ips = [ip for ip in ips if ip.version == 4 or ip in known]
    if listen_host == "0.0.0.0":
        ips = [ip for ip in ips if ip.version == 4]
    elif listen_host == "::":
        ips = [ip for ip in ips if ip.version == 6]
    return tuple(
        Candidate(CandidateKind.HOST, Endpoint(ip, port))
        for ip in order_addresses(ips, temporary)
    )


class CandidateError(NetError):
    """A candidate list that cannot be used."""


def _beyond_one_network(ip: IPAddress) -> bool:
    """An IPv6 address that is neither unique-local, link-local nor loopback: no NAT in
    front of it, at most a firewall."""
    return not (ip.is_link_local or ip.is_loopback or ip in ipaddress.ip_network("fc00::/7"))


def describe_link(
    *, relayed: bool, punched: bool, remote: IPAddress | None, remote_kind: CandidateKind | None,
    turn: IPAddress | None = None,
) -> str:
    """How a link to a peer was made, in the words a player sees beside the peer's name.
    `turn`: the TURN server the link passes through (ours or the peer's), if any."""
    if relayed:
        return "relayed by the host"
    if turn is not None:
        return f"relayed (TURN {turn})"
    if remote_kind == CandidateKind.RELAYED and remote is not None:
        return f"relayed (TURN {remote})"
    if remote_kind == CandidateKind.MAPPED:
        return "mapped"
    if remote is not None and remote.version == 6 and _beyond_one_network(remote):
        return "direct (IPv6, punched)" if punched else "direct (IPv6)"
    if punched or remote_kind == CandidateKind.REFLEXIVE:
        return "direct (punched)"
    return "direct"


# Addresses no player outside their own network can reach: private, link-local and loopback
# ranges (IPv4 and IPv6).
_INSIDE = tuple(
    ipaddress.ip_network(net)
    for net in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16",
                "127.0.0.0/8", "fc00::/7", "fe80::/10", "::1/128")
)  # fmt: skip
# The shared address space of RFC 6598: a provider's carrier-grade NAT numbers its customers'
# routers here. Neither private (every customer of that provider reaches such an address, and
# so does a TURN server inside that network) nor public (nobody elsewhere does).
SHARED = ipaddress.ip_network("100.64.0.0/10")


def inside_only(endpoint: Endpoint) -> bool:
    """Whether `endpoint` can be reached only from inside its own network."""
    return any(endpoint.ip in net for net in _INSIDE if net.version == endpoint.ip.version)


def shared(endpoint: Endpoint) -> bool:
    """Whether `endpoint` is in a provider's shared address space (RFC 6598): reached by that
    provider's customers only."""
    return endpoint.ip.version == 4 and endpoint.ip in SHARED


def public(endpoint: Endpoint) -> bool:
    """Whether players anywhere may reach `endpoint` (a firewall permitting): neither inside
    one network nor in a provider's shared space."""
    return not inside_only(endpoint) and not shared(endpoint)


def where_words(endpoint: Endpoint) -> str:
    """What kind of address `endpoint` is, for a player: "public", or where it leads."""
    if shared(endpoint):
        return ("in your provider's shared address space (100.64.0.0/10, carrier-grade NAT): "
                "its other customers can reach it, players elsewhere cannot")  # fmt: skip
    if inside_only(endpoint):
        return "inside your network"
    return "public"


def outside_ips(endpoints: Iterable[Endpoint]) -> list[IPAddress]:
    """The IPs of `endpoints` that lead outside one network (public or shared), sorted: never a
    LAN's (a TURN permission for a LAN address would let nobody in, and tells the TURN server
    our LAN)."""
    return sorted({ep.ip for ep in endpoints if not inside_only(ep)}, key=str)


def host_ips(invite: Invite) -> list[IPAddress]:
    """The IPs a host dials a joiner's relay from: those of its candidates that lead outside
    its network (the invite's own public, mapped and reflexive addresses)."""
    return outside_ips(
        ep for ep, kind in zip(invite.addresses, invite.kinds, strict=True)
        if kind != CandidateKind.RELAYED
    )  # fmt: skip


def pack_candidates(candidates: Iterable[Candidate]) -> bytes:
    """Reply and re-join codes' candidate records (2.12, 2.15): per candidate one byte
    `kind << 4 | ip version`, the packed IP and the port (big-endian)."""
    return b"".join(
        struct.pack(">B", int(c.kind) << 4 | c.endpoint.ip.version)
        + c.endpoint.ip.packed + struct.pack(">H", c.endpoint.port)
        for c in candidates
    )  # fmt: skip
