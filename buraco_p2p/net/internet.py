"""`--internet` and `--stun`: what a host contacts beyond its own network, and only if asked.

A port mapping asks the home router (UPnP: multicast on the local network); a STUN request goes
to a third party the user names, since no server of this project exists and no company should
learn who plays by default. `contact_line` says all of it in one line before anything is sent.
With two STUN servers the host learns its NAT class (candidates.py) and says plainly what it
means for players outside its network.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from typing import Protocol

from buraco_p2p.net.candidates import CandidateKind, NatClass
from buraco_p2p.net.errors import NetError
from buraco_p2p.net.invite import Endpoint, InviteError
from buraco_p2p.net.stun import StunError, binding, probe

STUN_DEFAULT_PORT = 3478

NAT_ADVICE = {
    NatClass.OPEN: "no NAT: players anywhere can dial you if your firewall lets them",
    NatClass.INDEPENDENT: (
        "your NAT keeps one public port per local port (endpoint-independent): players outside "
        "your network reach you if your router lets them in, or through a port mapping"
    ),
    NatClass.RANDOM: (
        "your NAT gives every destination a new public port (random): players outside your "
        "network can reach you only through a port mapping"
    ),
    NatClass.UNKNOWN: "NAT class unknown (name two STUN servers to learn it)",
}


class StunServerError(NetError, ValueError):
    """A `--stun` value that is not a numeric address with an optional port."""


def parse_stun_server(text: str) -> Endpoint:
    """`IP`, `IP:PORT`, `[IPv6]` or `[IPv6]:PORT`, numeric only (no name is looked up)."""
    raw = text.strip()
    host, port = raw, str(STUN_DEFAULT_PORT)
    if raw.startswith("["):
        end = raw.find("]")
        if end < 0:
            raise StunServerError(f"--stun {text!r}: missing ']'")
        host, rest = raw[1:end], raw[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                raise StunServerError(f"--stun {text!r}: expected ':PORT' after ']'")
            port = rest[1:]
    elif raw.count(":") == 1:
        host, port = raw.split(":")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise StunServerError(f"--stun {text!r}: give a numeric IP address") from None
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise StunServerError(f"--stun {text!r}: the port must be 1..65535")
    try:
        return Endpoint.parse(host, int(port))
    except InviteError as exc:
        raise StunServerError(f"--stun {text!r}: {exc}") from None


def contact_line(internet: bool, upnp: bool, stun: Sequence[Endpoint]) -> str:
    """One line naming everything outside this machine that will be contacted."""
    parts = []
    if internet or upnp:
        parts.append(
            "your router (a port mapping: PCP/NAT-PMP to the default gateway, then UPnP, "
            "which is multicast on your local network)"
            if internet
            else "your router (UPnP port mapping: multicast on your local network)"
        )
    if stun:
        parts.append("the STUN server" + ("s " if len(stun) > 1 else " ")
                     + ", ".join(str(s) for s in stun))  # fmt: skip
    elif internet:
        parts.append("no STUN server (name them with --stun IP:PORT)")
    return "* will contact " + " and ".join(parts) + "; nothing else"


class Advertiser(Protocol):
    nat_class: NatClass

    def advertise_also(self, endpoint: Endpoint, kind: CandidateKind = ...) -> None: ...


async def learn_public_address(
    mesh: Advertiser, port: int, stun: Sequence[Endpoint], say: Callable[[str], None]
) -> None:
    """Ask the STUN servers about our listening `port`; advertise the answer and the NAT class.

    A server that does not answer is reported and the table goes on without it.
    """
    from buraco_p2p.net.punch import reusable_socket

    try:
        if len(stun) >= 2:
            reflexive, nat = await probe(port, (stun[0], stun[1]))
        else:
            family = 10 if stun[0].ip.version == 6 else 2
            reflexive, nat = await binding(stun[0], await reusable_socket(family, port)), (
                NatClass.UNKNOWN
            )
    except (StunError, OSError) as exc:
        say(f"* no public address learnt: {exc}")
        return
    mesh.nat_class = nat
    mesh.advertise_also(reflexive, CandidateKind.REFLEXIVE)
    say(f"* public address {reflexive} (from STUN); {NAT_ADVICE[nat]}")
