"""The way out when no path exists, in words a person understands, for both screens.

When a joiner cannot reach the host, or the table cannot fill, nobody should be left with
"trying again" forever. After its first minute (`ADVICE_AFTER`) a joiner says once why (the
host's NAT class and its own, what was tried at each of the host's candidates: dialed, mapped,
punched) and what would help, naming the flag (`--internet` on the host, `--stun` for a reply
code, `--turn` for a relay), then goes on trying without a line per attempt (`JoinerWords`).
A host never learns of a joiner that never reached it, so after its first minute it says
which seats are still empty and what it does know: its own NAT class and mappings, the reply
codes pasted and what became of each punch (`empty_seats_words`). The line client
(commands.py, play/) and the full-screen lobby (ui/) both take these words from here, the
one place for them: the network layer's command line says them, and it may not import
`text/`, which sits above it (tests/test_layers.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from buraco_p2p.net.reach.candidates import CandidateKind, NatClass, inside_only, shared
from buraco_p2p.net.reach.invite import Endpoint, Invite

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.mesh import Mesh
    from buraco_p2p.net.table.table import Roster

# Addresses that lead somewhere only inside one network: RFC 1918, carrier-grade NAT's shared
# space, link-local, loopback, unique-local IPv6.
TURN_FLAG = "--turn USER:PASSWORD@IP:PORT"
# What a NAT class means for a player, in the words the way-out advice uses.
NAT_NAMES = {
    NatClass.OPEN: "no NAT (open)",
    NatClass.INDEPENDENT: "an endpoint-independent NAT (one public port per local port: "
                          "a punch gets through)",
    NatClass.RANDOM: "a symmetric NAT (a new public port for every destination: no punch "
                     "gets through)",
    NatClass.UNKNOWN: "not known (two --stun servers tell it)",
}  # fmt: skip
NO_REACH_HELP = (
    "what would help: a port mapping on the host's router (host --internet, with PCP, NAT-PMP "
    "or UPnP switched on in the router, or the port forwarded by hand), or a reply code (host "
    "and joiners both with --stun IP:PORT, the host pasting the joiner's code), or a TURN "
    f"relay both name ({TURN_FLAG}); players on one network can use --lan"
)


def host_reach_note(invite: Invite) -> str | None:
    """Host: a line saying the invite reaches only its own network, or only its provider's
    (a carrier-grade NAT's shared address space), or None if it names an address players
    anywhere can try."""
    addresses = invite.addresses
    if not addresses or not all(inside_only(ep) or shared(ep) for ep in addresses):
        return None
    if all(inside_only(ep) for ep in addresses):
        return ("* every address in this invite is inside your network: players elsewhere "
                "cannot reach you (--internet asks your router for a port mapping; --stun "
                "learns your public address for reply codes)")  # fmt: skip
    ours = next(ep for ep in addresses if shared(ep))
    return (f"* {ours} is in your provider's shared address space (100.64.0.0/10: a "
            "carrier-grade NAT): players with the same provider can reach it, players "
            f"elsewhere only through a TURN relay ({TURN_FLAG}) at an address both can reach")


def _what_became(ep: Endpoint, error: str) -> str:
    """What the last attempt's error says about `ep` ("timed out", ...), or ''."""
    at = error.find(f"{ep}")
    if at < 0:
        return ""
    rest = error[at + len(str(ep)) :].split(";", 1)[0]
    # trio's "Error connecting to ('10.0.1.2', 4510): Network is unreachable": the reason only
    return rest.rpartition("): ")[2].removeprefix(":").strip().removeprefix("within ").strip()


def _candidate_words(ep: Endpoint, kind: int, *, punched: bool) -> str:
    """One of the host's candidates as a joiner tried it."""
    if kind == CandidateKind.MAPPED:
        return "the port the host's router maps, dialed"
    if kind == CandidateKind.REFLEXIVE:
        how = (
            "dialed and punched from our port"
            if punched
            else "dialed; no punch without a reply code"
        )
        return f"the host's public address from STUN, {how}"
    if shared(ep):
        return "in the shared address space of the host's provider (carrier-grade NAT), dialed"
    if inside_only(ep):
        return "inside the host's network, dialed"
    if ep.ip.version == 6:
        return "the host's IPv6 address, dialed"
    return "the host's own public address, dialed"


def _reply_code_words(mine: NatClass | None, reply_code: bool) -> str:
    """Joiner: where a reply code stands, for a host behind a NAT with no mapping."""
    if reply_code:
        return "give the host the reply code printed above to paste"
    if mine == NatClass.RANDOM:
        return "your NAT is symmetric, so a reply code cannot help"
    return "join with --stun IP:PORT to get a reply code for the host to paste"


def _joiner_why(invite: Invite, mine: NatClass | None, reply_code: bool) -> str:
    by_kind: dict[int, list[Endpoint]] = {}
    for ep, kind in zip(invite.addresses, invite.kinds, strict=True):
        by_kind.setdefault(kind, []).append(ep)
    mapped = by_kind.get(CandidateKind.MAPPED, [])
    reflexive = by_kind.get(CandidateKind.REFLEXIVE, [])
    own = by_kind.get(CandidateKind.HOST, [])
    public = [ep for ep in own if not inside_only(ep) and not shared(ep)]
    provider = [ep for ep in own if shared(ep)]
    if mapped:
        return (
            f"nothing answers at {mapped[0]}, the port the host's router maps: the host may "
            "have stopped, or its router dropped the mapping or changed its address"
        )
    if reflexive and invite.nat_class == NatClass.RANDOM:
        return (
            f"the host is behind a NAT ({reflexive[0]}) that gives every destination a new "
            "port and has no port mapping: nobody outside its network can reach it"
        )
    if reflexive and mine == NatClass.RANDOM:
        return (
            "your NAT gives every destination a new port, and the host's NAT "
            f"({reflexive[0]}) has no port mapping: a punch cannot meet it from here"
        )
    if reflexive:
        how = _reply_code_words(mine, reply_code)
        return (f"the host is behind a NAT ({reflexive[0]}) with no port mapping, so only a "
                f"punch both sides time together gets through: {how}")  # fmt: skip
    if public:
        return (f"nothing answers at {', '.join(str(ep) for ep in public[:2])}: the host may "
                "have stopped, or a firewall drops connections to it")  # fmt: skip
    if provider:
        return (f"nothing answers at {provider[0]}, an address of the shared space of the "
                "host's provider (carrier-grade NAT): only that provider's customers can reach "
                "it, and the host may have stopped")  # fmt: skip
    shown = ", ".join(str(ep) for ep in invite.addresses[:3])
    return (f"the invite names only addresses inside the host's own network ({shown}); from "
            "another network they lead nowhere")  # fmt: skip


def _joiner_help(invite: Invite, mine: NatClass | None, reply_code: bool) -> str:
    """Joiner: only the ways out that can work for these two NATs."""
    turn = f"a TURN relay both of you name ({TURN_FLAG})"
    mapping = ("a port mapping on the host's router (host --internet, with PCP, NAT-PMP or UPnP "
               "switched on in the router, or the port forwarded by hand)")  # fmt: skip
    if CandidateKind.MAPPED in invite.kinds:
        return f"what would help: ask the host whether its table still runs; else {turn}"
    reflexive = CandidateKind.REFLEXIVE in invite.kinds
    if reflexive and (invite.nat_class == NatClass.RANDOM or mine == NatClass.RANDOM):
        return f"what would help: {mapping}, or {turn}"
    if reflexive:
        code = (
            "the host pasting the reply code above"
            if reply_code
            else "a reply code (join again with --stun IP:PORT; the host pastes the code)"
        )
        return f"what would help: {code}, or {mapping}, or {turn}"
    if any(not inside_only(ep) and not shared(ep) for ep in invite.addresses):
        # an address of the host's own, no NAT in front of it: only a firewall can drop us
        return ("what would help: the host lets its port in through its router's firewall (a "
                f"rule there; IPv6 needs no mapping, only that), or {turn}")  # fmt: skip
    if any(shared(ep) for ep in invite.addresses):
        return (f"what would help: {turn}, at an address both of you reach (the host's "
                "provider's shared space leads nowhere from other networks)")  # fmt: skip
    return f"{NO_REACH_HELP}"


def unreachable_advice(
    invite: Invite, *, reply_code: bool, mine: NatClass | None = None, error: str = ""
) -> list[str]:
    """Joiner: why the host has not been reached for a minute, what was tried and what would
    help, in lines. `reply_code`: whether we printed a reply code for the host to paste;
    `mine`: our NAT class where STUN told it; `error`: the last attempt's failure."""
    why = _joiner_why(invite, mine, reply_code)
    nat_host = NAT_NAMES[NatClass(invite.nat_class)]  # 0..3, checked when parsed
    punched = reply_code and mine != NatClass.RANDOM
    tried = "; ".join(
        f"{ep} ({_candidate_words(ep, kind, punched=punched)}"
        + (f": {what}" if (what := _what_became(ep, error)) else "") + ")"
        for ep, kind in zip(invite.addresses, invite.kinds, strict=True)
    )  # fmt: skip
    return [
        f"* the host has not answered for a minute: {why}",
        f"*   the host's NAT: {nat_host}; yours: {NAT_NAMES[mine or NatClass.UNKNOWN]}",
        f"*   tried{'' if error else ' (the first attempt is still under way)'}: "
        f"{tried or 'no address'}",
        f"* {_joiner_help(invite, mine, reply_code)}",
        "*   still trying, without a word each time (Ctrl-C gives up)",
    ]


# A joiner that has not reached the host for this long says why and what would help, once;
# a host with seats still empty after it says what it knows, once. The environment variable
# shortens that first minute for the namespace lab's tests.
ADVICE_AFTER = 60.0
ADVICE_ENV = "BURACO_P2P_ADVICE_AFTER"


def advice_after() -> float:
    """`ADVICE_AFTER`, or the seconds `$BURACO_P2P_ADVICE_AFTER` gives (tests)."""
    try:
        return max(0.0, float(os.environ.get(ADVICE_ENV, ADVICE_AFTER)))
    except ValueError:
        return ADVICE_AFTER


class JoinerWords:
    """A joiner's attempts to reach the host, told to a person: each failure with the pause
    before the next attempt while the first minute lasts (a repeated one in short); then,
    once (`watch`), why the host is out of reach, what was tried and what would help; after
    that the attempts go on without a word each, so the screen is not flooded while the
    player decides."""

    def __init__(self, invite: Invite, out: Callable[[str], None], after: float | None = None
                 ) -> None:  # fmt: skip
        self.invite = invite
        self.out = out
        self.after = advice_after() if after is None else after
        # ours, where STUN told it, and whether we printed a reply code (`prepare_reply_code`)
        self.mine: NatClass | None = None
        self.reply_code = False
        self.error = ""
        self.advised = False
        self.on_asked: Callable[[], None] | None = None  # the front end hears it too
        self._watch = trio.CancelScope()

    def failed(self, exc: BaseException, delay: float) -> None:
        """An attempt failed; the next one starts in `delay` seconds. A failure said in full
        before is said again in short."""
        again = str(exc) == self.error
        self.error = str(exc)
        if self.advised:
            return
        what = "still no answer from the host" if again else str(exc)
        self.out(f"* {what}; trying again in {delay:g} s")

    def advise(self) -> None:
        if self.advised:
            return
        self.advised = True
        for line in unreachable_advice(
            self.invite, reply_code=self.reply_code, mine=self.mine, error=self.error
        ):
            self.out(line)

    async def watch(self) -> None:
        """Run beside the attempts; cancel it once seated."""
        with self._watch:
            await trio.sleep(self.after)
            self.advise()

    def asked(self) -> None:
        """The host has our request (a person may be deciding): nothing to advise."""
        self._watch.cancel()
        if self.on_asked is not None:
            self.on_asked()

    def dialing(
        self, before: Callable[[Mesh, int], Awaitable[None]] | None
    ) -> Callable[[Mesh, int], Awaitable[None]]:
        """`before` (the step before each dial, if any) with `asked` hooked to the dialer:
        the advice stops once the host has the request, not only once seated."""

        async def dial(mesh: Mesh, port: int) -> None:
            mesh.dialer.on_asked = self.asked
            if before is not None:
                await before(mesh, port)

        return dial

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[trio.CancelScope]:
        """`watch` beside the body, until the body cancels the scope it is given (seated) or
        ends; the body's own error (a refusal, a lost seat) comes out as itself."""
        async with _beside(self.watch) as scope:
            yield scope


@contextlib.asynccontextmanager
async def _beside(fn: Callable[[], Awaitable[object]]) -> AsyncIterator[trio.CancelScope]:
    """`fn()` in the background of the body, cancelled by the scope given to the body or when
    the body ends; the body's error comes out unwrapped (not in an exception group)."""
    scope = trio.CancelScope()

    async def run() -> None:
        with scope:
            await fn()

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            try:
                yield scope
            finally:
                scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


@dataclass
class PastedCode:
    """A reply code the host's player pasted, and what became of its punch."""

    code: str
    outcome: str = "punching"
    nat: NatClass | None = None  # the joiner's, as its code says (None: the code was refused)

    @property
    def label(self) -> str:
        return self.code[:10] + "..."

    def __str__(self) -> str:
        nat = "" if self.nat is None else f" (the joiner's NAT: {NAT_NAMES[self.nat]})"
        return f"{self.label}{nat}: {self.outcome}"


def _host_reach_words(kinds: dict[Endpoint, CandidateKind], nat: NatClass) -> tuple[str, str]:
    """Host: (how players outside reach this host, what would help), from what the host
    learnt: its port mappings, its STUN answers (the NAT class) and its own addresses."""
    turn = f"a TURN relay all of you name ({TURN_FLAG})"
    mapped = [ep for ep, k in kinds.items() if k == CandidateKind.MAPPED]
    reflexive = [ep for ep, k in kinds.items() if k == CandidateKind.REFLEXIVE]
    public = [ep for ep, k in kinds.items()
              if k == CandidateKind.HOST and not inside_only(ep) and not shared(ep)]  # fmt: skip
    if mapped:
        return (f"your router maps {mapped[0]}: a joiner anywhere can dial it, so an empty seat "
                "is a player who has not joined yet, or whose network lets no connection out",
                "ask the missing players what their screen says")  # fmt: skip
    if reflexive and shared(reflexive[0]):
        return (f"your address {reflexive[0]} (from STUN) is in your provider's shared space "
                "(carrier-grade NAT): only players with the same provider can reach it, and "
                "only by a punch (a reply code you paste) or a mapping your provider grants",
                f"{turn}, at an address all of you can reach")  # fmt: skip
    if reflexive and nat == NatClass.RANDOM:
        return (f"your public address {reflexive[0]} (from STUN) has no port mapping: with "
                "a symmetric NAT nobody outside your network can reach you",
                "a port mapping (--internet, with PCP, NAT-PMP or UPnP switched on in your "
                f"router, or the port forwarded by hand), or {turn}")  # fmt: skip
    if reflexive:
        return (f"your public address {reflexive[0]} (from STUN) has no port mapping: a "
                "joiner outside your network gets in only by a punch, when you paste the "
                "reply code its `join --stun IP:PORT` prints",
                "ask each missing player for that reply code and paste it here; a joiner whose "
                "own NAT is symmetric needs a port mapping here (--internet) or "
                f"{turn}")  # fmt: skip
    v6 = [ep for ep in public if ep.ip.version == 6]
    if public and len(v6) < len(public):
        v4 = next(ep for ep in public if ep not in v6)
        return (f"you listen on a public address ({v4}): a firewall in front of it may drop "
                "joiners", f"open the port, or {turn}")  # fmt: skip
    if v6:
        return (f"your IPv6 address {v6[0].ip} is global, but a router's firewall usually drops "
                "connections nobody inside asked for, and no port is mapped",
                f"a rule on your router's firewall letting port {v6[0].port} in (IPv6 needs no "
                f"mapping, only that), or {turn}")  # fmt: skip
    return ("every address in your invite is inside your network: nobody elsewhere can reach "
            "you", "--internet (a port mapping), --stun IP:PORT (your public address, for reply "
            f"codes), or {turn}; players on your network can use --lan")  # fmt: skip


def empty_seats_words(
    roster: Roster | None,
    kinds: Mapping[Endpoint, CandidateKind],
    nat: NatClass,
    pasted: Sequence[PastedCode],
) -> list[str]:
    """Host: which seats of `roster` are still empty and what this host knows about why. A
    joiner that never reached us is unknown here: the words say what we do know (our NAT
    class `nat` and the candidates we advertise, `kinds`: mappings and STUN answers; the reply
    codes pasted and what became of each punch) and what would help."""
    if roster is None or roster.full:
        return []
    taken = {m.seat for m in roster.members}
    empty = [seat + 1 for seat in range(roster.seats) if seat not in taken]
    which = ", ".join(str(n) for n in empty)
    reach, helps = _host_reach_words(dict(kinds), nat)
    codes = "; ".join(str(c) for c in pasted) or "none"
    return [
        f"* seat{'s' if len(empty) > 1 else ''} {which} of {roster.seats} still empty after a "
        "minute; a joiner that cannot reach you never shows here. What this host knows:",
        f"*   your NAT: {NAT_NAMES[nat]}; {reach}",
        f"*   reply codes pasted: {codes}",
        f"*   what would help: {helps}",
    ]


@contextlib.asynccontextmanager
async def empty_seats_told(
    mesh: Mesh, out: Callable[[str], None], pasted: Sequence[PastedCode] = ()
) -> AsyncIterator[None]:
    """`tell_empty_seats` beside the body (the host's lobby): said once after the first
    minute if seats are still empty, never once the body has ended."""
    async with _beside(functools.partial(tell_empty_seats, mesh, out, pasted)):
        yield


async def tell_empty_seats(
    mesh: Mesh,
    out: Callable[[str], None],
    pasted: Sequence[PastedCode] = (),
    after: float | None = None,
) -> list[str]:
    """Host: after `after` seconds, once, the seats still empty and why (`empty_seats_words`);
    returns what it said. Run beside the lobby and cancel it when the match starts."""
    await trio.sleep(advice_after() if after is None else after)
    invite = mesh.invite  # every address we advertise, each with its kind
    kinds = dict(zip(invite.addresses, (CandidateKind(k) for k in invite.kinds), strict=True))
    said = empty_seats_words(mesh.roster, kinds, mesh.nat_class, pasted)
    for line in said:
        out(line)
    return said
