"""A link the other side resets (TCP RST) ends that link only; the pair reconnects.

The reset hits both the reading and the sending side of the peer that receives it, while
messages flow both ways: nothing may escape the mesh, and every message arrives once.
"""

from __future__ import annotations

import socket
import struct

import trio
from mesh_helpers import FAST, NICKS, collect

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.mesh import Mesh, PeerDown, PeerUp
from buraco_p2p.net.mesh.startup import host_table, join_table

COUNT = 300


def reset_link(mesh: Mesh, peer: Identity) -> None:
    """Abort `mesh`'s TCP connection to `peer` with a RST (SO_LINGER 0, then close)."""
    run = mesh.records[peer.public].run
    assert run is not None
    stream = run.link._stream
    assert isinstance(stream, trio.SocketStream)
    stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    stream.socket.close()


async def wait_for(mesh: Mesh, kind: type, peer: Identity) -> None:
    while True:
        event = await mesh.next_event()
        if isinstance(event, kind) and getattr(event, "peer", None) == peer.public:
            return


async def test_a_reset_link_ends_that_link_only_and_the_pair_resumes() -> None:
    ids = [Identity.generate(n) for n in NICKS[:3]]
    async with (
        host_table(ids[0], config=FAST) as host,
        join_table(ids[1], host.invite, config=FAST) as b,
        join_table(ids[2], host.invite, config=FAST) as c,
    ):
        with trio.fail_after(10):
            for m in (host, b, c):
                await m.wait_all_up(3)

        async def pump(mesh: Mesh, to: Mesh) -> None:
            for i in range(COUNT):
                await mesh.send(to.me, ["n", i])
                if i % 10 == 0:
                    await trio.sleep(0.005)

        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pump, host, b)
                nursery.start_soon(pump, b, host)
                await trio.sleep(0.05)
                reset_link(host, ids[1])
                # b hears the reset on its side of the link and reconnects.
                await wait_for(b, PeerDown, ids[0])
                await wait_for(b, PeerUp, ids[0])
            got_b = await collect(b, COUNT, timeout=20)
            got_host = await collect(host, COUNT, timeout=20)
        assert got_b == [(host.me, ["n", i]) for i in range(COUNT)]
        assert got_host == [(b.me, ["n", i]) for i in range(COUNT)]
        # The neighbour never noticed.
        assert host.is_up(c.me) and c.is_up(host.me) and c.is_up(b.me)
