"""Seats: a seated key keeps its seat until a kick or departure every seat sees; nicknames
are bound to their identity for the table; a table has the rules' number of seats."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import trio
from mesh_helpers import FAST, NICKS, collect, table_of_four

from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.link import SecureLink
from buraco_p2p.net.channel.outbox import LinkRun
from buraco_p2p.net.mesh.mesh import (
    Mesh,
    MeshError,
    MeshEvent,
    NicknameChanged,
    PeerDown,
    SeatFreed,
)
from buraco_p2p.net.mesh.peer import Peer
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.table.table import (
    KICKED,
    Departure,
    HostTable,
    JoinRefused,
    Member,
    Roster,
    RosterError,
    succession,
)


def table_roster(n: int = 3) -> tuple[HostTable, list[Identity]]:
    ids = [Identity.generate(nick) for nick in NICKS[:n]]
    table = HostTable(bytes(16), Member(0, ids[0].public, ids[0].nickname, ()))
    for ident in ids[1:]:
        table.seat_new(ident.public, ident.nickname, ())
    return table, ids


def test_a_roster_that_gives_a_seated_key_away_is_refused_and_names_the_sender() -> None:
    table, _ids = table_roster()
    old = table.roster
    eve = Identity.generate("eve").public
    swapped = replace(
        old,
        version=old.version + 1,
        members=(old.members[0], Member(1, eve, "bia", ()), old.members[2]),
    )
    with pytest.raises(RosterError, match=r"ana \(host\).*takes seat 1 from bia"):
        succession(old, swapped, "ana (host)")
    dropped = replace(old, version=old.version + 1, members=old.members[:2])
    with pytest.raises(RosterError, match="takes seat 2 from caio"):
        succession(old, dropped, "host")
    moved = replace(
        old, version=old.version + 1, members=(old.members[0], replace(old.members[2], seat=1))
    )
    with pytest.raises(RosterError):
        succession(old, moved, "host")
    # The same change with the departure recorded is lawful.
    lawful = replace(dropped, departures=(Departure(2, old.members[2].key, KICKED),))
    change = succession(old, lawful, "host")
    assert [d.key for d in change.freed] == [old.members[2].key]
    # The round trip keeps seats and departures.
    assert Roster.from_wire(lawful.to_wire(), "host") == lawful


def test_seats_are_freed_only_by_the_host_table_and_refilled_lowest_first() -> None:
    table, ids = table_roster(4)
    before = table.roster
    assert table.free(ids[2].public) == Departure(2, ids[2].public, KICKED)
    assert table.free(ids[0].public) is None  # the host's own seat is not freed
    eve = Identity.generate("eve").public
    admission = table.seat_new(eve, "eve", ())
    assert admission.member is not None and admission.member.seat == 2
    change = succession(before, table.roster, "host")
    assert [(d.seat, d.key) for d in change.freed] == [(2, ids[2].public)]
    assert [m.seat for m in table.roster.members] == [0, 1, 2, 3]


def test_a_returning_identity_keeps_the_nickname_it_was_seated_with() -> None:
    table, ids = table_roster()
    version = table.roster.version
    admission = table.readmit(ids[1].public, "ana", ())
    assert admission.member is not None and admission.member.nickname == "bia"
    assert table.roster.version == version  # nothing changed, nothing to announce


def test_the_roster_carries_the_seat_count_and_refuses_bad_ones() -> None:
    for seats in (2, 3, 6):
        ids = [Identity.generate(n) for n in ("ana", "bia")]
        table = HostTable(bytes(16), Member(0, ids[0].public, "ana", ()), seats=seats)
        table.seat_new(ids[1].public, "bia", ())
        wire = table.roster.to_wire()
        assert wire["seats"] == seats
        assert Roster.from_wire(wire, "host").full == (seats == 2)
    for bad in (1, 7, "4", None):
        with pytest.raises(RosterError):
            Roster.from_wire({**wire, "seats": bad}, "host")
    with pytest.raises(RosterError):  # a member beyond the seat count
        Roster.from_wire({**wire, "seats": 2, "members": [*wire["members"], {
            "seat": 2, "key": Identity.generate("x").public.raw, "nick": "x", "addrs": []}]},
            "host")


async def events_until(mesh: Mesh, done: type, count: int = 1) -> list[MeshEvent]:
    seen: list[MeshEvent] = []
    while sum(isinstance(e, done) for e in seen) < count:
        seen.append(await mesh.next_event())
    return seen


async def test_a_host_that_swaps_a_seated_key_is_refused_and_named() -> None:
    async with table_of_four() as meshes:
        host, b, c, _d = meshes
        assert c.roster is not None
        old = c.roster
        eve = Identity.generate("eve").public
        forged = replace(
            old,
            version=old.version + 1,
            members=tuple(Member(1, eve, "bia", ()) if m.seat == 1 else m for m in old.members),
        )
        await host.send_control(c.me, ["roster", forged.to_wire()])
        with trio.fail_after(5):
            while not any("takes seat 1" in r for r in c.rejections):
                await trio.sleep(0.01)
        assert any("ana" in r and "takes seat 1 from bia" in r for r in c.rejections)
        assert c.roster.member(b.me) is not None and c.roster.member(eve) is None
        with trio.fail_after(10):
            await c.wait_all_up()
        await b.send(c.me, "still seated")
        assert await collect(c, 1) == [(b.me, "still seated")]


async def test_the_host_kicks_a_player_and_every_seat_sees_it() -> None:
    async with table_of_four() as meshes:
        host, b, c, d = meshes
        seen: dict[str, list[MeshEvent]] = {}

        async def watch(m: Mesh) -> None:
            seen[m.identity.nickname] = await events_until(m, SeatFreed)

        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                for m in meshes:
                    nursery.start_soon(watch, m)
                await trio.sleep(0)
                await host.kick(c.me)
        for name in ("ana", "bia", "caio", "duda"):
            freed = [e for e in seen[name] if isinstance(e, SeatFreed)]
            assert freed == [SeatFreed(c.me, 2, "caio", "kicked")], (name, seen[name])
        assert c.unseated == "kicked"
        with trio.fail_after(10):
            for m in (host, b, d):
                while m.is_up(c.me):
                    await trio.sleep(0.01)
                assert m.roster is not None and m.roster.member(c.me) is None
                assert c.me not in m.peers()
        with pytest.raises(MeshError, match="not seated"):
            await b.send(c.me, "hello?")
        await host.broadcast("after the kick")
        for m in (b, d):
            assert await collect(m, 1) == [(host.me, "after the kick")]
        with pytest.raises(MeshError):
            await b.kick(d.me)  # only the host frees seats
        # The freed seat is given to the next joiner, and every seat accepts that roster.
        async with join_table(Identity.generate("eve"), host.invite, config=FAST) as e:
            with trio.fail_after(10):
                for m in (host, b, d, e):
                    await m.wait_all_up()
            assert e.roster is not None and e.roster.member(e.me) is not None
            assert e.roster.member(e.me).seat == 2  # type: ignore[union-attr]
            assert not any("refused" in r for r in b.rejections + d.rejections)  # type: ignore[operator]


async def test_a_player_kicked_while_its_link_starts_hears_that_it_was_kicked() -> None:
    """The host frees a seat while the link to its peer is still starting (the peer redialed,
    and its first record has not arrived): that link must go live and carry the roster that
    records the kick before it is closed. Retired unstarted, the link told the peer nothing,
    and its next dial was refused as "not seated" with no word of why."""
    async with table_of_four() as meshes:
        host, _b, c, _d = meshes
        starting, release = trio.Event(), trio.Event()
        serve = host.links._serve_link

        async def serve_held(p: Peer, run: LinkRun) -> None:
            # The new link to caio waits at its first receive (its real handshake step)
            # until the kick has been made.
            link = run.link
            if p.key == c.me and not starting.is_set():
                receive = link.receive

                async def first_receive() -> Any:
                    starting.set()
                    await release.wait()
                    link.receive = receive  # type: ignore[method-assign]
                    return await receive()

                link.receive = first_receive  # type: ignore[method-assign]
            await serve(p, run)

        host.links._serve_link = serve_held  # type: ignore[method-assign]
        with trio.fail_after(10):
            host.links.drop(host.links.live_run(c.me), MeshError("the cable is pulled"))
            await starting.wait()  # caio dialed again; the host's end of it is starting
            assert not host.is_up(c.me)
            await host.kick(c.me)
            # Longer than a retirement waits for its queue (a heartbeat interval): a link
            # retired unstarted is gone before caio's first record is read.
            await trio.sleep(5 * FAST.heartbeat_interval)
            release.set()
            while c.unseated is None:
                await trio.sleep(0.01)
        assert c.unseated == "kicked"
        assert c.roster is not None and c.roster.member(c.me) is None
        with trio.fail_after(10):
            while host.is_up(c.me):
                await trio.sleep(0.01)


async def test_a_kick_the_host_could_not_save_reaches_nobody() -> None:
    """A restarted host knows only the rosters it saved: a kick whose roster failed to save
    must not have been sent, or the kicked peer and the others would hold a roster the host
    never had."""
    async with table_of_four() as meshes:
        host, b, c, d = meshes
        assert host.roster is not None
        version = host.roster.version

        def disk_full(roster: Roster) -> None:
            raise OSError(28, "No space left on device")

        host.roster_saver = disk_full
        with pytest.raises(MeshError, match=r"stays taken.*could not be saved"):
            await host.kick(c.me)
        assert host.door.table is not None and host.door.table.roster.member(c.me) is not None
        await host.broadcast("still here")  # sent after anything the kick queued
        for m in (b, c, d):
            assert await collect(m, 1) == [(host.me, "still here")]
            assert m.roster is not None and m.roster.version == version
            assert m.roster.member(c.me) is not None
        assert c.unseated is None


async def test_a_joiner_freed_before_its_link_is_registered_still_learns_it() -> None:
    """The host seats a joiner, sends its welcome, then registers its link: a kick in
    between finds no link to tell, so the registration must tell it."""
    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    async with host_table(ana, config=FAST) as host:
        register = host.links.run

        async def kick_then_register(key: PeerKey, link: SecureLink, *, relayed: bool) -> None:
            if key == bia.public and host.roster is not None and host.roster.member(key):
                await host.kick(key)  # the welcome has left; the link is not yet registered
            await register(key, link, relayed=relayed)

        host.links.run = kick_then_register  # type: ignore[method-assign]
        with trio.fail_after(10):
            async with join_table(bia, host.invite, config=FAST) as b:
                while b.unseated is None:
                    await trio.sleep(0.01)
                assert b.unseated == KICKED
                assert b.roster is not None and b.roster.member(bia.public) is None
        assert host.roster is not None and host.roster.member(bia.public) is None
        with trio.fail_after(10):
            while host.is_up(bia.public):
                await trio.sleep(0.01)


async def test_a_returning_identity_keeps_its_nickname_and_renames_are_announced() -> None:
    ids = [Identity.generate(n) for n in ("ana", "bia", "caio")]
    async with (
        host_table(ids[0], config=FAST) as host,
        join_table(ids[2], host.invite, config=FAST) as c,
        trio.open_nursery() as nursery,
    ):
        scope = trio.CancelScope()

        async def run_b(ident: Identity, task_status: trio.TaskStatus[Mesh]) -> None:
            with scope:
                async with join_table(ident, host.invite, config=FAST) as b:
                    task_status.started(b)
                    await trio.sleep_forever()

        b: Mesh = await nursery.start(run_b, ids[1])
        with trio.fail_after(10):
            for m in (host, b, c):
                await m.wait_all_up(3)
        scope.cancel()
        # bia comes back with the same key, calling itself "ana" this time.
        impostor = Identity(ids[1]._private, "ana")
        scope = trio.CancelScope()
        b2: Mesh = await nursery.start(run_b, impostor)
        with trio.fail_after(10):
            await b2.wait_all_up(3)
        for m in (host, b2, c):
            assert m.roster is not None
            assert m.roster.member(ids[1].public).nickname == "bia"  # type: ignore[union-attr]
        # A roster that renames a seated key (a host may) is shown to everyone.
        assert c.roster is not None
        renamed = replace(
            c.roster,
            version=c.roster.version + 1,
            members=tuple(
                replace(m, nickname="bianca") if m.key == ids[1].public else m
                for m in c.roster.members
            ),
        )
        await host.send_control(c.me, ["roster", renamed.to_wire()])
        with trio.fail_after(5):
            events = await events_until(c, NicknameChanged)
        assert events[-1] == NicknameChanged(ids[1].public, "bia", "bianca")
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("seats", [2, 3])
async def test_a_table_has_the_rules_number_of_seats(seats: int) -> None:
    ids = [Identity.generate(n) for n in (*NICKS, "eve")]
    joined: list[Mesh] = []
    async with (
        host_table(ids[0], config=FAST, seats=seats) as host,
        trio.open_nursery() as nursery,
    ):

        async def join(ident: Identity, task_status: trio.TaskStatus[None]) -> None:
            async with join_table(ident, host.invite, config=FAST) as m:
                joined.append(m)
                task_status.started()
                await trio.sleep_forever()

        for ident in ids[1:seats]:
            await nursery.start(join, ident)
        with trio.fail_after(10):
            for m in (host, *joined):
                await m.wait_all_up()  # the whole table, by its own seat count
        assert host.roster is not None and host.roster.full
        assert [m.seat for m in host.roster.members] == list(range(seats))
        with pytest.raises(JoinRefused, match="full"):
            async with join_table(ids[seats], host.invite, config=FAST):
                pass
        nursery.cancel_scope.cancel()


async def test_a_kicked_peer_is_reported_down_once() -> None:
    async with table_of_four() as meshes:
        host, b, c, _d = meshes
        downs: list[PeerDown] = []

        async def watch() -> None:
            while True:
                event = await b.next_event()
                if isinstance(event, PeerDown) and event.peer == c.me:
                    downs.append(event)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            await host.kick(c.me)
            with trio.fail_after(10):
                while not downs:
                    await trio.sleep(0.01)
            await trio.sleep(0.3)  # any second report would have arrived by now
            nursery.cancel_scope.cancel()
        assert len(downs) == 1 and "kicked" in downs[0].reason


async def test_a_joiner_that_leaves_frees_its_seat_and_every_seat_sees_it() -> None:
    async with table_of_four() as meshes:
        host, b, _c, _d = meshes
        seen: dict[str, list[MeshEvent]] = {}

        async def watch(m: Mesh) -> None:
            seen[m.identity.nickname] = await events_until(m, SeatFreed)

        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                for m in meshes:
                    nursery.start_soon(watch, m)
                await trio.sleep(0)
                await b.leave()
        for name in NICKS:
            freed = [e for e in seen[name] if isinstance(e, SeatFreed)]
            assert freed == [SeatFreed(b.me, 1, "bia", "left")], (name, seen[name])
        assert b.unseated == "left"
        with pytest.raises(MeshError):
            await host.leave()
        assert host.roster is not None and [m.seat for m in host.roster.members] == [0, 2, 3]
