"""Pairs that cannot link directly talk through the host, which sees only ciphertext."""

from __future__ import annotations

import trio
from mesh_helpers import FAST, assert_quiet, collect, table_of_four

from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.mesh.mesh import MeshConfig, PeerDown, PeerUp
from buraco_p2p.net.mesh.relay import RelayRecord

MARKER = b"PLAINTEXT-MARKER-7f3a9c"


def relay_config(ids: list[Identity], chunks: list[tuple[PeerKey, PeerKey, bytes]]) -> MeshConfig:
    blocked = {ids[1].public, ids[2].public}

    def refuse(a: PeerKey, b: PeerKey) -> bool:
        return {a, b} == blocked

    def tap(src: PeerKey, dst: PeerKey, data: bytes) -> None:
        chunks.append((src, dst, data))

    return MeshConfig(**{**FAST.__dict__, "refuse_direct": refuse, "relay_tap": tap})


async def test_refused_pair_falls_back_to_relay_and_host_sees_only_ciphertext() -> None:
    ids = [Identity.generate(n) for n in ("ana", "bia", "caio", "duda")]
    chunks: list[tuple[PeerKey, PeerKey, bytes]] = []
    async with table_of_four(relay_config(ids, chunks), ids) as meshes:
        host, b, c, d = meshes
        assert b.is_relayed(c.me) and c.is_relayed(b.me)
        assert not b.is_relayed(d.me) and not c.is_relayed(d.me)
        assert not host.is_relayed(b.me)
        before = len(chunks)
        for i in range(30):
            await b.send(c.me, {"i": i, "secret": MARKER + bytes([i])})
            await c.send(b.me, [i, MARKER.decode()])
        got_c = await collect(c, 30)
        got_b = await collect(b, 30)
        await assert_quiet(c)
        assert got_c == [(b.me, {"i": i, "secret": MARKER + bytes([i])}) for i in range(30)]
        assert got_b == [(c.me, [i, MARKER.decode()]) for i in range(30)]
        relayed = chunks[before:]
        assert relayed, "the host relayed nothing"
        assert {(s, t) for s, t, _ in relayed} <= {(b.me, c.me), (c.me, b.me)}
        stream = b"".join(data for _, _, data in chunks)
        assert MARKER not in stream
        assert MARKER.decode().encode("utf-8") not in stream
        assert host.relayed_chunks >= len(relayed)


async def test_host_forging_relayed_traffic_breaks_the_link_not_the_messages() -> None:
    """A chunk the host makes up fails authentication; the pair reconnects, nothing is lost."""
    ids = [Identity.generate(n) for n in ("ana", "bia", "caio", "duda")]
    chunks: list[tuple[PeerKey, PeerKey, bytes]] = []
    async with table_of_four(relay_config(ids, chunks), ids) as meshes:
        host, b, c, _d = meshes
        await b.send(c.me, "before")
        assert await collect(c, 1) == [(b.me, "before")]
        # The host injects a forged frame into the b->c relayed stream, claiming to be b.
        chan = next(k[1] for k in c.relays.streams if k[0] == b.me)
        forged = bytes([0, 0, 0, 40, 2, 0x11]) + bytes(40)
        await host.send_control(c.me, RelayRecord("rd", b.me, chan, forged).to_wire())
        with trio.fail_after(5):
            while True:
                event = await c.next_event()
                if isinstance(event, PeerDown) and event.peer == b.me:
                    break
        assert any(
            "bia" in r and "failed authentication" in r for r in c.rejections
        ), list(c.rejections)
        for i in range(5):
            await b.send(c.me, ["after", i])
        with trio.fail_after(5):
            while True:
                event = await c.next_event()
                if isinstance(event, PeerUp) and event.peer == b.me:
                    assert event.relayed
                    break
        assert await collect(c, 5) == [(b.me, ["after", i]) for i in range(5)]
        await assert_quiet(c)
        # The broken relayed channel is forgotten on both ends; only the new one is left.
        assert [k[0] for k in b.relays.streams] == [c.me]
        assert [k[0] for k in c.relays.streams] == [b.me]
        assert next(iter(c.relays.streams))[1] != chan
