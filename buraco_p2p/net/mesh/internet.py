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
from buraco_p2p.net.reach.candidates import CandidateKind, NatClass
from buraco_p2p.net.reach.invite import Endpoint, Invite, InviteError
from buraco_p2p.net.reach.stun import StunError, binding, probe

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


def _say_once(say: Callable[[str], None], text: str) -> None:
    """`say(text)` unless this process said it already (a joiner's attempts repeat)."""
    if text not in _printed_notes:
        _printed_notes.add(text)
        say(text)


class Advertiser(Protocol):
    nat_class: NatClass
    candidate_kinds: dict[Endpoint, CandidateKind]

    def advertise_also(self, endpoint: Endpoint, kind: CandidateKind = ...) -> None: ...


async def learn_public_address(
    mesh: Advertiser, port: int, stun: Sequence[Endpoint], say: Callable[[str], None]
) -> None:
    """Ask the STUN servers about our listening `port`; advertise the answer and the NAT class.

    A server that does not answer is reported and the table goes on without it.
    """
    try:
        reflexive, nat = await _public_address(port, stun)
    except (StunError, OSError) as exc:
        say(f"* no public address learnt: {exc}")
        return
    mesh.nat_class = nat
    if mesh.candidate_kinds.get(reflexive) == CandidateKind.MAPPED:
        # the router forwards this very port: it is listed once, as mapped
        say(f"* public address {reflexive} (from STUN): the mapped port; {NAT_ADVICE[nat]}")
        return
    mesh.advertise_also(reflexive, CandidateKind.REFLEXIVE)
    say(f"* public address {reflexive} (from STUN); {NAT_ADVICE[nat]}")


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

    Only where the invite carries a server-reflexive candidate of the host: that host can
    be reached only by both sides dialing at once, so the mesh will punch to those addresses
    (from `port`, shared with our listener) while the host pastes the code. Our NAT class
    goes to `words`, for the advice after the first minute. Run before every attempt, it says
    each thing once.
    """
    targets = frozenset(
        ep for ep, kind in zip(invite.addresses, invite.kinds, strict=True)
        if kind == CandidateKind.REFLEXIVE
    )  # fmt: skip
    if not targets or not stun or CandidateKind.MAPPED in invite.kinds:
        return  # nothing to punch, or a port the host's router forwards: no code needed
    from buraco_p2p.net.reach.candidates import Candidate
    from buraco_p2p.net.reach.reply import ReplyCode

    try:
        mine, nat = await _public_address(port, stun)
    except (StunError, OSError) as exc:
        _say_once(say, f"* no public address learnt, so no reply code: {exc}")
        return
    if words is not None:
        words.mine = nat
    if nat == NatClass.RANDOM or invite.nat_class == NatClass.RANDOM:
        whose = ("your NAT and the host's" if nat == invite.nat_class
                 else "your NAT" if nat == NatClass.RANDOM else "the host's NAT")  # fmt: skip
        _say_once(say, f"* {whose} gives every destination a new public port (symmetric): no "
                       "punch can get through, so no reply code; the host needs a port mapping, "
                       f"or both of you a TURN relay ({TURN_FLAG})")  # fmt: skip
        return
    code = ReplyCode((Candidate(CandidateKind.REFLEXIVE, mine),), nat)
    text = code.to_text(invite.room_secret, invite.table_id)
    if text not in _printed:
        # once per address: a joiner trying again from the same port needs no new code
        _printed.add(text)
        say("* if the host cannot be reached directly, give the host this reply code to paste:")
        say(text)
    if words is not None:
        words.reply_code = True
    mesh.punch_port = port
    mesh.punch_targets = targets


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
    handshake and admission as any accepted connection. What became of it goes to `pasted`
    (for `empty_seats_words`).
    """
    record = PastedCode(text.strip())
    if pasted is not None:
        pasted.append(record)
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
    for candidate in sorted(code.candidates, key=lambda c: c.kind != CandidateKind.REFLEXIVE):
        say(f"* dialing {candidate.endpoint} from the reply code ...")
        try:
            stream = await simultaneous_open(port, candidate.endpoint, window=window)
        except PunchError as exc:
            say(f"* {exc}")
            continue
        record.outcome = f"punched to {candidate.endpoint}"
        await mesh.server.handle_stream(stream)
        return
    record.outcome = f"no connection within {window:g} s"
    say(f"* no connection from the reply code {record.label}: the joiner may have given up "
        "waiting, or its NAT gives every destination a new port (then a port mapping here, "
        f"--internet, or a TURN relay both name, {TURN_FLAG}, would help)")  # fmt: skip
