"""A welcome never carries a roster the host has not saved.

The host restarts from the roster on its disk (`Mesh.roster_saver`), and a joiner ignores a
roster no newer than its own: a joiner welcomed with a roster the host had not yet written
would, after a host crash at that moment, hold seats or addresses the restarted host never
gave, and would ignore the restarted host's roster of the same version. So every welcome
here is checked against what the host's "disk" (a saver that records each roster) already
held, for every way a seat is given: a new seat, a returning request, and a seated member
back with another nickname or other addresses. A host "killed" at a save raises from the
saver, so nothing after that instant runs in the task that saved.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from mesh_helpers import FAST, raw_link

from buraco_p2p.net.channel.errors import LinkError
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.channel.link import SecureLink
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.mesh import JoinRequest, Mesh
from buraco_p2p.net.mesh.startup import host_table
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.net.table.table import Roster, join_message, parse_welcome

TABLE_ID, ROOM_SECRET = b"T" * 16, b"S" * 16


class HostDied(BaseException):
    """The host process ends at this instant, as under SIGKILL (not an `Exception`, so no
    handler of the host's catches it: it ends the host's mesh)."""


class Disk:
    """The host's roster file: every roster saved, oldest first. With `saves_left` set, that
    many more saves succeed and the next one kills the host before anything is written;
    `full` refuses that many saves with the error a full disk gives."""

    def __init__(self) -> None:
        self.saved: list[Roster] = []
        self.saves_left: int | None = None
        self.full = 0

    def save(self, roster: Roster) -> None:
        if self.saves_left is not None:
            if self.saves_left == 0:
                raise HostDied(f"killed while saving roster version {roster.version}")
            self.saves_left -= 1
        if self.full:
            self.full -= 1
            raise OSError(errno.ENOSPC, "No space left on device")
        self.saved.append(roster)

    def holds(self, roster: Roster) -> bool:
        """Whether this very roster (version and content) was saved."""
        return any(
            r.version == roster.version and r.to_wire() == roster.to_wire() for r in self.saved
        )


def free_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port: int = probe.getsockname()[1]
    probe.close()
    return port


def addrs(*ports: int) -> tuple[Endpoint, ...]:
    return tuple(Endpoint(ipaddress.ip_address("127.0.0.1"), p) for p in ports)


class Host:
    """The host in a task of its own, so that it can die and be started again on its port
    from what its disk holds (as `buraco-p2p` does: it saves the roster it starts with)."""

    def __init__(
        self, nursery: trio.Nursery, approve: Callable[[JoinRequest], Awaitable[bool]]
    ) -> None:
        self.nursery = nursery
        self.approve = approve
        self.identity = Identity.generate("ana")
        self.port = free_port()
        self.disk = Disk()
        self.died = trio.Event()
        self.mesh: Mesh | None = None
        self._scope = trio.CancelScope()

    async def start(self) -> Mesh:
        self.died = trio.Event()
        self._scope = trio.CancelScope()
        restore = self.disk.saved[-1] if self.disk.saved else None
        self.disk = Disk()
        mesh: Mesh = await self.nursery.start(self._run, restore)
        self.mesh = mesh
        return mesh

    async def _run(self, restore: Roster | None, *, task_status: Any) -> None:
        try:
            with self._scope:
                async with host_table(
                    self.identity, port=self.port, config=FAST, table_id=TABLE_ID,
                    room_secret=ROOM_SECRET, roster=restore, approve=self.approve,
                ) as mesh:  # fmt: skip
                    assert mesh.roster is not None
                    self.disk.save(mesh.roster)
                    mesh.roster_saver = self.disk.save
                    task_status.started(mesh)
                    await trio.sleep_forever()
        except* HostDied:
            self.died.set()

    def stop(self) -> None:
        self._scope.cancel()

    @property
    def invite(self) -> Invite:
        assert self.mesh is not None
        return self.mesh.invite


async def _approve_all(request: JoinRequest) -> bool:
    await trio.lowlevel.checkpoint()
    return True


@asynccontextmanager
async def hosting(
    approve: Callable[[JoinRequest], Awaitable[bool]] = _approve_all,
) -> AsyncIterator[Host]:
    """A started `Host` in a nursery of its own, stopped when the test is done with it."""
    async with trio.open_nursery() as nursery:
        host = Host(nursery, approve=approve)
        await host.start()
        yield host
        host.stop()


async def ask(host: Host, who: Identity, addresses: tuple[Endpoint, ...]) -> SecureLink:
    link = await raw_link(host.invite, who, host.invite.addresses[0], host.identity.public)
    await link.send(join_message(addresses))
    return link


async def welcome(link: SecureLink, who: Identity, table_id: bytes = TABLE_ID) -> Roster | None:
    """The roster of the welcome `link` got, or None if it ended without one."""
    with trio.fail_after(10):
        try:
            message = await link.receive()
        except LinkError:
            return None
    roster, _secret = parse_welcome(message, "the host", who.public, table_id)
    return roster


async def welcomed(host: Host, who: Identity, addresses: tuple[Endpoint, ...]) -> Roster:
    """`who` asks from `addresses` and is welcomed with a roster the host's disk already
    held; the link is closed again."""
    link = await ask(host, who, addresses)
    got = await welcome(link, who)
    assert got is not None and host.disk.holds(got)
    await link.aclose()
    return got


async def test_every_welcome_carries_a_roster_the_host_saved_before_sending_it() -> None:
    bia = Identity.generate("bia")
    async with hosting() as host:
        # A new seat.
        first = (await welcomed(host, bia, addrs(40001))).version
        # Back with the same addresses under another nickname: the seat keeps its nickname,
        # and the roster (already saved) does not change.
        got = await welcomed(host, Identity.from_seed(bia.private_seed(), "bianca"), addrs(40001))
        member = got.member(bia.public)
        assert got.version == first and member is not None and member.nickname == "bia"
        # Back from other addresses: a newer roster, saved before its welcome left.
        got = await welcomed(host, bia, addrs(40002))
        assert got.version > first
        member = got.member(bia.public)
        assert member is not None and member.addresses == addrs(40002)


async def test_a_host_killed_at_a_readmission_welcomes_nobody_with_the_unsaved_roster() -> None:
    bia = Identity.generate("bia")
    async with hosting() as host:
        seated = await welcomed(host, bia, addrs(40001))
        # Back from another address; the host dies as it saves the roster that records it.
        host.disk.saves_left = 0
        link = await ask(host, bia, addrs(40002))
        got = await welcome(link, bia)
        with trio.fail_after(10):
            await host.died.wait()
        held = [seated] if got is None else [seated, got]
        assert all(host.disk.holds(r) for r in held), [r.version for r in held]
        await link.aclose()
        await _restarted_host_outranks(host, bia, held, addrs(40003))


async def test_a_host_killed_at_a_returning_request_welcomes_nobody_with_the_unsaved_roster() -> (
    None
):
    """Two requests of one identity wait together: the first is seated, the second finds
    it seated (a returning request) and moves its addresses."""
    bia = Identity.generate("bia")
    second_waiting = trio.Event()

    async def approve(request: JoinRequest) -> bool:
        if request.number == 1:
            await second_waiting.wait()
        await trio.lowlevel.checkpoint()
        return True

    async with hosting(approve) as host:
        mesh = host.mesh
        assert mesh is not None
        first = await ask(host, bia, addrs(40001))
        second = await ask(host, bia, addrs(40002))
        with trio.fail_after(10):
            while mesh.door.waiting < 2:
                await trio.sleep(0.01)
        # The first seat's roster is saved; the host dies as it saves the second request's.
        host.disk.saves_left = 1
        second_waiting.set()
        seated = await welcome(first, bia)
        assert seated is not None and host.disk.holds(seated)
        got = await welcome(second, bia)
        with trio.fail_after(10):
            await host.died.wait()
        held = [seated] if got is None else [seated, got]
        assert all(host.disk.holds(r) for r in held), [r.version for r in held]
        for link in (first, second):
            await link.aclose()
        await _restarted_host_outranks(host, bia, held, addrs(40003))


async def test_a_host_killed_at_a_new_seat_welcomes_nobody_and_gives_no_seat() -> None:
    bia = Identity.generate("bia")
    async with hosting() as host:
        host.disk.saves_left = 0
        link = await ask(host, bia, addrs(40001))
        assert await welcome(link, bia) is None
        with trio.fail_after(10):
            await host.died.wait()
        await link.aclose()
        assert all(r.member(bia.public) is None for r in host.disk.saved)
        # The restarted host seats it as new, with a roster it saved first.
        await host.start()
        await welcomed(host, bia, addrs(40001))


async def _restarted_host_outranks(
    host: Host, who: Identity, held: list[Roster], addresses: tuple[Endpoint, ...]
) -> None:
    """The host restarted from its disk: its roster is newer than any `who` was welcomed
    with (a joiner ignores one that is not), and `who` is readmitted under it."""
    mesh = await host.start()
    assert mesh.roster is not None
    assert mesh.roster.version > max(r.version for r in held)
    got = await welcomed(host, who, addresses)
    member = got.member(who.public)
    assert member is not None and member.addresses == addresses


async def test_a_roster_the_disk_refused_is_saved_before_the_next_welcome() -> None:
    """A full disk fails one save: that member gets no welcome (its link closes, so it asks
    again), and the next request saves the roster before it is welcomed."""
    bia = Identity.generate("bia")
    async with hosting() as host:
        mesh = host.mesh
        assert mesh is not None
        seated = await welcomed(host, bia, addrs(40001))
        host.disk.full = 1
        link = await ask(host, bia, addrs(40002))
        assert await welcome(link, bia) is None
        assert any("could not be saved" in r for r in mesh.rejections), list(mesh.rejections)
        await link.aclose()
        assert mesh.roster is not None and host.disk.holds(mesh.roster)
        got = await welcomed(host, bia, addrs(40002))
        assert got.version > seated.version


@pytest.mark.parametrize(("seats", "failed_saves"), [(2, 1), (6, 2)])
async def test_a_new_seat_whose_save_fails_is_taken_back(seats: int, failed_saves: int) -> None:
    """The seat stands only if it is saved and welcomed: a full disk gives no seat, also when
    the roster that takes it back cannot be saved either; the next joiner is seated."""
    bia = Identity.generate("bia")
    async with host_table(Identity.generate("ana"), config=FAST, seats=seats) as mesh:
        disk = Disk()
        assert mesh.roster is not None
        disk.save(mesh.roster)
        mesh.roster_saver = disk.save
        disk.full = failed_saves
        invite = mesh.invite
        link = await raw_link(invite, bia, invite.addresses[0], mesh.me)
        await link.send(join_message(addrs(40001)))
        with trio.fail_after(10), pytest.raises(LinkError):
            await link.receive()
        await link.aclose()
        assert mesh.door.table is not None
        assert mesh.door.table.roster.member(bia.public) is None
        assert mesh.roster.member(bia.public) is None
        assert all(r.member(bia.public) is None for r in disk.saved)
        assert mesh.roster.seats == seats
        assert any("seat not given" in r for r in mesh.rejections), list(mesh.rejections)
        caio = Identity.generate("caio")
        link = await raw_link(invite, caio, invite.addresses[0], mesh.me)
        await link.send(join_message(addrs(40002)))
        with trio.fail_after(10):
            got = await welcome(link, caio, invite.table_id)
        assert got is not None and disk.holds(got) and got.member(bia.public) is None
        member = got.member(caio.public)
        assert member is not None and member.seat == 1
        await link.aclose()


async def test_a_kick_whose_roster_fails_to_save_frees_nothing_and_says_why() -> None:
    """A kick is all or nothing: the roster that frees the seat is saved before the table or
    the mesh changes. A full disk leaves the seat taken everywhere, so the next roster that
    does save (here: the host adds an address) still seats the player; the host reads one
    line saying why; a kick after the disk recovers frees the seat."""
    bia = Identity.generate("bia")
    async with host_table(Identity.generate("ana"), config=FAST, seats=3) as mesh:
        disk = Disk()
        assert mesh.roster is not None and mesh.door.table is not None
        disk.save(mesh.roster)
        mesh.roster_saver = disk.save
        invite = mesh.invite
        link = await raw_link(invite, bia, invite.addresses[0], mesh.me)
        await link.send(join_message(addrs(40001)))
        with trio.fail_after(10):
            seated = await welcome(link, bia, invite.table_id)
        assert seated is not None and disk.holds(seated)
        lines: list[str] = []
        lobby = Lobby(mesh, lines.append)
        disk.full = 1
        await lobby.handle_line("/kick 2")
        assert len(lines) == 1, lines
        assert lines[0].startswith("* cannot free seat 2: ") and "No space left" in lines[0]
        assert "\n" not in lines[0]
        assert mesh.roster == seated
        assert mesh.door.table.roster.member(bia.public) is not None
        assert all(r.member(bia.public) is not None for r in disk.saved[1:])
        mesh.advertise_also(addrs(40009)[0])
        assert mesh.roster.version > seated.version and disk.holds(mesh.roster)
        assert mesh.roster.member(bia.public) is not None
        assert not mesh.roster.departures
        lines.clear()
        await lobby.handle_line("/kick 2")
        assert lines == []
        assert mesh.roster.member(bia.public) is None and disk.holds(mesh.roster)
        assert mesh.door.table.roster == mesh.roster
        assert [d.key for d in mesh.roster.departures] == [bia.public]
        await link.aclose()
