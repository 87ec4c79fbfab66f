"""A relayed pair keeps trying the direct link and moves to it, losing and repeating nothing."""

from __future__ import annotations

import trio
from mesh_helpers import FAST, NICKS, assert_quiet, collect, table_of_four

from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.mesh.mesh import Mesh, MeshConfig, PeerDown, PeerUp


async def test_relayed_pair_moves_to_a_direct_link_once_one_opens() -> None:
    ids = [Identity.generate(n) for n in NICKS]
    blocked = {ids[1].public, ids[2].public}
    allowed = False

    def refuse(a: PeerKey, b: PeerKey) -> bool:
        return not allowed and {a, b} == blocked

    config = MeshConfig(
        **{
            **FAST.__dict__,
            "refuse_direct": refuse,
            "direct_retry_min": 0.05,
            "direct_retry_max": 0.2,
        }
    )
    async with table_of_four(config, ids) as meshes:
        host, b, c, d = meshes
        assert b.is_relayed(c.me) and c.is_relayed(b.me)
        chunks_before = host.relayed_chunks
        # Several retries are refused meanwhile: the pair stays relayed, traffic flows.
        await trio.sleep(0.5)
        assert b.is_relayed(c.me) and c.is_relayed(b.me)
        events: dict[str, list[object]] = {"bia": [], "caio": []}

        async def watch(mesh: Mesh, name: str, other: PeerKey) -> None:
            while True:
                event = await mesh.next_event()
                if isinstance(event, PeerUp | PeerDown) and event.peer == other:
                    events[name].append(event)

        sent = 0

        async def send_round() -> None:
            nonlocal sent
            await b.send(c.me, ["from b", sent])
            await c.send(b.me, ["from c", sent])
            sent += 1

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch, b, "bia", c.me)
            nursery.start_soon(watch, c, "caio", b.me)
            for _ in range(30):
                await send_round()
            assert host.relayed_chunks > chunks_before
            allowed = True
            # Keep talking while the pair switches over, then a while after.
            with trio.fail_after(10):
                while b.is_relayed(c.me) or c.is_relayed(b.me) or not (
                    b.is_up(c.me) and c.is_up(b.me)
                ):
                    await send_round()
                    await trio.sleep(0.005)
            for _ in range(30):
                await send_round()
            got_c = await collect(c, sent)
            got_b = await collect(b, sent)
            await assert_quiet(c)
            await assert_quiet(b)
            nursery.cancel_scope.cancel()
        assert got_c == [(b.me, ["from b", i]) for i in range(sent)]
        assert got_b == [(c.me, ["from c", i]) for i in range(sent)]
        assert not b.is_relayed(c.me) and not c.is_relayed(b.me)
        # The relayed channel is gone on both ends.
        assert not b.relays.streams and not c.relays.streams
        # Each side saw the relayed link give way to a direct one, and the peer never
        # shown down: the move is no disconnection.
        for name in ("bia", "caio"):
            ups = [e for e in events[name] if isinstance(e, PeerUp)]
            assert ups and not ups[-1].relayed, events[name]
            downs = [e for e in events[name] if isinstance(e, PeerDown)]
            assert not any(e.reason == "moved to a direct link" for e in downs), events[name]
        # Nothing between them goes through the host any more.
        chunks = host.relayed_chunks
        await b.send(c.me, "direct now")
        assert await collect(c, 1) == [(b.me, "direct now")]
        assert host.relayed_chunks == chunks
        assert d.is_up(b.me) and d.is_up(c.me)
