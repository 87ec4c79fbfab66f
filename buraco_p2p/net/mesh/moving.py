"""A host whose address changed: noticing it, and finding the table again over what is left.

The host re-checks its public address (`keep_address`: its port mapping's external address,
or its STUN reflexive address) whenever a joiner's link drops and on a slow timer. When it
changed, `Moves.host_moved` puts the new addresses in the host's roster entry and invite,
signs a `moved` record (moved.py) and tries to reach every joiner it lost: at the addresses
of its roster entry (a joiner whose router maps its port answers there) and, by simultaneous
open, at the address its last link came from (a joiner that punches toward us at the same
moment, having been told our new address). Every link that comes back to the host carries
the record; every joiner passes it on to the joiners it is still linked to, and each checks
the host's signature before it dials the new addresses (2.15). Where nothing links up, the
host's `announce` callback gets a re-join code (net/reach/rejoin.py) for the players to
paste; `Moves.accept_code` takes it on a joiner.

The values (the record, whom to dial) are moved.py; this module does the I/O.
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import trio

from buraco_p2p.net.channel.errors import LinkError, NetError
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.channel.link import SecureLink
from buraco_p2p.net.channel.outbox import LinkRun
from buraco_p2p.net.mesh.moved import (
    Moved,
    MovedRecordError,
    make_moved,
    parse_moved,
    reach_plan,
    replace_candidates,
)
from buraco_p2p.net.mesh.punching import parse_observed
from buraco_p2p.net.mesh.turndial import dial_relayed
from buraco_p2p.net.reach.candidates import Candidate, CandidateKind
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.punch import PunchError, simultaneous_open
from buraco_p2p.net.reach.rejoin import RejoinCode, RejoinCodeError
from buraco_p2p.net.table.table import mesh_message

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.core import MeshCore
    from buraco_p2p.net.reach.portmap import HeldMapping

__all__ = ["REACH_FOR", "Moves", "Probe", "keep_address", "mapping_probe", "stun_probe"]

# How long the host keeps trying to reach a joiner it lost after it moved.
REACH_FOR = 600.0
# Between two rounds of attempts toward one lost joiner.
REACH_PAUSE = 1.0
# The slow timer of `keep_address`, between two checks when no link drops.
CHECK_EVERY = 300.0
# The least time between two checks: a joiner that drops its link again and again cannot
# make the host ask its router or the STUN server more often than this.
CHECK_AT_MOST_EVERY = 5.0

Probe = Callable[[], Awaitable[Sequence[Candidate]]]


class Moves:
    """The host's moves and a joiner's knowledge of them, for one mesh."""

    def __init__(self, mesh: MeshCore) -> None:
        self.mesh = mesh
        self.latest: Moved | None = None
        self.record: list[Any] | None = None  # the host's signed record of `latest`
        # Joiner: the host's addresses learnt from a moved record or a pasted code.
        self.host_addresses: tuple[Endpoint, ...] = ()
        self._wake = trio.Event()
        self._news = trio.Event()  # set (and replaced) when the host's addresses arrive
        self._dropped = trio.Event()
        self._reaching: set[PeerKey] = set()
        # Host: the address each joiner's last direct link came from.
        self.observed: dict[PeerKey, Endpoint] = {}
        # Host: told the re-join code each time the address changes (the client prints it).
        self.announce: Callable[[str], None] | None = None
        # Host: the joiners whose link we made by dialing their own TURN relay (2.14): a
        # joiner behind a NAT no punch crosses, who waits to be dialed there again.
        self._their_relay: dict[PeerKey, Endpoint] = {}
        self._redialing: set[PeerKey] = set()

    # -- both ends ---------------------------------------------------------------------------

    def link_up(self, key: PeerKey, run: LinkRun) -> None:
        """A link to `key` went live: give it the host's latest word (the host to a joiner,
        a joiner to another joiner), queued behind the retransmissions."""
        mesh = self.mesh
        if mesh.is_host and not run.relayed:
            seen = parse_observed(run.link.address)
            if seen is not None:
                self.observed[key] = seen
            member = mesh.roster.member(key) if mesh.roster is not None else None
            theirs = [ep for ep in (member.relayed() if member else ())
                      if str(ep) == run.link.address]  # fmt: skip
            if theirs:
                self._their_relay[key] = theirs[0]
        if self.record is not None and not mesh.is_host_key(key):
            mesh.enqueue(run, self.record)

    def link_down(self, key: PeerKey) -> None:
        """A link to `key` ended: on the host, a reason to check our address again; and once
        we have moved, a joiner to reach (a link that was still live when we noticed the move
        dies a little later)."""
        mesh = self.mesh
        if mesh.is_host:
            self._dropped.set()
            if self.latest is not None:
                self._start_reaching(key)
            if key in self._their_relay and key not in self._redialing and not mesh.closed:
                self._redialing.add(key)
                mesh.nursery.start_soon(self._redial_their_relay, key)

    async def dropped(self) -> None:
        """Host: wait until a joiner's link drops (for `keep_address`)."""
        await self._dropped.wait()
        self._dropped = trio.Event()

    # -- the host ----------------------------------------------------------------------------

    def host_moved(self, found: Sequence[Candidate]) -> bool:
        """Host: our router or STUN now says `found`. When that changes our addresses, take
        them (roster entry and invite), sign the record, send it on every live link, start
        reaching every joiner we lost, and announce the re-join code; True if it changed."""
        mesh = self.mesh
        table = mesh.door.table
        if not mesh.is_host or table is None:
            return False
        new = replace_candidates(mesh.advertised, mesh.candidate_kinds, found)
        if new is None:
            return False
        mesh.advertised, kinds = new
        mesh.candidate_kinds.clear()
        mesh.candidate_kinds.update(kinds)
        table.readmit(mesh.me, mesh.identity.nickname, mesh.advertised)
        mesh.adopt_roster(table.roster)
        serial = self.latest.serial + 1 if self.latest is not None else 1
        self.latest = Moved(serial, tuple(found))
        self.record = make_moved(mesh.identity, mesh.table_id, self.latest)
        for key in mesh.peers():
            run = mesh.live_run_or_none(key)
            if run is not None:
                mesh.enqueue(run, self.record)
            else:
                self._start_reaching(key)
        if self.announce is not None:
            code = RejoinCode(tuple(found)[:4]).to_text(mesh.mesh_secret, mesh.table_id)
            self.announce(code)
        return True

    def _start_reaching(self, key: PeerKey) -> None:
        mesh = self.mesh
        if key not in self._reaching and not mesh.closed and mesh.wants_link(key):
            self._reaching.add(key)
            mesh.nursery.start_soon(self._reach, key)

    async def _reach(self, key: PeerKey) -> None:
        """Host: try to link to lost joiner `key` until it is back or `REACH_FOR` passes."""
        mesh = self.mesh
        try:
            with trio.move_on_after(REACH_FOR):
                while mesh.wants_link(key) and not mesh.is_up(key):
                    await self._reach_once(key)
                    if mesh.is_up(key):
                        return
                    await trio.sleep(REACH_PAUSE)
        finally:
            self._reaching.discard(key)

    async def _reach_once(self, key: PeerKey) -> None:
        mesh = self.mesh
        member = mesh.roster.member(key) if mesh.roster is not None else None
        if member is None:
            return
        mapped = any(
            mesh.candidate_kinds.get(ep) == CandidateKind.MAPPED for ep in mesh.advertised
        )
        plan = reach_plan(member.addresses, self.observed.get(key), host_mapped=mapped)
        async with trio.open_nursery() as nursery:
            for ep in plan.dial:
                nursery.start_soon(self._dial, key, ep, nursery.cancel_scope)
            for ep in plan.punch:
                nursery.start_soon(self._punch, ep, nursery.cancel_scope)

    async def _dial(self, key: PeerKey, ep: Endpoint, done: trio.CancelScope) -> None:
        """Dial the joiner's listener as any mesh dialer does (we are the initiator)."""
        mesh = self.mesh
        try:
            link = await mesh.dialer.connect(ep, key)
        except LinkError as exc:
            mesh.reject(str(ep), exc)
            return
        if mesh.is_up(key):
            with trio.CancelScope(shield=True):
                await link.aclose()
            return
        try:
            await link.send(mesh_message())
        except LinkError as exc:
            mesh.reject(str(ep), exc)
            with trio.CancelScope(shield=True):
                await link.aclose()
            return
        mesh.nursery.start_soon(self._run, key, link)
        done.cancel()

    async def _run(self, key: PeerKey, link: SecureLink) -> None:
        await self.mesh.run_link(key, link, relayed=False)

    async def _punch(self, ep: Endpoint, done: trio.CancelScope) -> None:
        """Open toward the address the joiner's last link came from while it dials us from
        there (it was told our new address); the joiner is the initiator, as in 2.11."""
        mesh = self.mesh
        if mesh.listen_port is None or mesh.server is None:
            return
        try:
            stream = await simultaneous_open(
                mesh.listen_port, ep, window=mesh.config.punch_window
            )
        except (PunchError, OSError) as exc:
            mesh.reject(str(ep), exc)
            return
        mesh.nursery.start_soon(mesh.server.handle_stream, stream)
        done.cancel()

    async def _redial_their_relay(self, key: PeerKey) -> None:
        """Host: a joiner we reached by dialing its TURN relay lost its link; it cannot dial
        us (that is why it holds the relay) and waits there to be dialed again, so we dial it
        until the link is back (however it comes back) or `REACH_FOR` passes."""
        mesh = self.mesh
        ep = self._their_relay[key]
        try:
            with trio.move_on_after(REACH_FOR):
                while mesh.wants_link(key) and not mesh.is_up(key) and mesh.server is not None:
                    stream = await dial_relayed(mesh, ep, mesh.config.punch_window)
                    if stream is not None and not mesh.is_up(key):
                        await mesh.server.handle_stream(stream)
                    elif stream is not None:
                        await trio.aclose_forcefully(stream)
                    await trio.sleep(REACH_PAUSE)
        finally:
            self._redialing.discard(key)

    # -- a joiner ------------------------------------------------------------------------------

    async def on_record(self, sender: PeerKey, msg: Any, who: str) -> None:
        """A `moved` record from the host or relayed by a joiner: checked in full (the host's
        signature) before anything is dialed; a newer one is taken and passed on to every
        other joiner we are linked to. `MovedRecordError` closes the sender's link."""
        mesh = self.mesh
        if mesh.is_host or mesh.roster is None:
            raise MovedRecordError(f"{who} sent a moved record to the host")
        moved = parse_moved(msg, mesh.roster.host.key, mesh.table_id, who)
        if self.latest is not None and moved.serial <= self.latest.serial:
            await trio.lowlevel.checkpoint()
            return
        self.latest, self.record = moved, msg
        self._take(moved.candidates)
        for key in mesh.peers():
            run = mesh.live_run_or_none(key)
            if key != sender and not mesh.is_host_key(key) and run is not None:
                mesh.enqueue(run, msg)
        await trio.lowlevel.checkpoint()

    def accept_code(self, text: str) -> tuple[Endpoint, ...]:
        """Joiner: a pasted re-join code; its addresses are dialed (punched toward, for a
        reflexive one) at once. `RejoinCodeError` says why a code is refused."""
        mesh = self.mesh
        if mesh.is_host:
            raise RejoinCodeError("a re-join code is for the players, not the host")
        code = RejoinCode.from_text(text, mesh.mesh_secret, mesh.table_id)
        self._take(code.candidates)
        return tuple(c.endpoint for c in code.candidates)

    def _take(self, candidates: Sequence[Candidate]) -> None:
        mesh = self.mesh
        self.host_addresses = tuple(c.endpoint for c in candidates)
        for c in candidates:
            mesh.candidate_kinds[c.endpoint] = c.kind
        reflexive = frozenset(c.endpoint for c in candidates
                              if c.kind == CandidateKind.REFLEXIVE)  # fmt: skip
        if reflexive and mesh.listen_wildcard and mesh.listen_port is not None:
            # The host is behind a NAT with no mapping: only a punch from our listening
            # port gets through, while the host opens toward the address we came from. Its
            # old public address leads nowhere now: punched no longer.
            mesh.punch_port = mesh.listen_port
            mesh.punch_targets = reflexive
        self._wake.set()
        self._news.set()
        self._news = trio.Event()

    def next_news(self) -> trio.Event:
        """Joiner: an event set when the host's next new addresses arrive (a moved record or
        a pasted code): an attempt to reach the host at the old ones is then given up."""
        return self._news

    async def wait_news(self, delay: float) -> None:
        """Joiner: sleep `delay` seconds, less if the host's new addresses arrive meanwhile."""
        with trio.move_on_after(delay):
            await self._wake.wait()
        self._wake = trio.Event()


async def keep_address(
    mesh: MeshCore, probe: Probe, *, every: float = CHECK_EVERY,
    on_error: Callable[[str], None] | None = None,
) -> None:
    """Host: re-check our public address (`probe`) whenever a joiner's link drops and every
    `every` seconds, and move the table when it changed (`Moves.host_moved`). Runs until
    cancelled."""
    while not mesh.closed:
        with trio.move_on_after(every):
            await mesh.moves.dropped()
        checked = trio.current_time()
        try:
            found = await probe()
        except (NetError, OSError) as exc:
            if on_error is not None:
                on_error(f"* cannot check the public address: {exc}")
        else:
            mesh.moves.host_moved(found)
        await trio.sleep_until(checked + CHECK_AT_MOST_EVERY)


def mapping_probe(held: HeldMapping) -> Probe:
    """Ask the router for the mapping we hold again (PCP/NAT-PMP), as its owner (the same
    nonce, so the router's deletion at the end still finds it ours): its external address."""

    async def probe() -> Sequence[Candidate]:
        mapping = await held.ask_again()
        return (Candidate(CandidateKind.MAPPED, mapping.external),)

    return probe


def stun_probe(port: int, server: Endpoint) -> Probe:
    """Ask a STUN server which address our listening `port` is seen from."""

    async def probe() -> Sequence[Candidate]:
        from buraco_p2p.net.reach.punch import reusable_socket
        from buraco_p2p.net.reach.stun import binding

        family = socket.AF_INET6 if server.ip.version == 6 else socket.AF_INET
        found = await binding(server, await reusable_socket(family, port))
        return (Candidate(CandidateKind.REFLEXIVE, found),)

    return probe
