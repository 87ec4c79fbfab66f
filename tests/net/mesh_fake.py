"""A small fake of `MeshCore` (net/mesh/core.py), to test one part of the mesh without a mesh.

It keeps what a part asks of it (rejections, events, control records sent, links run, tasks
started) in plain lists, and its sibling parts are fakes that record their calls, so a test
sees exactly what one part did. Links, where a part needs one, are real: `link_pair` runs
the real handshake over a trio memory stream.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.link import SecureLink, handshake
from buraco_p2p.net.channel.outbox import LinkPath, LinkRun
from buraco_p2p.net.channel.reliable import ReliableChannel
from buraco_p2p.net.channel.server import LinkServer
from buraco_p2p.net.mesh.core import MeshCore
from buraco_p2p.net.mesh.events import MeshEvent
from buraco_p2p.net.mesh.meshconfig import MeshConfig, MeshState
from buraco_p2p.net.mesh.peer import Peer
from buraco_p2p.net.mesh.relay import RelayRecord
from buraco_p2p.net.reach.candidates import CandidateKind, NatClass
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.net.table.table import HostTable, Member, Roster

TABLE = bytes(range(16))
SECRET = bytes(16)


class Calls:
    """A sibling part that records every call made to it: `calls` holds (name, args)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.table: HostTable | None = None
        self.records: dict[PeerKey, Peer] = {}

    def _note(self, name: str, *args: Any) -> None:
        self.calls.append((name, args))

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    # DoorService
    def is_member(self, key: PeerKey) -> bool:
        self._note("is_member", key)
        return False

    async def handle_link(self, link: SecureLink) -> None:
        self._note("handle_link", link)

    # LinkService
    def peer(self, key: PeerKey) -> Peer:
        self._note("peer", key)
        if key not in self.records:
            self.records[key] = Peer(key, ReliableChannel(bytes(16), f"peer {key.fingerprint()}"))
        return self.records[key]

    async def retire(self, run: LinkRun, why: str) -> None:
        self._note("retire", run, why)

    # SeatService
    def free(self, peer: PeerKey, reason: str) -> None:
        self._note("free", peer, reason)

    # DialService
    async def dial_direct(self, key: PeerKey) -> SecureLink | None:
        self._note("dial_direct", key)
        return None

    async def peer_connector(self, key: PeerKey) -> None:
        self._note("peer_connector", key)

    # RelayService
    async def dial(self, key: PeerKey) -> SecureLink | None:
        self._note("dial", key)
        return None

    async def run(self, key: PeerKey, link: SecureLink) -> None:
        self._note("run", key, link)

    async def on_record(self, sender: PeerKey, rec: RelayRecord | Any, who: str = "") -> None:
        self._note("on_record", sender, rec)

    def end_all(self) -> None:
        self._note("end_all")

    # PunchService
    def claim_accepted(self, stream: trio.SocketStream) -> bool:
        self._note("claim_accepted", stream)
        return False

    def link_up(self, key: PeerKey, address: str | None) -> None:
        self._note("link_up", key, address)

    def relayed(self, a: PeerKey, b: PeerKey) -> None:
        self._note("relayed", a, b)


class FakeCore:
    """The facts and services of one mesh, as plain values; see `MeshCore` for each one."""

    def __init__(
        self,
        identity: Identity,
        nursery: trio.Nursery,
        *,
        is_host: bool,
        config: MeshConfig | None = None,
        roster: Roster | None = None,
    ) -> None:
        self.identity = identity
        self.me = identity.public
        self.table_id = TABLE
        self.room_secret = SECRET
        self.retired_secrets: tuple[bytes, ...] = ()
        self.mesh_secret = SECRET
        self.config = config or MeshConfig(handshake_timeout=5.0, hello_timeout=5.0)
        self.is_host = is_host
        self.roster = roster
        self.roster_saver: Callable[[Roster], None] | None = None
        self.unseated: str | None = None
        self.advertised: tuple[Endpoint, ...] = ()
        self.candidate_kinds: dict[Endpoint, CandidateKind] = {}
        self.nat_class = NatClass.UNKNOWN
        self.punch_port: int | None = None
        self.punch_targets: frozenset[Endpoint] = frozenset()
        self.punch_window = 1.0
        self.punched: set[str] = set()
        self.turn_addresses: dict[str, Any] = {}
        self.reflexive_behind_relay: dict[str, Any] = {}
        self.turn_targets: frozenset[Endpoint] = frozenset()
        self.turn_waiting: dict[Any, Any] = {}
        self.turn: Any = None
        self.listen_port: int | None = None
        self.listen_wildcard = False
        self.rejections: deque[str] = deque(maxlen=200)
        self.server: LinkServer | None = None
        self.listeners: list[trio.SocketListener] = []
        self.saved_state: MeshState | None = None
        self.incarnation = bytes(16)
        self.records: dict[PeerKey, Peer] = {}
        self.siblings = Calls()
        self._nursery = nursery
        self._closed = False
        self.events: list[MeshEvent] = []
        self.delivered: list[tuple[PeerKey, Any]] = []
        self.links_run: list[tuple[PeerKey, SecureLink, bool]] = []
        self.peer_links: list[SecureLink] = []
        self.controls: list[tuple[PeerKey, list[Any]]] = []
        self.up: set[PeerKey] = set()
        self.refused: set[PeerKey] = set()

    # the sibling parts: one recorder for all, so a test sees the order of the calls
    @property
    def door(self) -> Calls:
        return self.siblings

    @property
    def links(self) -> Calls:
        return self.siblings

    @property
    def seating(self) -> Calls:
        return self.siblings

    @property
    def dialer(self) -> Calls:
        return self.siblings

    @property
    def relays(self) -> Calls:
        return self.siblings

    @property
    def punches(self) -> Calls:
        return self.siblings

    @property
    def moves(self) -> Calls:
        return self.siblings

    @property
    def nursery(self) -> trio.Nursery:
        return self._nursery

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def invite(self) -> Invite:
        assert self.roster is not None
        return Invite(self.table_id, self.room_secret, self.roster.host.key.raw, ())

    def close(self) -> None:
        self._closed = True

    def peers(self) -> tuple[PeerKey, ...]:
        if self.roster is None:
            return ()
        return tuple(k for k in self.roster.seat_keys() if k != self.me)

    def is_up(self, peer: PeerKey) -> bool:
        return peer in self.up

    def is_relayed(self, peer: PeerKey) -> bool:
        return False

    def is_direct(self, peer: PeerKey) -> bool:
        return peer in self.up

    def path_of(self, link: Any, *, relayed: bool) -> LinkPath:
        return LinkPath.HOST_RELAY if relayed else LinkPath.DIRECT

    def reject(self, who: str | None, exc: BaseException) -> None:
        self.rejections.append(f"{who}: {exc}")

    def seat_of(self, key: PeerKey) -> int:
        assert self.roster is not None
        member = self.roster.member(key)
        return member.seat if member is not None else -1

    def wants_link(self, key: PeerKey) -> bool:
        return not self._closed and self.roster is not None and self.roster.member(key) is not None

    def is_host_key(self, key: PeerKey) -> bool:
        return self.roster is not None and self.roster.host.key == key

    def direct_refused(self, other: PeerKey) -> bool:
        return other in self.refused

    def adopt_roster(self, roster: Roster, sender: str = "the host") -> None:
        self.roster = roster

    def emit(self, event: MeshEvent) -> None:
        self.events.append(event)

    def deliver(self, key: PeerKey, incarnation: bytes | None, payload: Any, size: int) -> None:
        self.delivered.append((key, payload))

    async def run_link(self, key: PeerKey, link: SecureLink, *, relayed: bool) -> None:
        self.links_run.append((key, link, relayed))
        await trio.lowlevel.checkpoint()

    async def accept_peer_link(self, link: SecureLink) -> None:
        self.peer_links.append(link)
        await trio.lowlevel.checkpoint()

    def live_run_or_none(self, key: PeerKey) -> LinkRun | None:
        return None

    def enqueue(self, run: LinkRun, record: list[Any], relay_size: int = 0) -> bool:
        raise AssertionError("no live run in the fake")

    async def send_control(self, key: PeerKey, message: list[Any]) -> None:
        self.controls.append((key, message))
        await trio.lowlevel.checkpoint()

    async def send_relayed_chunk(self, key: PeerKey, message: list[Any], size: int) -> None:
        self.controls.append((key, message))
        await trio.lowlevel.checkpoint()


def as_core(fake: FakeCore) -> MeshCore:
    """The fake, typed as the interface: `mypy tests/net/mesh_fake.py` checks it is one."""
    return fake


def roster_of(*identities: Identity, seats: int = 4, version: int = 0) -> Roster:
    """A roster seating `identities` in order (the first is the host)."""
    members = tuple(
        Member(seat, ident.public, ident.nickname, ()) for seat, ident in enumerate(identities)
    )
    return Roster(TABLE, version, members, seats)


@asynccontextmanager
async def link_pair(
    a: Identity, b: Identity, secret: bytes = SECRET
) -> AsyncIterator[tuple[SecureLink, SecureLink]]:
    """Two ends of one real link (the real handshake over a trio memory stream)."""
    left, right = trio.testing.memory_stream_pair()
    links: dict[str, SecureLink] = {}
    async with trio.open_nursery() as nursery:

        async def respond() -> None:
            links["b"] = await handshake(
                right, b, room_secret=secret, table_id=TABLE, initiator=False, address="b-side"
            )

        nursery.start_soon(respond)
        links["a"] = await handshake(
            left, a, room_secret=secret, table_id=TABLE, initiator=True, address="a-side"
        )
    try:
        yield links["a"], links["b"]
    finally:
        await links["a"].aclose()
        await links["b"].aclose()
