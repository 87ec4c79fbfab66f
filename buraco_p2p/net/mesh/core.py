"""What the mesh's parts may ask of the mesh: `MeshCore`, the one interface they are given.

`Mesh` (mesh.py) is built from parts, each holding one concern: the door (admission.py), the
acceptor (accepting.py), the dialer (dialing.py), each link's life (peerlinks.py), the seats
(seating.py), relays (relaying.py) and punches (punching.py). A part is handed a `MeshCore`,
never the `Mesh` class: it sees the facts of the table (who we are, the roster, the settings),
the services listed here (reject a peer naming why, run a link, send to a peer, the seat of a
key, emit an event, the nursery that owns every task of the mesh), and the few services of its
sibling parts, each through a small interface of its own below. A part imports this module,
never mesh.py, so it can be read and tested with a small fake of `MeshCore`.

Every method here is sync and never blocks, or async and checkpoints; none raises for a peer's
fault (a peer's fault closes that peer's link and is remembered with `reject`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import trio

from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.link import SecureLink
from buraco_p2p.net.channel.outbox import LinkPath, LinkRun
from buraco_p2p.net.channel.server import LinkServer
from buraco_p2p.net.mesh.events import MeshEvent
from buraco_p2p.net.mesh.meshconfig import MeshConfig, MeshState
from buraco_p2p.net.mesh.peer import Peer
from buraco_p2p.net.mesh.relay import RelayRecord
from buraco_p2p.net.reach.candidates import Candidate, CandidateKind, NatClass
from buraco_p2p.net.reach.invite import Endpoint, Invite, IPAddress
from buraco_p2p.net.reach.turn import TurnRelay
from buraco_p2p.net.table.table import HostTable, Roster

__all__ = [
    "DialService",
    "DoorService",
    "LinkService",
    "MeshCore",
    "MoveService",
    "PunchService",
    "RelayService",
    "SeatService",
]


class DoorService(Protocol):
    """The host's door (admission.py): who may come in, and the host's seating state."""

    table: HostTable | None  # the host's seating state; None on a joiner

    def is_member(self, key: PeerKey) -> bool:
        """Whether `key` holds a seat (the front door lets a seated identity in at once)."""
        ...

    async def handle_link(self, link: SecureLink) -> None:
        """Own a freshly handshaken link until it is seated, refused or closed."""
        ...


class LinkService(Protocol):
    """Each link's life cycle (peerlinks.py)."""

    def peer(self, key: PeerKey) -> Peer:
        """Our record of `key` (delivery state, the live run), made on first use."""
        ...

    async def retire(self, run: LinkRun, why: str) -> None:
        """Close `run`'s link once its queue has drained (or after a bounded wait)."""
        ...


class SeatService(Protocol):
    """The seats as the roster says (seating.py)."""

    def free(self, peer: PeerKey, reason: str) -> None:
        """Host: free `peer`'s seat and send the roster recording it (`MeshError` if the
        seat is not one the host can free)."""
        ...


class DialService(Protocol):
    """The dialing side (dialing.py)."""

    async def connect(self, ep: Endpoint, peer: PeerKey) -> SecureLink:
        """A direct link to `peer` at `ep` (`LinkError` when it cannot be made)."""
        ...

    async def dial_direct(self, key: PeerKey) -> SecureLink | None:
        """One attempt at a direct link to seated `key`; None when it cannot be opened."""
        ...

    async def peer_connector(self, key: PeerKey) -> None:
        """Keep a link to `key` open for as long as both of us are seated."""
        ...


class RelayService(Protocol):
    """Relay through the host (relaying.py)."""

    async def dial(self, key: PeerKey) -> SecureLink | None:
        """A link to `key` through the host's relay; None when the host cannot relay."""
        ...

    async def run(self, key: PeerKey, link: SecureLink) -> None:
        """Run a relayed link, giving it up for a direct one when that opens."""
        ...

    async def on_record(self, sender: PeerKey, rec: RelayRecord) -> None:
        """A relay record from `sender` (checked in full by `parse_relay` already)."""
        ...

    def end_all(self) -> None:
        """End every relayed stream (the link to the host that carried them is gone)."""
        ...


class PunchService(Protocol):
    """Hole punching between joiners (punching.py)."""

    def claim_accepted(self, stream: trio.SocketStream) -> bool:
        """Whether an accepted `stream` is the other half of a punch we are waiting for (then
        the punch owns it)."""
        ...

    def link_up(self, key: PeerKey, address: str | None) -> None:
        """A link to `key` came up from `address`: a punch toward it is no longer needed."""
        ...

    def relayed(self, a: PeerKey, b: PeerKey) -> None:
        """Host: `a` and `b` talk through us; ask them to punch if both may."""
        ...

    async def on_record(self, sender: PeerKey, msg: Any, who: str) -> None:
        """A punch record from `sender` (named `who` in errors)."""
        ...


class MoveService(Protocol):
    """A host whose address changed (moving.py)."""

    host_addresses: tuple[Endpoint, ...]  # joiner: the host's addresses from its last word

    def link_up(self, key: PeerKey, run: LinkRun) -> None:
        """A link to `key` went live: queue the host's latest `moved` record on it."""
        ...

    def link_down(self, key: PeerKey) -> None:
        """A link to `key` ended (the host then checks its public address again)."""
        ...

    async def dropped(self) -> None:
        """Host: wait until a joiner's link drops."""
        ...

    def host_moved(self, found: Sequence[Candidate]) -> bool:
        """Host: our public address is now `found`; move the table if that changed it."""
        ...

    async def on_record(self, sender: PeerKey, msg: Any, who: str) -> None:
        """A `moved` record from `sender` (named `who` in errors)."""
        ...

    async def wait_news(self, delay: float) -> None:
        """Joiner: sleep `delay` seconds, less if the host's new addresses arrive."""
        ...

    def next_news(self) -> trio.Event:
        """Joiner: an event set when the host's next new addresses arrive."""
        ...


class MeshCore(Protocol):
    """The services of one mesh its parts may use; `Mesh` implements it."""

    # -- facts of the table: read by every part, written only where said -------------------
    identity: Identity
    me: PeerKey
    table_id: bytes
    room_secret: bytes  # the invite's secret
    retired_secrets: tuple[bytes, ...]  # secrets of replaced invites (still open handshakes)
    mesh_secret: bytes  # keys links between seated peers
    config: MeshConfig
    is_host: bool
    roster: Roster | None  # written by seating.py only
    roster_saver: Callable[[Roster], None] | None
    unseated: str | None  # why our own seat was freed (seating.py writes it)
    advertised: tuple[Endpoint, ...]
    candidate_kinds: dict[Endpoint, CandidateKind]
    nat_class: NatClass
    punch_port: int | None
    punch_targets: frozenset[Endpoint]
    punch_window: float
    punched: set[str]  # remote addresses of links made by a simultaneous open
    turn_addresses: dict[str, IPAddress]  # remote address of a link through TURN: its server
    # Host: a joiner's relayed candidate we dialed from its reply code -> that code's
    # reflexive candidate (where the joiner's NAT is, for punching: 2.11)
    reflexive_behind_relay: dict[str, Endpoint]
    turn_targets: frozenset[Endpoint]  # joiner: host addresses it awaits through its relay
    turn_waiting: dict[IPAddress, trio.MemorySendChannel[trio.abc.Stream]]
    turn: TurnRelay | None  # our TURN allocation while it lives (turning.py writes it)
    listen_port: int | None
    listen_wildcard: bool
    rejections: deque[str]
    server: LinkServer | None
    listeners: list[trio.SocketListener]
    saved_state: MeshState | None  # what we resumed from, if anything
    incarnation: bytes
    records: dict[PeerKey, Peer]  # what we keep about each peer (peerlinks.py makes them)

    # -- the parts, through their own small interfaces ---------------------------------------
    @property
    def door(self) -> DoorService: ...
    @property
    def links(self) -> LinkService: ...
    @property
    def seating(self) -> SeatService: ...
    @property
    def dialer(self) -> DialService: ...
    @property
    def relays(self) -> RelayService: ...
    @property
    def punches(self) -> PunchService: ...
    @property
    def moves(self) -> MoveService: ...

    @property
    def nursery(self) -> trio.Nursery:
        """The nursery that owns every task of the mesh: a task started here lives no longer
        than the mesh, and its failure ends the mesh."""
        ...

    @property
    def closed(self) -> bool:
        """The mesh is shutting down: start nothing new."""
        ...

    @property
    def invite(self) -> Invite:
        """The host's invite for this table."""
        ...

    def close(self) -> None:
        """Mark the mesh closed (start-up calls it as the mesh ends)."""
        ...

    def peers(self) -> tuple[PeerKey, ...]:
        """Everyone seated except us, in seat order."""
        ...

    def is_up(self, peer: PeerKey) -> bool:
        """A link to `peer` is up and resumed."""
        ...

    def is_relayed(self, peer: PeerKey) -> bool:
        """The live link to `peer` goes through the host's relay."""
        ...

    def is_direct(self, peer: PeerKey) -> bool:
        """The live link to `peer` is a direct path (dialed, mapped or punched): no relay."""
        ...

    def path_of(self, link: SecureLink, *, relayed: bool) -> LinkPath:
        """How `link` runs (`relayed`: it is a channel of the host's relay)."""
        ...

    def reject(self, who: str | None, exc: BaseException) -> None:
        """Remember in `rejections` why a link or peer was refused, naming `who` (the peer's
        fingerprint or address) unless the error already does. Closing is the caller's job."""
        ...

    def seat_of(self, key: PeerKey) -> int:
        """The seat `key` holds in the roster, -1 if none (the roster must be known)."""
        ...

    def wants_link(self, key: PeerKey) -> bool:
        """Both `key` and we hold a seat and the mesh is open: links between us are wanted."""
        ...

    def is_host_key(self, key: PeerKey) -> bool:
        """`key` is the host's (the roster must be known to say yes)."""
        ...

    def direct_refused(self, other: PeerKey) -> bool:
        """The settings forbid a direct link between us and `other` (tests of the relay)."""
        ...

    def adopt_roster(self, roster: Roster, sender: str = "the host") -> None:
        """Adopt `roster` if newer; one that drops a seat without recording its departure is
        a `RosterError` naming `sender`, and nothing changes."""
        ...

    def emit(self, event: MeshEvent) -> None:
        """Tell the application (`Mesh.next_event`); dropped when the mesh is closed or the
        application is `mesh.MAX_EVENTS` events behind. Never blocks."""
        ...

    def deliver(self, key: PeerKey, incarnation: bytes | None, payload: Any, size: int) -> None:
        """Put one fresh in-order message from `key` (of `size` encoded bytes) in the inbox
        `Mesh.receive` reads. Never blocks; the caller bounds what a peer may have unread
        (`MeshConfig.max_unread_bytes`)."""
        ...

    async def run_link(self, key: PeerKey, link: SecureLink, *, relayed: bool) -> None:
        """Own `link` to seated `key` until it dies; exactly one link per peer is live."""
        ...

    async def accept_peer_link(self, link: SecureLink) -> None:
        """A link whose greeting says it comes from a seated peer (the door checked that)."""
        ...

    def live_run_or_none(self, key: PeerKey) -> LinkRun | None:
        """The run of the live link to `key`, if one is up."""
        ...

    def enqueue(self, run: LinkRun, record: list[Any], relay_size: int = 0) -> bool:
        """Queue `record` on `run`'s link; False (and the link dropped) when it is full."""
        ...

    async def send_control(self, key: PeerKey, message: list[Any]) -> None:
        """Queue a mesh message (roster, punch, relay, leave) for `key` on its live link,
        outside the reliable stream; never waits for the socket. `MeshError` when no link to
        `key` is up or its queue is full (that link is then dropped)."""
        ...

    async def send_relayed_chunk(self, key: PeerKey, message: list[Any], size: int) -> None:
        """A chunk of `size` bytes of one of our relayed streams for `key`: waits for room in
        that link's queue, never overflows it; `MeshError` when the link is closed."""
        ...
