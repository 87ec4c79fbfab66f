"""Hostile joiners and peers: each is refused or cut off, and the table plays on."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
import trio
from mesh_helpers import FAST, assert_quiet, collect, raw_link, table_of_four

from buraco_p2p.net.channel.errors import HandshakeError
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.mesh import JoinRequest, Mesh, MeshError
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.table.table import JoinRefused, Roster, TableError, join_message, mesh_message


async def still_plays(meshes: list[Mesh]) -> None:
    """Every peer broadcasts once and every other peer gets it, once."""
    for i, m in enumerate(meshes):
        await m.broadcast(["ok", i])
    for m in meshes:
        got = await collect(m, 3)
        assert sorted(msg[1] for _, msg in got) == sorted(set(range(4)) - {meshes.index(m)})
        await assert_quiet(m, 0.05)


async def test_wrong_room_secret_cannot_join_and_nobody_notices() -> None:
    async with table_of_four() as meshes:
        host = meshes[0]
        bad = replace(host.invite, room_secret=bytes(16))
        with pytest.raises(MeshError, match=r"handshake|secret|authentic|decrypt"):
            async with join_table(Identity.generate("eve"), bad, config=FAST):
                pass
        assert len(host.roster.members) == 4  # type: ignore[union-attr]
        await still_plays(meshes)


async def test_full_table_and_declined_joiners_are_refused_with_a_reason() -> None:
    asked: list[JoinRequest] = []

    async def approve(request: JoinRequest) -> bool:
        asked.append(request)
        return request.nickname != "eve"

    async with host_table(Identity.generate("ana"), config=FAST, approve=approve) as host:
        with pytest.raises(JoinRefused, match="declined"):
            async with join_table(Identity.generate("eve"), host.invite, config=FAST):
                pass
        async with (
            join_table(Identity.generate("bia"), host.invite, config=FAST),
            join_table(Identity.generate("caio"), host.invite, config=FAST),
            join_table(Identity.generate("duda"), host.invite, config=FAST),
        ):
            with pytest.raises(JoinRefused, match="full"):
                async with join_table(Identity.generate("fred"), host.invite, config=FAST):
                    pass
        assert [r.nickname for r in asked] == ["eve", "bia", "caio", "duda"]
        assert host.roster is not None
        assert [m.nickname for m in host.roster.members] == ["ana", "bia", "caio", "duda"]


async def test_identity_not_in_the_roster_is_refused_by_every_peer() -> None:
    async with table_of_four() as meshes:
        host, b, c, _d = meshes
        mallory = Identity.generate("mallory")
        invite = host.invite
        # Mallory knows the room secret (has the invite) but holds no seat.
        for target, hello in [(b, mesh_message()), (c, join_message(()))]:
            ep = target.advertised[0]
            link = await raw_link(invite, mallory, ep, target.me)
            await link.send(hello)
            with trio.fail_after(3), pytest.raises(Exception):  # noqa: B017 - any close
                await link.receive()
        assert any("mallory" in r and "not seated" in r for r in b.rejections)
        assert any("mallory" in r and "not the host" in r for r in c.rejections)
        # A peer expecting bia but reaching someone else refuses it (pinned identity).
        with pytest.raises(HandshakeError, match=r"expected|mismatch|identity"):
            ep = c.advertised[0]
            await raw_link(invite, mallory, ep, b.me)
        await still_plays(meshes)


GARBAGE: dict[str, tuple[int, Callable[[list[Mesh]], list[Any]], str]] = {
    "unknown message": (2, lambda m: ["zz", "not a mesh message"], "does not carry"),
    "untagged list": (2, lambda m: [[1], 2], "not a tagged record"),
    "map": (0, lambda m: {"d": 1}, "not a tagged record"),
    "resume mid-link": (2, lambda m: ["r", b"x" * 16, 0, None, 0], "does not carry"),
    "roster from a non-host": (2, lambda m: ["roster", {}], "does not carry"),
    "sequence gap": (2, lambda m: ["d", 10**6, 0, "skipped ahead"], "skipped"),
    "ack of unsent data": (2, lambda m: ["a", 10**9], "acknowledged"),
    "malformed record": (2, lambda m: ["d", "x", None], "delivery record"),
    "relay to itself": (0, lambda m: ["rd", m[1].me.raw, 7, b"x"], "itself"),
    "relay to a stranger": (0, lambda m: ["ro", Identity.generate("x").public.raw, 1], "outside"),
    "relay from a non-host": (2, lambda m: ["ro", m[3].me.raw, 1], "does not carry"),
}


@pytest.mark.parametrize("case", sorted(GARBAGE))
async def test_seated_peer_sending_garbage_only_loses_its_own_link(case: str) -> None:
    target_index, make, needle = GARBAGE[case]
    async with table_of_four() as meshes:
        b = meshes[1]
        target = meshes[target_index]
        await b.send_control(target.me, make(meshes))
        with trio.fail_after(5):
            while not any("bia" in r and needle in r for r in target.rejections):
                await trio.sleep(0.01)
        others = [m for m in meshes if m is not b]
        for m in others:
            for k in m.peers():
                if k != b.me:
                    assert m.is_up(k)
        with trio.fail_after(10):
            for m in meshes:
                await m.wait_all_up()
        await still_plays(meshes)


async def test_bogus_roster_from_a_non_host_is_rejected() -> None:
    async with table_of_four() as meshes:
        _host, b, c, _d = meshes
        assert c.roster is not None
        fake = Roster(c.roster.table_id, 99, c.roster.members[:2])
        await b.send_control(c.me, ["roster", fake.to_wire()])
        with trio.fail_after(5):
            while not any("bia" in r for r in c.rejections):
                await trio.sleep(0.01)
        assert c.roster.version < 99 and len(c.roster.members) == 4
        with pytest.raises(TableError):
            Roster.from_wire({"table": b"x", "version": 1, "members": []}, "test")
        await still_plays(meshes)


async def test_flood_of_connections_leaves_the_table_playing() -> None:
    config = replace(FAST, handshake_timeout=1.0)
    async with host_table(Identity.generate("ana"), config=config) as host:
        ep = host.advertised[0]
        async with (
            join_table(Identity.generate("bia"), host.invite, config=config) as b,
            join_table(Identity.generate("caio"), host.invite, config=config) as c,
        ):
            opened: list[trio.SocketStream] = []

            async def flood_one(k: int) -> None:
                try:
                    stream = await trio.open_tcp_stream(ep.host, ep.port, local_address="127.0.0.2")
                except OSError:
                    return
                opened.append(stream)
                try:
                    if k % 3 == 0:
                        await stream.send_all(os.urandom(64 + k))
                    elif k % 3 == 1:
                        await stream.send_all(b"\x00\x00\x00\x2a\x02\x01" + os.urandom(10))
                    await trio.sleep(2)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
                finally:
                    await stream.aclose()

            async with trio.open_nursery() as nursery:
                for k in range(150):
                    nursery.start_soon(flood_one, k)
                await trio.sleep(0.3)
                # While the flood holds its slots, a real joiner from another host gets in.
                async with join_table(Identity.generate("duda"), host.invite, config=config) as d:
                    with trio.fail_after(10):
                        for m in (host, b, c, d):
                            await m.wait_all_up()
                    await still_plays([host, b, c, d])
                    server = host.server
                    assert server is not None
                    # Counted as the server gets to each flood connection, which a loaded
                    # machine may not have done yet: wait for them, do not race them.
                    with trio.fail_after(10):
                        while not (server.refused > 0 and server.failed > 0):
                            await trio.sleep(0.01)
