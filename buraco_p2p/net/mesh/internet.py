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
from typing import TYPE_CHECKING, Protocol

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.mesh.wayout import TURN_FLAG, JoinerWords, PastedCode
from buraco_p2p.net.reach.candidates import CandidateKind, NatClass, shared
from buraco_p2p.net.reach.invite import Endpoint, Invite, InviteError
from buraco_p2p.net.reach.stun import StunError, binding, probe
from buraco_p2p.net.reach.turnwire import TurnServer

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.mesh import Mesh

STUN_DEFAULT_PORT = 3478
# Reply codes this process has printed (a retry from the same port prints none again).
_printed: set[str] = set()
_printed_notes: set[str] = set()

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


def contact_line(
    internet: bool, upnp: bool, stun: Sequence[Endpoint], turn: Sequence[TurnServer] = ()
) -> str:
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
    if turn:
        parts.append(("the TURN servers " if len(turn) > 1 else "the TURN server ")
                     + ", ".join(str(t.endpoint) for t in turn) + " (a relay: it sees who "
                     "plays with whom, when and how much, never what is played)")  # fmt: skip
    return "* will contact " + " and ".join(parts) + "; nothing else"


def _say_once(say: Callable[[str], None], text: str) -> None:
    """`say(text)` unless this process said it already (a joiner's attempts repeat)."""
    if text not in _printed_notes:
        _printed_notes.add(text)
        say(text)


class Advertiser(Protocol):
    nat_class: NatClass
    candidate_kinds: dict[Endpoint, CandidateKind]

    def advertise_also(self, endpoint: Endpoint, kind: CandidateKind = ...) -> None: ...


def nat_advice(nat: NatClass, *, relay: bool = False) -> str:
    """What our NAT class means for players outside our network; with `relay`, our TURN
    relay (--turn) is a way in too."""
    if relay and nat == NatClass.RANDOM:
        return ("your NAT gives every destination a new public port (random): players outside "
                "your network reach you through your TURN relay (or a port mapping)")
    return NAT_ADVICE[nat]


async def learn_public_address(
    mesh: Advertiser, port: int, stun: Sequence[Endpoint], say: Callable[[str], None],
    *, relay: bool = False,
) -> None:
    """Ask the STUN servers about our listening `port`; advertise the answer and the NAT class.
    `relay`: a TURN relay (--turn) is about to serve the players no other path reaches.

    A server that does not answer is reported and the table goes on without it.
    """
    try:
        reflexive, nat = await _public_address(port, stun)
    except (StunError, OSError) as exc:
        say(f"* no public address learnt: {exc}")
        return
    mesh.nat_class = nat
    advice = nat_advice(nat, relay=relay)
    what = (f"address {reflexive} (from STUN, in your provider's shared address space "
            "100.64.0.0/10: a carrier-grade NAT; not public)" if shared(reflexive)
            else f"public address {reflexive} (from STUN)")  # fmt: skip
    if mesh.candidate_kinds.get(reflexive) == CandidateKind.MAPPED:
        # the router forwards this very port: it is listed once, as mapped
        say(f"* {what}: the mapped port; {advice}")
        return
    mesh.advertise_also(reflexive, CandidateKind.REFLEXIVE)
    say(f"* {what}; {advice}")


async def _public_address(port: int, stun: Sequence[Endpoint]) -> tuple[Endpoint, NatClass]:
    """Our public address for `port` and the NAT's class, from the STUN servers: two servers
    tell the class apart (`probe`), one gives the address only (class unknown). Raises
    `StunError` or `OSError` where no server answers."""
    if len(stun) >= 2:
        return await probe(port, (stun[0], stun[1]))
    from buraco_p2p.net.reach.punch import reusable_socket

    family = 10 if stun[0].ip.version == 6 else 2
    return await binding(stun[0], await reusable_socket(family, port)), NatClass.UNKNOWN


async def prepare_reply_code(
    mesh: Mesh,
    port: int,
    invite: Invite,
    stun: Sequence[Endpoint],
    say: Callable[[str], None],
    words: JoinerWords | None = None,
) -> None:
    """Joiner: learn our public address for `port`, print a reply code, punch toward the host.

    Where the invite carries a server-reflexive candidate of the host, that host can be
    reached only by both sides dialing at once: the mesh punches to those addresses (from
    `port`, shared with our listener) while the host pastes the code. Where a punch cannot
    work (a NAT here or there gives every destination a new port), the code still tells the
    host our public address, which it permits on its TURN relay (an invite with a relayed
    candidate), and our own relayed address if we hold one (`--turn`): the host then dials
    that, and we wait for it (`Mesh.turn_targets`). Our NAT class goes to `words`, for the
    advice after the first minute. Run before every attempt, it says each thing once.
    """
    kinds = list(zip(invite.addresses, invite.kinds, strict=True))
    targets = frozenset(ep for ep, kind in kinds if kind == CandidateKind.REFLEXIVE)
    host_relays = any(kind == CandidateKind.RELAYED for _, kind in kinds)
    relay = mesh.turn
    if CandidateKind.MAPPED in invite.kinds or not (targets or host_relays):
        return  # a port the host's router forwards, or nothing to punch: no code needed
    if not stun and relay is None:
        return
    from buraco_p2p.net.mesh.turning import permit
    from buraco_p2p.net.reach.candidates import Candidate, host_ips
    from buraco_p2p.net.reach.reply import ReplyCode

    mine: Endpoint | None = None
    nat = NatClass.UNKNOWN
    if stun:
        try:
            mine, nat = await _public_address(port, stun)
        except (StunError, OSError) as exc:
            _say_once(say, f"* no public address learnt from STUN: {exc}")
        else:
            if words is not None:
                words.mine = nat
    punchable = (mine is not None and bool(targets) and nat != NatClass.RANDOM
                 and invite.nat_class != NatClass.RANDOM)  # fmt: skip
    if mine is None and relay is not None and relay.mapped is not None:
        mine = relay.mapped  # our public IP as the TURN server saw it: for the permission
    candidates = [Candidate(CandidateKind.REFLEXIVE, mine)] if mine is not None else []
    if not punchable and relay is not None and relay.relayed is not None and targets:
        candidates.append(Candidate(CandidateKind.RELAYED, relay.relayed))
    if not candidates:
        _say_once(say, "* no public address learnt, so no reply code")
        return
    if not punchable and not host_relays and len(candidates) < 2:
        whose = ("your NAT and the host's" if nat == invite.nat_class
                 else "your NAT" if nat == NatClass.RANDOM else "the host's NAT")  # fmt: skip
        _say_once(say, f"* {whose} gives every destination a new public port (symmetric): no "
                       "punch can get through, so no reply code; the host needs a port mapping, "
                       f"or one of you a TURN relay ({TURN_FLAG})")  # fmt: skip
        return
    code = ReplyCode(tuple(candidates), nat)
    text = code.to_text(invite.room_secret, invite.table_id)
    if len(candidates) > 1:
        # the host dials our relay from its public address: let it through before it does
        await permit(mesh, host_ips(invite), say)
    if text not in _printed:
        # once per address: a joiner trying again from the same port needs no new code
        _printed.add(text)
        if host_relays and not punchable:
            # A TURN relay forwards only from the addresses its holder permitted: the host
            # permits a joiner's when it pastes that joiner's code.
            say("* the host is reached through its TURN relay, which lets in only players whose "
                "reply code the host has pasted: give the host this reply code to paste:")
        else:
            say("* if the host cannot be reached directly, give the host this reply code to "
                "paste:")
        say(text)
    if words is not None:
        words.reply_code = True
    if punchable:
        mesh.punch_port = port
        mesh.punch_targets = targets
    elif len(candidates) > 1:
        mesh.turn_targets = targets


async def answer_reply_code(
    mesh: Mesh,
    port: int,
    text: str,
    say: Callable[[str], None],
    window: float = 30.0,
    pasted: list[PastedCode] | None = None,
) -> None:
    """Host: a pasted reply code; dial its candidates from our listening port until one opens.

    The joiner is dialing us at the same time; the stream that opens goes through the same
    handshake and admission as any accepted connection. The code's addresses are permitted on
    our TURN relay first, if we hold one (the joiner may come through it); where a punch cannot
    work, a relayed candidate of the joiner's is dialed instead, with plain TCP. What became
    of it goes to `pasted` (for `empty_seats_words`).
    """
    record = PastedCode(text.strip())
    if pasted is not None:
        pasted.append(record)
    from buraco_p2p.net.mesh.turndial import dial_relayed
    from buraco_p2p.net.mesh.turning import permit
    from buraco_p2p.net.reach.punch import PunchError, simultaneous_open
    from buraco_p2p.net.reach.reply import ReplyCode, ReplyCodeError

    # Keyed with the invite the joiner holds: the current one, or a replaced one (a seated
    # player coming back; the handshake after the punch turns away anyone else).
    code: ReplyCode | None = None
    refusal: ReplyCodeError | None = None
    for secret in (mesh.room_secret, *reversed(mesh.retired_secrets)):
        try:
            code = ReplyCode.from_text(text, secret, mesh.table_id)
            break
        except ReplyCodeError as exc:
            refusal = refusal or exc
    if code is None:
        record.outcome = f"refused ({refusal})"
        say(f"* reply code refused: {refusal}")
        return
    if mesh.server is None:
        record.outcome = "ignored (the table was not listening)"
        say("* reply code ignored: the table is not listening")
        return
    record.nat = code.nat_class
    if mesh.turn is not None:
        await permit(mesh, [c.endpoint.ip for c in code.candidates], say)
        say("* the reply code's address may now reach us through the TURN relay")
    relayed = [c for c in code.candidates if c.kind == CandidateKind.RELAYED]
    punchable = NatClass.RANDOM not in (code.nat_class, mesh.nat_class) and not relayed
    ordered = sorted(code.candidates, key=lambda c: c.kind != CandidateKind.REFLEXIVE)
    for candidate in ordered if punchable else ():
        say(f"* dialing {candidate.endpoint} from the reply code ...")
        try:
            stream = await simultaneous_open(port, candidate.endpoint, window=window)
        except PunchError as exc:
            say(f"* {exc}")
            continue
        record.outcome = f"punched to {candidate.endpoint}"
        mesh.punched.add(str(candidate.endpoint))  # the link says "direct (punched)" here too
        await mesh.server.handle_stream(stream)
        return
    reflexive = next((c.endpoint for c in code.candidates
                      if c.kind == CandidateKind.REFLEXIVE), None)  # fmt: skip
    for candidate in relayed:
        say(f"* dialing {candidate.endpoint}, the joiner's TURN relay ...")
        if reflexive is not None:
            # The link comes from the relay; punches to the other joiners go to its NAT.
            mesh.reflexive_behind_relay[str(candidate.endpoint)] = reflexive
        relayed_stream = await dial_relayed(mesh, candidate.endpoint, window)
        if relayed_stream is not None:
            record.outcome = f"through the joiner's TURN relay {candidate.endpoint}"
            await mesh.server.handle_stream(relayed_stream)
            return
    if not punchable and not relayed:
        if mesh.turn is not None:
            record.outcome = "permitted on our TURN relay"
            return
        record.outcome = "not dialed: a NAT gives every destination a new port"
        say(f"* reply code {record.label}: no punch can get through (a NAT gives every "
            "destination a new port); a port mapping here (--internet) or a TURN relay "
            f"({TURN_FLAG}) would help")  # fmt: skip
        return
    record.outcome = f"no connection within {window:g} s"
    say(f"* no connection from the reply code {record.label}: the joiner may have given up "
        "waiting, or its NAT gives every destination a new port (then a port mapping here, "
        f"--internet, or a TURN relay both name, {TURN_FLAG}, would help)")  # fmt: skip
