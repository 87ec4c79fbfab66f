"""A peer that stops reading holds up nobody: each link has its own queue and sender.

The stalled peer runs its own trio loop in a thread, and that loop is then blocked outright:
it reads nothing, so its TCP window closes and stays closed, and it sends no heartbeats.
"""

from __future__ import annotations

import threading
from typing import Any

import trio
from mesh_helpers import FAST, NICKS, collect

from buraco_p2p.net.identity import Identity, PeerKey
from buraco_p2p.net.invite import Invite
from buraco_p2p.net.mesh import Mesh, MeshConfig, PeerDown, host_table, join_table

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
