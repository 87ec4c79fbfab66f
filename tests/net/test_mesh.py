"""Four peers on loopback: full mesh, broadcast and direct messages exactly once, in order."""

from __future__ import annotations

import trio
from mesh_helpers import assert_quiet, collect, table_of_four

from buraco_p2p.net.mesh.mesh import PeerUp, RosterChanged


async def test_four_peers_form_a_full_direct_mesh() -> None:
    async with table_of_four() as meshes:
        keys = [m.me for m in meshes]
        for m in meshes:
            assert m.roster is not None
            assert m.roster.seat_keys() == tuple(keys)
            assert set(m.peers()) == set(keys) - {m.me}
            for k in m.peers():
                assert m.is_up(k)
                assert not m.is_relayed(k)
        host_roster = meshes[0].roster
        assert host_roster is not None
        assert [mm.nickname for mm in host_roster.members] == ["ana", "bia", "caio", "duda"]


async def test_broadcast_and_direct_messages_arrive_once_in_order_intact() -> None:
    n = 60
    async with table_of_four() as meshes:
        keys = [m.me for m in meshes]

        async def talk(i: int) -> None:
            for j in range(n):
                await meshes[i].broadcast({"from": i, "n": j, "blob": bytes([i, j]) * 300})
                if j % 10 == 0:
                    target = keys[(i + 1) % 4]
                    await meshes[i].send(target, ["direct", i, j])

        async with trio.open_nursery() as nursery:
            for i in range(4):
                nursery.start_soon(talk, i)
        per_receiver = 3 * n + n // 10
        for r, mesh in enumerate(meshes):
            got = await collect(mesh, per_receiver)
            await assert_quiet(mesh)
            by_sender: dict[int, list[object]] = {}
            for key, msg in got:
                by_sender.setdefault(keys.index(key), []).append(msg)
            assert set(by_sender) == {0, 1, 2, 3} - {r}
            for s, msgs in by_sender.items():
                bcast = [m for m in msgs if isinstance(m, dict)]
                assert [m["n"] for m in bcast] == list(range(n))
                assert all(m["from"] == s and m["blob"] == bytes([s, m["n"]]) * 300 for m in bcast)
                direct = [m for m in msgs if isinstance(m, list)]
                expected = [["direct", s, j] for j in range(0, n, 10)] if (s + 1) % 4 == r else []
                assert direct == expected


async def test_events_report_roster_and_links() -> None:
    async with table_of_four() as meshes:
        d = meshes[3]
        events = []
        with trio.move_on_after(0.2):
            while True:
                events.append(await d.next_event())
        ups = {e.peer for e in events if isinstance(e, PeerUp)}
        assert ups == set(d.peers())
        rosters = [e.roster for e in events if isinstance(e, RosterChanged)]
        assert rosters and len(rosters[-1].members) == 4


async def test_ipv6_loopback_table() -> None:
    import socket

    import pytest
    from mesh_helpers import FAST

    from buraco_p2p.net.channel.identity import Identity
    from buraco_p2p.net.mesh.startup import host_table, join_table

    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    async with host_table(Identity.generate("ana"), listen_host="::1", config=FAST) as host:
        assert [str(a) for a in host.invite.addresses] == [f"[::1]:{host.advertised[0].port}"]
        async with join_table(
            Identity.generate("bia"), host.invite, listen_host="::1", config=FAST
        ) as b:
            with trio.fail_after(5):
                await b.wait_all_up(2)
            await b.send(host.me, "olá via IPv6")
            assert await host.receive() == (b.me, "olá via IPv6")
