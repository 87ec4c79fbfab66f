"""A peer that stops reading holds up nobody: each link has its own queue and sender.

The stalled peer runs its own trio loop in a thread, and that loop is then blocked outright:
it reads nothing, so its TCP window closes and stays closed, and it sends no heartbeats.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
from mesh_helpers import FAST, NICKS, collect, raw_link

from buraco_p2p.net.channel.errors import LinkClosed
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.link import SecureLink
from buraco_p2p.net.mesh.mesh import Mesh, MeshConfig, PeerDown
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.net.table.table import join_message

# Large enough that 200 of them overflow the kernel's socket buffers many times over.
PAYLOAD = bytes(64 * 1024)
COUNT = 200
# The stall and silence timeouts; the healthy peers are served long before either fires.
CONFIG = MeshConfig(**{**FAST.__dict__, "heartbeat_timeout": 4.0})


class StalledPeer:
    """A seated peer whose whole event loop can be frozen and thawed from the test."""

    def __init__(self, identity: Identity, invite: Invite) -> None:
        self.identity = identity
        self.invite = invite
        self.joined = threading.Event()
        self.freeze = threading.Event()
        self.frozen = threading.Event()
        self.thaw = threading.Event()
        self.received: list[tuple[PeerKey, Any]] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # reported to the test's own thread
            self.error = exc
            self.joined.set()
            self.frozen.set()

    async def _main(self) -> None:
        async with join_table(self.identity, self.invite, config=CONFIG) as mesh:
            with trio.fail_after(10):
                await mesh.wait_all_up()
            self.joined.set()
            while not self.freeze.is_set():
                await trio.sleep(0.01)
            self.frozen.set()
            self.thaw.wait()  # blocks the whole loop: nothing is read or sent meanwhile
            self.received = await collect(mesh, COUNT, timeout=20)


async def wait_thread_event(event: threading.Event) -> None:
    await trio.to_thread.run_sync(event.wait, abandon_on_cancel=True)


async def test_a_stalled_peer_does_not_delay_broadcasts_to_the_others() -> None:
    ids = [Identity.generate(n) for n in NICKS]
    log: list[str] = []
    async with (
        host_table(ids[0], config=CONFIG) as host,
        join_table(ids[1], host.invite, config=CONFIG) as b,
        join_table(ids[2], host.invite, config=CONFIG) as c,
        trio.open_nursery() as nursery,
    ):
        stalled = StalledPeer(ids[3], host.invite)
        nursery.start_soon(trio.to_thread.run_sync, stalled.run)
        try:
            with trio.fail_after(15):
                await wait_thread_event(stalled.joined)
                assert stalled.error is None, stalled.error
                for m in (host, b, c):
                    await m.wait_all_up()
                stalled.freeze.set()
                await wait_thread_event(stalled.frozen)
            d_key = ids[3].public

            async def watch_host() -> None:
                while True:
                    event = await host.next_event()
                    if isinstance(event, PeerDown) and event.peer == d_key:
                        log.append("stalled peer down")
                        return

            async def receive_all(mesh: Mesh, name: str) -> None:
                got = await collect(mesh, COUNT, timeout=20)
                assert got == [(host.me, [i, PAYLOAD]) for i in range(COUNT)]
                log.append(f"{name} has all")

            async def broadcast_all() -> None:
                for i in range(COUNT):
                    await host.broadcast([i, PAYLOAD])
                log.append("broadcast done")

            async with trio.open_nursery() as inner:
                inner.start_soon(watch_host)
                inner.start_soon(receive_all, b, "bia")
                inner.start_soon(receive_all, c, "caio")
                inner.start_soon(broadcast_all)
            # The healthy peers had everything before the stalled one was given up on.
            assert log.index("broadcast done") < log.index("stalled peer down")
            assert log.index("bia has all") < log.index("stalled peer down")
            assert log.index("caio has all") < log.index("stalled peer down")
            assert not stalled.thaw.is_set() and stalled.received == []
            assert not host.is_up(d_key)
            assert any("duda" in r for r in host.rejections), list(host.rejections)
        finally:
            stalled.thaw.set()
        # Thawed, it reconnects and gets every message it missed, once, in order.
        with trio.fail_after(30):
            while not stalled.received and stalled.error is None:
                await trio.sleep(0.05)
        assert stalled.error is None, stalled.error
        assert stalled.received == [(host.me, [i, PAYLOAD]) for i in range(COUNT)]


class NonReader:
    """A seated peer that keeps its link alive with heartbeats but never reads a byte.

    Only the host's sender can tell it is stalled: it is never silent.
    """

    def __init__(self, link: SecureLink) -> None:
        self.link = link

    async def heartbeat(self) -> None:
        """Until the host drops the link: a reset is the end of this link, not an error."""
        try:
            while True:
                await self.link.send(["a", 0])
                await trio.sleep(0.1)
        except LinkClosed:
            return


@asynccontextmanager
async def non_reader(host: Mesh, identity: Identity) -> AsyncIterator[NonReader]:
    invite = host.invite
    ep = invite.addresses[0]
    link = await raw_link(invite, identity, ep, host.me)
    async with link, trio.open_nursery() as nursery:
        await link.send(join_message(()))
        welcome = await link.receive()
        assert welcome[0] == "welcome"
        await link.send(["r", b"\x01" * 16, 0, None, 0])
        peer = NonReader(link)
        nursery.start_soon(peer.heartbeat)
        yield peer
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def table_with_non_reader(config: MeshConfig) -> AsyncIterator[tuple[Mesh, Mesh, PeerKey]]:
    """Host, one ordinary peer b, and a seated peer that never reads; all links up."""
    ids = [Identity.generate(n) for n in NICKS[:3]]
    async with (
        host_table(ids[0], config=config) as host,
        join_table(ids[1], host.invite, config=config) as b,
        non_reader(host, ids[2]),
    ):
        stuck = ids[2].public
        with trio.fail_after(10):
            while not (host.is_up(stuck) and b.is_up(host.me)):
                await trio.sleep(0.01)
        yield host, b, stuck


async def wait_down(mesh: Mesh, peer: PeerKey) -> PeerDown:
    while True:
        event = await mesh.next_event()
        if isinstance(event, PeerDown) and event.peer == peer:
            return event


async def test_a_peer_that_heartbeats_but_never_reads_is_dropped_by_its_stuck_sender() -> None:
    async with table_with_non_reader(CONFIG) as (host, b, d_key):
        log: list[str] = []

        async def watch() -> None:
            event = await wait_down(host, d_key)
            log.append(event.reason)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            with trio.fail_after(20):
                for i in range(COUNT):
                    await host.broadcast([i, PAYLOAD])
            assert await collect(b, COUNT, timeout=20) == [
                (host.me, [i, PAYLOAD]) for i in range(COUNT)
            ]
            assert log == []  # b had everything while the stuck link was still being waited on
        assert len(log) == 1 and "stopped reading" in log[0], log
        assert not host.is_up(d_key) and host.is_up(b.me)


async def test_a_link_whose_queue_overflows_is_dropped_at_once() -> None:
    # A small retransmit buffer gives a small queue; long timeouts rule out the other causes.
    config = MeshConfig(
        **{
            **FAST.__dict__,
            "heartbeat_timeout": 30.0,
            "max_buffer": 16,
            "relay_queue_bytes": 1 << 30,
        }
    )
    async with table_with_non_reader(config) as (host, b, d_key):
        chunk = bytes(16 * 1024)
        with trio.fail_after(20):
            # b relays far more to the non-reader than its queue and socket buffers hold.
            for _ in range(4000):
                if not host.is_up(d_key):
                    break
                await b.send_relayed_chunk(host.me, ["rd", d_key.raw, 7, chunk], len(chunk))
            event = await wait_down(host, d_key)
        assert "is not reading" in event.reason and "records are queued" in event.reason
        assert host.is_up(b.me) and b.is_up(host.me)  # the sender's own link is untouched
        await b.send(host.me, "still here")
        assert await collect(host, 1) == [(b.me, "still here")]


async def test_relaying_to_a_peer_that_does_not_drain_closes_the_channel_not_its_link() -> None:
    config = MeshConfig(
        **{**FAST.__dict__, "heartbeat_timeout": 30.0, "relay_queue_bytes": 256 * 1024}
    )
    async with table_with_non_reader(config) as (host, b, d_key):
        chunk = bytes(16 * 1024)
        with trio.fail_after(20):
            # Enough to fill the socket buffers towards the non-reader, then the budget.
            for _ in range(2000):
                if any("not keeping up" in r for r in host.rejections):
                    break
                await b.send_relayed_chunk(host.me, ["rd", d_key.raw, 7, chunk], len(chunk))
        assert any(
            b.me.fingerprint() in r and "not keeping up" in r for r in host.rejections
        ), list(host.rejections)
        assert host.is_up(d_key) and host.is_up(b.me)  # no link was dropped for it
