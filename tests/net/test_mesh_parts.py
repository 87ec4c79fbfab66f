"""Each part of the mesh alone, against a small fake of `MeshCore` (tests/net/mesh_fake.py).

A part is given the interface, never the `Mesh` class, so each test here builds one part over
a `FakeCore`, drives it as the mesh would, and reads what it asked of the mesh. Links are real
(the real handshake over a trio memory stream), sockets real and on 127.0.0.1 only.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing
from mesh_fake import FakeCore, as_core, link_pair, roster_of

from buraco_p2p.net.channel.errors import MeshError
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.channel.reliable import ReliableChannel
from buraco_p2p.net.mesh.accepting import Acceptor
from buraco_p2p.net.mesh.admission import Door
from buraco_p2p.net.mesh.dialing import Dialer
from buraco_p2p.net.mesh.events import RosterChanged
from buraco_p2p.net.mesh.meshconfig import MeshConfig, MeshState
from buraco_p2p.net.mesh.peerlinks import PeerLinks
from buraco_p2p.net.mesh.punching import Punches
from buraco_p2p.net.mesh.relay import RelayError, RelayRecord
from buraco_p2p.net.mesh.relaying import Relays
from buraco_p2p.net.mesh.seating import Seating
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.table.table import Member, Roster, RosterError, join_message, mesh_message

HOST, ANA, BIA, CAIO = (Identity.generate(n) for n in ("host", "ana", "bia", "caio"))


# -- seating.py ----------------------------------------------------------------------------


async def test_seating_adopts_a_newer_roster_and_dials_only_lower_joiner_seats() -> None:
    async with trio.open_nursery() as nursery:
        core = FakeCore(BIA, nursery, is_host=False)
        seating = Seating(as_core(core))
        roster = roster_of(HOST, ANA, BIA, CAIO, version=3)
        seating.adopt(roster)
        await trio.testing.wait_all_tasks_blocked()
        assert core.roster == roster
        assert core.events == [RosterChanged(roster)]
        # bia (seat 2) dials ana (seat 1); the host is dialed by its own connector, and caio
        # (seat 3) dials bia
        assert [args for name, args in core.siblings.calls if name == "peer_connector"] == [
            (ANA.public,)
        ]
        seating.adopt(roster_of(HOST, ANA, BIA, version=2))  # older: nothing changes
        assert core.roster == roster and len(core.events) == 1


async def test_seating_refuses_a_roster_that_drops_a_seat_without_saying_so() -> None:
    async with trio.open_nursery() as nursery:
        core = FakeCore(BIA, nursery, is_host=False)
        seating = Seating(as_core(core))
        roster = roster_of(HOST, ANA, BIA, version=1)
        seating.adopt(roster)
        silent_drop = roster_of(HOST, BIA, version=2)
        silent_drop = Roster(
            silent_drop.table_id, 2, (silent_drop.members[0], Member(2, BIA.public, "bia", ()))
        )
        with pytest.raises(RosterError, match="the evil host"):
            seating.adopt(silent_drop, "the evil host")
        assert core.roster == roster
        assert core.events == [RosterChanged(roster)]


async def test_seating_lets_only_the_host_free_a_seat() -> None:
    async with trio.open_nursery() as nursery:
        core = FakeCore(BIA, nursery, is_host=False, roster=roster_of(HOST, ANA, BIA))
        with pytest.raises(MeshError, match="only the host"):
            Seating(as_core(core)).free(ANA.public, "kicked")
        assert core.roster == roster_of(HOST, ANA, BIA)


# -- relaying.py ---------------------------------------------------------------------------


async def test_a_joiner_refuses_relay_traffic_from_anyone_but_the_host() -> None:
    async with trio.open_nursery() as nursery:
        core = FakeCore(BIA, nursery, is_host=False, roster=roster_of(HOST, ANA, BIA))
        relays = Relays(as_core(core))
        with pytest.raises(RelayError, match=ANA.public.fingerprint()):
            await relays.on_record(ANA.public, RelayRecord("ro", CAIO.public, 1))
        assert relays.streams == {}


async def test_the_host_relays_only_between_seats_and_closes_a_channel_it_cannot_carry() -> None:
    async with trio.open_nursery() as nursery:
        core = FakeCore(HOST, nursery, is_host=True, roster=roster_of(HOST, ANA, BIA))
        relays = Relays(as_core(core))
        with pytest.raises(RelayError, match=CAIO.public.fingerprint()):
            await relays.on_record(CAIO.public, RelayRecord("ro", ANA.public, 7))
        with pytest.raises(RelayError, match="to itself"):
            await relays.on_record(ANA.public, RelayRecord("ro", ANA.public, 7))
        assert core.controls == []
        # bia has no live link: ana's channel to it is closed back at once, and the pair is
        # offered to the punching part
        await relays.on_record(ANA.public, RelayRecord("ro", BIA.public, 7))
        assert core.controls == [(ANA.public, RelayRecord("rc", BIA.public, 7).to_wire())]
        assert core.siblings.calls == [("relayed", (ANA.public, BIA.public))]


# -- punching.py ---------------------------------------------------------------------------


async def test_the_host_remembers_where_it_sees_a_joiner_and_pairs_only_when_allowed() -> None:
    async with trio.open_nursery() as nursery:
        roster = roster_of(HOST, ANA, BIA)
        core = FakeCore(HOST, nursery, is_host=True, config=MeshConfig(punch_peers=False))
        core.roster = roster
        core.up = {ANA.public, BIA.public}
        punches = Punches(as_core(core))
        punches.link_up(ANA.public, "not an address")
        assert punches.observed == {}
        punches.link_up(ANA.public, "127.0.0.1:4000")
        assert punches.observed == {ANA.public: Endpoint.parse("127.0.0.1", 4000)}
        await trio.testing.wait_all_tasks_blocked()
        assert punches.coordinated == 0 and core.controls == []


# -- dialing.py ----------------------------------------------------------------------------


async def test_dialing_skips_a_refused_pair_and_names_an_address_that_does_not_answer() -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    await listeners[0].aclose()  # nothing listens there now: the dial is refused
    closed = Endpoint.parse("127.0.0.1", port)
    roster = Roster(
        roster_of(HOST).table_id, 1,
        (Member(0, HOST.public, "host", ()), Member(1, ANA.public, "ana", (closed,))),
    )  # fmt: skip
    async with trio.open_nursery() as nursery:
        core = FakeCore(HOST, nursery, is_host=True, roster=roster)
        dialer = Dialer(as_core(core))
        core.refused = {ANA.public}
        assert await dialer.dial_direct(ANA.public) is None
        assert list(core.rejections) == []
        core.refused = set()
        with trio.fail_after(30):
            assert await dialer.dial_direct(ANA.public) is None
        assert len(core.rejections) == 1 and str(closed) in core.rejections[0]


# -- accepting.py --------------------------------------------------------------------------


async def test_the_acceptor_runs_a_link_only_from_a_higher_seat_or_the_host() -> None:
    async with trio.open_nursery() as nursery:
        core = FakeCore(BIA, nursery, is_host=False, roster=roster_of(HOST, ANA, BIA))
        acceptor = Acceptor(as_core(core))
        async with link_pair(CAIO, BIA) as (_, from_caio):
            await acceptor.accept_peer_link(from_caio)  # caio holds no seat
        async with link_pair(ANA, BIA) as (_, from_ana):
            await acceptor.accept_peer_link(from_ana)  # seat 1 does not dial seat 2
        assert core.links_run == []
        assert ["is not seated" in r for r in core.rejections] == [True, False]
        assert "higher seat dials" in core.rejections[1]
        # A host that moved dials its joiners back (docs/protocol.md 2.15).
        async with link_pair(HOST, BIA) as (_, from_host):
            await acceptor.accept_peer_link(from_host)
            assert core.links_run == [(HOST.public, from_host, False)]
    async with trio.open_nursery() as nursery:
        core = FakeCore(ANA, nursery, is_host=False, roster=roster_of(HOST, ANA, BIA))
        acceptor = Acceptor(as_core(core))
        async with link_pair(BIA, ANA) as (_, from_bia):
            await acceptor.accept_peer_link(from_bia)
            assert core.links_run == [(BIA.public, from_bia, False)]


async def test_the_acceptor_listens_on_loopback_and_reports_its_port() -> None:
    async with trio.open_nursery() as nursery:
        core = FakeCore(HOST, nursery, is_host=True, roster=roster_of(HOST))
        port = await nursery.start(Acceptor(as_core(core)).serve, "127.0.0.1", 0)
        assert core.listen_port == port > 0 and not core.listen_wildcard
        assert core.server is not None and core.server.accept_short
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.aclose()
        nursery.cancel_scope.cancel()


# -- admission.py --------------------------------------------------------------------------


async def test_the_door_sorts_links_by_their_greeting() -> None:
    async with trio.open_nursery() as nursery:
        core = FakeCore(ANA, nursery, is_host=False, roster=roster_of(HOST, ANA, BIA))
        door = Door(as_core(core))
        assert door.is_member(BIA.public) and not door.is_member(CAIO.public)
        async with link_pair(CAIO, ANA) as (caio, link):
            await caio.send(["hello?"])
            await door.handle_link(link)
        async with link_pair(CAIO, ANA) as (caio, link):
            await caio.send(join_message(()))
            await door.handle_link(link)  # only the host seats anyone
        assert core.peer_links == [] and len(core.rejections) == 2
        assert "not the host" in core.rejections[1]
        async with link_pair(BIA, ANA) as (bia, link):
            await bia.send(mesh_message())
            await door.handle_link(link)
            assert core.peer_links == [link] and link.seated


# -- peerlinks.py --------------------------------------------------------------------------


async def test_peer_records_resume_the_saved_delivery_state_and_need_a_link_to_send() -> None:
    saved = ReliableChannel(bytes(16), "ana")
    saved.send({"n": 1})
    async with trio.open_nursery() as nursery:
        core = FakeCore(HOST, nursery, is_host=True, roster=roster_of(HOST, ANA))
        core.saved_state = MeshState(bytes(16), {ANA.public.raw: saved.snapshot()})
        links = PeerLinks(as_core(core))
        record = links.peer(ANA.public)
        assert links.peer(ANA.public) is record and core.records == {ANA.public: record}
        assert record.channel.snapshot() == saved.snapshot()
        assert links.live_run_or_none(ANA.public) is None
        with pytest.raises(MeshError, match=ANA.public.fingerprint()):
            await links.send_raw(ANA.public, ["roster"])
