"""The mesh: the seated peers, each linked to each, with a message API for the game.

`host_table` and `join_table` give a running `Mesh`; starting one is `startup.py`. The host
(seat 0) listens for joiners, asks its `approve` callback about each newcomer, and sends the
roster to everyone; every peer also listens for its peers. For each pair, the peer with the
*higher* seat dials the lower one, so there is never a race between two links for one pair;
a joiner dials the host itself. A pair whose direct link cannot be opened within
`direct_timeout` talks through the host (`relaying.py`), with the same handshake run end to
end over the relayed channel. Opening links and keeping them open is `dialing.py`, the
listening side `accepting.py`, the life of each link once open `peerlinks.py`, following the
roster's seats `seating.py`; the events are `events.py`, the settings and the persisted
state `meshconfig.py`, punching between joiners `punching.py`.

Delivery is exactly once and in order per sender across link failures and restarts
(`reliable.py`): every link starts with a `Resume` exchange and missed messages are sent
again. A link that fails is closed and its peer reported down, and the dialing side keeps
retrying (direct first, then relay) with a capped backoff. `send` and `broadcast` never wait
for a socket, and anything one peer's input provokes closes that peer's link only, with the
reason in `rejections`.

API: `broadcast(msg)`, `send(peer, msg)`, `receive() -> (peer, msg)`, `kick(peer)` and
`rotate_invite()` (host), and `next_event()` for `PeerUp`/`PeerDown`/`RosterChanged`/
`StreamReset`/`SeatFreed`/`NicknameChanged`. The table's seat count is the roster's `seats`
(`host_table(seats=...)`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import secrets
from collections import deque
from collections.abc import Callable
from typing import Any

import trio

from buraco_p2p import codec
from buraco_p2p.net.channel.errors import MeshError
from buraco_p2p.net.channel.handshake import secret_hint
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.link import SecureLink
from buraco_p2p.net.channel.outbox import LinkPath, LinkRun
from buraco_p2p.net.channel.reliable import INCARNATION_LEN, SendBufferFull
from buraco_p2p.net.channel.server import LinkServer
from buraco_p2p.net.mesh.accepting import Acceptor
from buraco_p2p.net.mesh.admission import Door, JoinRequest, auto_approve
from buraco_p2p.net.mesh.dialing import Dialer
from buraco_p2p.net.mesh.events import (
    MeshEvent,
    NicknameChanged,
    PeerDown,
    PeerUp,
    RosterChanged,
    SeatFreed,
    StreamReset,
)
from buraco_p2p.net.mesh.meshconfig import MeshConfig, MeshState
from buraco_p2p.net.mesh.moving import Moves
from buraco_p2p.net.mesh.peer import Peer
from buraco_p2p.net.mesh.peerlinks import (
    HOST_TO_JOINER_TAGS,
    JOINER_TO_HOST_TAGS,
    PEER_TAGS,
    PeerLinks,
)
from buraco_p2p.net.mesh.punching import Punches
from buraco_p2p.net.mesh.relaying import Relays
from buraco_p2p.net.mesh.seating import Seating
from buraco_p2p.net.reach.candidates import CandidateKind, NatClass, describe_link, inside_only
from buraco_p2p.net.reach.invite import Endpoint, Invite, IPAddress
from buraco_p2p.net.reach.turn import TurnRelay
from buraco_p2p.net.table.table import DEFAULT_SEATS, KICKED, LEAVE, Roster, kinds_for

__all__ = [
    "HOST_TO_JOINER_TAGS",
    "JOINER_TO_HOST_TAGS",
    "PEER_TAGS",
    "JoinRequest",
    "Mesh",
    "MeshConfig",
    "MeshError",
    "MeshEvent",
    "MeshState",
    "NicknameChanged",
    "PeerDown",
    "PeerUp",
    "RosterChanged",
    "SeatFreed",
    "StreamReset",
    "auto_approve",
]

MAX_EVENTS = 1024


class Mesh:
    """One peer's view of the table's mesh. Create it with `host_table` or `join_table`
    (`startup.py`)."""

    def __init__(
        self,
        identity: Identity,
        table_id: bytes,
        room_secret: bytes,
        nursery: trio.Nursery,
        *,
        config: MeshConfig,
        state: MeshState | None,
        is_host: bool,
    ) -> None:
        self.identity = identity
        self.me = identity.public
        self.table_id = table_id
        # The invite's secret (the host's current one); `retired_secrets` are those of the
        # invites `rotate_invite` replaced; `mesh_secret` keys links between seated peers
        # (the host's is the table's first secret unless told; a joiner's comes in its welcome).
        self.room_secret = room_secret
        self.retired_secrets: tuple[bytes, ...] = ()
        self.mesh_secret = room_secret
        self.config = config
        self.is_host = is_host
        self.roster: Roster | None = None
        self.advertised: tuple[Endpoint, ...] = ()
        # How each advertised address was learnt, and our NAT class (candidates.py).
        self.candidate_kinds: dict[Endpoint, CandidateKind] = {}
        self.nat_class = NatClass.UNKNOWN
        # Addresses reached by a simultaneous open from our listening port (punch.py), not a dial.
        self.punch_port: int | None = None
        self.punch_targets: frozenset[Endpoint] = frozenset()
        self.punch_window = 120.0
        # Remote addresses ("host:port") of the links made by a simultaneous open.
        self.punched: set[str] = set()
        # TURN (turning.py): per remote address of a link through a TURN server, that server's
        # IP; the host addresses a joiner waits to be dialed from through its own relay, and
        # who waits for each of those IPs.
        self.turn_addresses: dict[str, IPAddress] = {}
        self.reflexive_behind_relay: dict[str, Endpoint] = {}
        self.turn_targets: frozenset[Endpoint] = frozenset()
        self.turn: TurnRelay | None = None
        self.turn_waiting: dict[IPAddress, trio.MemorySendChannel[trio.abc.Stream]] = {}
        self.listen_port: int | None = None
        self.listen_wildcard = False  # listening on every interface (not one address)
        self.rejections: deque[str] = deque(maxlen=200)
        self._nursery = nursery
        self.saved_state = state
        self.incarnation = state.incarnation if state else secrets.token_bytes(INCARNATION_LEN)
        self.records: dict[PeerKey, Peer] = {}
        self._inbox_send, self._inbox_recv = trio.open_memory_channel[
            tuple[PeerKey, bytes | None, Any, int]
        ](math.inf)
        self._events_send, self._events_recv = trio.open_memory_channel[MeshEvent](MAX_EVENTS)
        self.relays = Relays(self)
        # Host: called with every new roster, so a host restarted at any moment seats the
        # same peers in the same seats (a joiner ignores a roster older than its own).
        self.roster_saver: Callable[[Roster], None] | None = None
        self.dialer = Dialer(self)
        self.punches = Punches(self)
        self.moves = Moves(self)
        self.unseated: str | None = None  # why our own seat was freed, once it is
        self.door = Door(self)
        self.links = PeerLinks(self)
        self.acceptor = Acceptor(self)
        self.seating = Seating(self)
        self._roster_changed = trio.Event()
        self._closed = False
        self.server: LinkServer | None = None
        self.listeners: list[trio.SocketListener] = []

    # -- public API ------------------------------------------------------------------------

    @property
    def relayed_chunks(self) -> int:
        """Host: relayed chunks forwarded so far."""
        return self.relays.relayed_chunks

    @property
    def invite(self) -> Invite:
        """The invite for this table (only the host's own addresses are in it)."""
        assert self.roster is not None
        host = self.roster.host
        addresses = host.addresses[:16]
        kinds = tuple(int(self.candidate_kinds.get(ep, CandidateKind.HOST)) for ep in addresses)
        return Invite(
            self.table_id, self.room_secret, host.key.raw, addresses,
            kinds=kinds, nat_class=int(self.nat_class),
        )  # fmt: skip

    def rotate_invite(self) -> Invite:
        """Host: a fresh invite (new room secret; same table, host key and addresses).

        The replaced invites' secrets still open handshakes, so every seated identity keeps
        reconnecting with the invite it has, but the door refuses them to anyone without a
        seat. Persist `room_secret`, `retired_secrets` and `mesh_secret` for a restart.
        """
        if not self.is_host or self.server is None:
            raise MeshError("only the host can issue a new invite")
        taken = {secret_hint(s, self.table_id) for s in (self.room_secret, *self.retired_secrets)}
        fresh = secrets.token_bytes(16)
        while secret_hint(fresh, self.table_id) in taken:  # pragma: no cover - 2^-64
            fresh = secrets.token_bytes(16)
        self.retired_secrets = (*self.retired_secrets, self.room_secret)
        self.room_secret = fresh
        self.server.room_secret, self.server.retired_secrets = fresh, self.retired_secrets
        return self.invite

    def peers(self) -> tuple[PeerKey, ...]:
        """Everyone seated except us, in seat order."""
        if self.roster is None:
            return ()
        return tuple(k for k in self.roster.seat_keys() if k != self.me)

    def is_up(self, peer: PeerKey) -> bool:
        p = self.records.get(peer)
        return p is not None and p.link is not None

    def how_linked(self, peer: PeerKey) -> str | None:
        """How the live link to `peer` was made ("direct (punched)", ...); None when down."""
        p = self.records.get(peer)
        if p is None or p.link is None or p.run is None:
            return None
        address = p.link.address
        remote = None
        if address is not None:
            with contextlib.suppress(ValueError):
                remote = ipaddress.ip_address(address.rsplit(":", 1)[0].strip("[]"))
        kind = next(
            (k for ep, k in self.candidate_kinds.items() if remote is not None and ep.ip == remote),
            None,
        )
        if (
            kind is None and self.is_host and remote is not None and not p.run.relayed
            and address not in self.punched and (address or "") not in self.turn_addresses
            and not inside_only(Endpoint(remote, 1))
            and CandidateKind.MAPPED in self.candidate_kinds.values()
        ):  # fmt: skip
            kind = CandidateKind.MAPPED  # a joiner from outside came in through our mapping
        return describe_link(
            relayed=p.run.relayed, punched=address in self.punched, remote=remote,
            remote_kind=kind, turn=self.turn_addresses.get(address or ""),
        )

    def handed(self, peer: PeerKey) -> tuple[int, int]:
        """(messages `send` has numbered for `peer`, how many of them it has consumed): the
        one numbered `k` has reached its application once `k` is below the second figure,
        and until then it is on its way (held for a resend), so nobody need send it again."""
        p = self.records.get(peer)
        if p is None:
            return 0, 0
        return p.channel.send_next, p.channel.send_base

    def is_relayed(self, peer: PeerKey) -> bool:
        p = self.records.get(peer)
        return p is not None and p.link is not None and p.run is not None and p.run.relayed

    def path_of(self, link: SecureLink, *, relayed: bool) -> LinkPath:
        if relayed:
            return LinkPath.HOST_RELAY
        address = link.address or ""
        through_turn = address in self.turn_addresses or any(
            kind == CandidateKind.RELAYED and str(ep) == address
            for ep, kind in self.candidate_kinds.items()
        )
        return LinkPath.TURN if through_turn else LinkPath.DIRECT

    def is_direct(self, peer: PeerKey) -> bool:
        """The live link to `peer` is a direct path (dialed, mapped or punched): no relay."""
        p = self.records.get(peer)
        return p is not None and p.link is not None and p.run is not None and (
            p.run.path == LinkPath.DIRECT
        )

    async def send(self, peer: PeerKey, message: Any) -> None:
        """Queue `message` for `peer`; never waits for the peer's socket.

        It goes on the link's outgoing queue if the link is up, and in any case into the
        retransmit buffer: delivery is guaranteed across reconnects as long as that buffer
        has room (`SendBufferFull` otherwise).
        """
        p = self.records.get(peer)
        seated = self.roster is not None and self.roster.member(peer) is not None
        if p is None or peer == self.me or not seated:
            raise MeshError(f"{peer.fingerprint()} is not seated at this table")
        codec.pack(message)  # an unencodable message is the caller's error, before any seq
        record = p.channel.send(message)
        run = p.run
        if p.link is not None and run is not None and run.link is p.link:
            self.enqueue(run, record.to_wire())
        await trio.lowlevel.checkpoint()

    async def broadcast(self, message: Any) -> None:
        """Send `message` to every other seated peer.

        A peer whose retransmit buffer is full does not stop the others from getting it:
        its `SendBufferFull` is raised only after everyone else has the message queued.
        """
        full: SendBufferFull | None = None
        for peer in self.peers():
            try:
                await self.send(peer, message)
            except SendBufferFull as exc:
                full = full or exc
        if full is not None:
            raise full

    async def receive(self) -> tuple[PeerKey, Any]:
        """The next message from any peer, in order per sender, each exactly once."""
        return self._took(await self._inbox_recv.receive())

    def receive_nowait(self) -> tuple[PeerKey, Any]:
        """`receive` without waiting (`trio.WouldBlock` if no message is in): a caller that
        takes every message already here before acting on them can act once for all."""
        return self._took(self._inbox_recv.receive_nowait())

    def _took(self, item: tuple[PeerKey, bytes | None, Any, int]) -> tuple[PeerKey, Any]:
        key, incarnation, payload, size = item
        p = self.records[key]
        p.unread_bytes -= size
        p.channel.consumed(incarnation)
        # Acknowledge at once when we have caught up with this peer: its retransmit buffer
        # then never holds what we already showed, for a restart without state to replay.
        caught_up = p.unread_bytes == 0 and p.channel.consumed_next > p.channel.acked_sent
        if caught_up or p.channel.ack_due():
            p.ack_wake.set()
        return key, payload

    async def next_event(self) -> MeshEvent:
        return await self._events_recv.receive()

    def snapshot(self) -> MeshState:
        """Delivery state as of now: persist it with what the application has consumed."""
        return MeshState(
            self.incarnation,
            {key.raw: p.channel.snapshot() for key, p in self.records.items()},
        )

    def advertise_also(
        self, endpoint: Endpoint, kind: CandidateKind = CandidateKind.MAPPED
    ) -> None:
        """Host: add an address (a UPnP mapping, say) to our roster entry and the invite.

        An address listed already stays listed once; a port the router maps is what STUN
        then sees too, and it stays "mapped" (reachable without a punch) whichever came first."""
        if endpoint in self.advertised:
            if kind != CandidateKind.MAPPED or self.candidate_kinds.get(endpoint) == kind:
                return
            self.candidate_kinds[endpoint] = kind
            return
        self.candidate_kinds[endpoint] = kind
        self.advertised = (*self.advertised, endpoint)[:16]
        table = self.door.table
        if table is not None:
            kinds = kinds_for(self.advertised, self.candidate_kinds)
            table.readmit(self.me, self.identity.nickname, self.advertised, kinds)
            self.adopt_roster(table.roster)

    async def wait_all_up(self, seats: int | None = None) -> None:
        """Wait until `seats` peers (the whole table unless told) are seated and every link
        from us is up."""
        while True:
            roster = self.roster
            want = seats if seats is not None else roster.seats if roster else DEFAULT_SEATS
            if (
                roster is not None
                and len(roster.members) >= want
                and all(self.is_up(k) for k in self.peers())
            ):
                return
            self._roster_changed = trio.Event()
            with trio.move_on_after(0.05):
                await self._roster_changed.wait()

    async def kick(self, peer: PeerKey) -> None:
        """Host: free `peer`'s seat. Every seated peer (and `peer` itself) gets the roster
        that records the kick and shows `SeatFreed`; then its links are closed."""
        self.seating.free(peer, KICKED)
        await trio.lowlevel.checkpoint()

    async def leave(self) -> None:
        """Joiner: give up our seat for good. The host frees it (every seat sees
        `SeatFreed` with reason "left"); until its roster arrives, nothing changes here."""
        if self.is_host or self.roster is None:
            raise MeshError("the host cannot leave its own table")
        await self.send_control(self.roster.host.key, [LEAVE])

    # -- MeshCore (core.py): what the mesh's parts may ask of it; contracts there ---------

    def emit(self, event: MeshEvent) -> None:
        if self._closed:
            return
        with contextlib.suppress(trio.WouldBlock, trio.BrokenResourceError):
            self._events_send.send_nowait(event)
        self._roster_changed.set()

    def reject(self, who: str | None, exc: BaseException) -> None:
        """Remember why a link or peer was refused (errors usually name the peer already)."""
        text = str(exc) or type(exc).__name__
        if who and who in text:
            self.rejections.append(text)
        else:
            self.rejections.append(f"{who or 'unknown peer'}: {text}")

    def seat_of(self, key: PeerKey) -> int:
        assert self.roster is not None
        m = self.roster.member(key)
        return m.seat if m is not None else -1

    def direct_refused(self, other: PeerKey) -> bool:
        hook = self.config.refuse_direct
        return hook is not None and (hook(self.me, other) or hook(other, self.me))

    def adopt_roster(self, roster: Roster, sender: str = "the host") -> None:
        """Adopt `roster` if it is newer (`seating.py`); a roster that drops a seat without
        recording its departure is a `RosterError` naming `sender`, and nothing changes."""
        self.seating.adopt(roster, sender)

    def is_host_key(self, key: PeerKey) -> bool:
        return self.roster is not None and self.roster.host.key == key

    def wants_link(self, key: PeerKey) -> bool:
        """Both `key` and we hold a seat: links between us are wanted."""
        roster = self.roster
        return (
            not self._closed
            and self.unseated is None
            and roster is not None
            and roster.member(key) is not None
        )

    def close(self) -> None:
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def nursery(self) -> trio.Nursery:
        return self._nursery

    def deliver(self, key: PeerKey, incarnation: bytes | None, payload: Any, size: int) -> None:
        self._inbox_send.send_nowait((key, incarnation, payload, size))

    # -- links: their life cycle is `peerlinks.py`, the accepting side `accepting.py` --------
    # The mesh's other parts (dialing, admission, relaying, punching) reach links through these.

    async def run_link(self, key: PeerKey, link: SecureLink, *, relayed: bool) -> None:
        """Own `link` until it dies; exactly one link per peer is live at a time."""
        await self.links.run(key, link, relayed=relayed)

    async def accept_peer_link(self, link: SecureLink) -> None:
        """A link whose greeting says it comes from a seated peer (the door checked that)."""
        await self.acceptor.accept_peer_link(link)

    def live_run_or_none(self, key: PeerKey) -> LinkRun | None:
        return self.links.live_run_or_none(key)

    def enqueue(self, run: LinkRun, record: list[Any], relay_size: int = 0) -> bool:
        return self.links.enqueue(run, record, relay_size)

    async def send_control(self, key: PeerKey, message: list[Any]) -> None:
        await self.links.send_raw(key, message)

    async def send_relayed_chunk(self, key: PeerKey, message: list[Any], size: int) -> None:
        await self.links.send_relayed_chunk(key, message, size)
