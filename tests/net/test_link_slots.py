"""Handshake slots: bounded per IPv4 address and per IPv6 /64, the oldest stranger evicted,
unseated links capped, and seated players always let back in."""

from __future__ import annotations

import dataclasses
import socket

import pytest
import trio
from mesh_helpers import FAST

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.channel.link import SecureLink, connect
from buraco_p2p.net.channel.server import LinkServer, source_bucket
from buraco_p2p.net.mesh.startup import host_table, join_table

# Half-open handshakes must outlive the test's attack, or the pool would free itself.
PATIENT = dataclasses.replace(FAST, handshake_timeout=60.0)
ROOM = bytes(range(16))
TABLE = b"slots-test-table"


def test_sources_are_ipv4_addresses_and_ipv6_slash_64s() -> None:
    assert source_bucket("127.0.0.5") == "127.0.0.5"
    assert source_bucket("2001:db8::1") == source_bucket("2001:db8::ffff:1234:1")
    assert source_bucket("2001:db8::1") == "2001:db8::/64"
    assert source_bucket("2001:db8:0:1::1") != source_bucket("2001:db8::1")
    assert source_bucket("fe80::1%eth0") == "fe80::/64"
    assert source_bucket("::ffff:10.1.2.3") == "10.1.2.3"


async def _half_open(port: int, source: str, count: int, into: list[trio.SocketStream]) -> None:
    for _ in range(count):
        into.append(await trio.open_tcp_stream("127.0.0.1", port, local_address=source))


async def _settle(server: LinkServer, pending: int) -> None:
    with trio.fail_after(10):
        while server.pending < pending:
            await trio.sleep(0.01)


async def test_a_seated_player_who_restarts_gets_in_past_80_half_open_handshakes() -> None:
    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    async with host_table(ana, config=PATIENT) as host:
        invite = host.invite
        port = invite.addresses[0].port
        async with join_table(bia, invite, config=FAST):
            pass  # bia is seated, then her process ends
        assert host.roster is not None and host.roster.member(bia.public) is not None
        server = host.server
        assert server is not None
        flood: list[trio.SocketStream] = []
        # Eight source addresses, ten half-open handshakes each: the pool is full.
        for n in range(8):
            await _half_open(port, f"127.0.0.{10 + n}", 10, flood)
        await _settle(server, 64)
        assert server.pending == 64
        assert all(server.pending_from(f"127.0.0.{10 + n}") == 8 for n in range(8))
        # bia restarts and comes back from 127.0.0.1; a newcomer arrives from another host.
        async with join_table(bia, invite, config=FAST) as back:
            assert back.roster is not None and back.roster.member(bia.public) is not None
            assert back.roster.member(bia.public).seat == 1  # type: ignore[union-attr]
        async with join_table(Identity.generate("caio"), invite, config=FAST) as caio:
            assert caio.roster is not None and caio.roster.member(caio.me) is not None
        assert server.evicted >= 1  # the oldest stranger made room
        assert server.pending <= 64
        for stream in flood:
            await stream.aclose()


async def test_a_flood_from_one_source_holds_only_its_own_slots() -> None:
    host = Identity.generate("host")
    served: list[str] = []

    async def handler(link: SecureLink) -> None:
        served.append(link.peer_nickname)
        await link.send("hello")

    server = LinkServer(host, handler, room_secret=ROOM, table_id=TABLE, handshake_timeout=60.0)
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, listeners)
        flood: list[trio.SocketStream] = []
        await _half_open(port, "127.0.0.20", 30, flood)
        with trio.fail_after(10):
            while server.refused < 30 - 8:
                await trio.sleep(0.01)
        assert server.pending == 8 and server.pending_from("127.0.0.20") == 8
        # The flooding source cannot evict its own way in beyond its share ...
        assert server.evicted == 0
        # ... and a peer from elsewhere is served at once.
        link = await connect(
            "127.0.0.1", port, Identity.generate("guest"), room_secret=ROOM, table_id=TABLE
        )
        with trio.fail_after(5):
            assert await link.receive() == "hello"
        await link.aclose()
        for stream in flood:
            await stream.aclose()
        nursery.cancel_scope.cancel()


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback (::1) on this machine")
async def test_an_ipv6_flood_counts_as_one_slash_64() -> None:
    host = Identity.generate("host")

    async def handler(link: SecureLink) -> None:
        await link.send("hello")

    server = LinkServer(host, handler, room_secret=ROOM, table_id=TABLE, handshake_timeout=60.0)
    listeners = await trio.open_tcp_listeners(0, host="::1")
    port = listeners[0].socket.getsockname()[1]
    listeners += await trio.open_tcp_listeners(port, host="127.0.0.1")
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, listeners)
        flood = [await trio.open_tcp_stream("::1", port) for _ in range(20)]
        with trio.fail_after(10):
            while server.refused < 20 - 8:
                await trio.sleep(0.01)
        assert server.pending_from(source_bucket("::1")) == 8
        link = await connect(
            "127.0.0.1", port, Identity.generate("guest"), room_secret=ROOM, table_id=TABLE
        )
        with trio.fail_after(5):
            assert await link.receive() == "hello"
        await link.aclose()
        for stream in flood:
            await stream.aclose()
        nursery.cancel_scope.cancel()


async def test_authenticated_strangers_are_capped_but_seated_identities_are_not() -> None:
    host = Identity.generate("host")
    seated = Identity.generate("seated")
    release = trio.Event()

    async def handler(link: SecureLink) -> None:
        await link.send("hello")
        await release.wait()  # strangers that never finish their greeting

    server = LinkServer(
        host,
        handler,
        room_secret=ROOM,
        table_id=TABLE,
        max_unseated=5,
        is_member=lambda key: key == seated.public,
    )
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, listeners)
        strangers = []
        for n in range(5):
            link = await connect(
                "127.0.0.1", port, Identity.generate(f"s{n}"), room_secret=ROOM, table_id=TABLE
            )
            with trio.fail_after(5):
                assert await link.receive() == "hello"
            strangers.append(link)
        assert server.unseated == 5
        extra = await connect(
            "127.0.0.1", port, Identity.generate("s5"), room_secret=ROOM, table_id=TABLE
        )
        with trio.fail_after(5), pytest.raises(Exception, match="closed"):
            await extra.receive()
        assert server.refused_unseated == 1
        member = await connect("127.0.0.1", port, seated, room_secret=ROOM, table_id=TABLE)
        with trio.fail_after(5):
            assert await member.receive() == "hello"
        assert server.unseated == 5
        release.set()
        for link in [*strangers, member]:
            await link.aclose()
        with trio.fail_after(5):
            while server.unseated:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
