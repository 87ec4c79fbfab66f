"""A TCP forwarder on loopback that delays, stalls and cuts the connections it carries.

The fault-injecting middle of a network, for machines without namespaces: a peer listens on
one loopback address and tells the table another (`bot-peer --advertise`), where a
`FaultProxy` listens and forwards every connection to the peer. Data goes through in the
order it came, each chunk held for a random moment; `stall` holds everything (new
connections too) like a partition until `resume`; `cut` ends a connection in the middle of a
chunk, half of it forwarded, both sides reset as a dropped NAT mapping or a rebooted router
would leave them.
"""

from __future__ import annotations

import random
import socket
import struct
from dataclasses import dataclass, field

import trio

__all__ = ["FaultProxy"]

CHUNK = 16384


@dataclass(eq=False)
class _Pair:
    client: trio.SocketStream
    target: trio.SocketStream
    cut_next: bool = False
    broken: bool = False
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    done: trio.Event = field(default_factory=trio.Event)


def _reset(stream: trio.SocketStream) -> None:
    """Close with a TCP reset, not an orderly FIN: the other end learns only that it broke."""
    stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    stream.socket.close()


class FaultProxy:
    """Forward `listen` to `target` (both (ip, port) on loopback) through the faults above."""

    def __init__(self, listen: tuple[str, int], target: tuple[str, int], rnd: random.Random,
                 max_delay: float = 0.02) -> None:  # fmt: skip
        self.listen = listen
        self.target = target
        self.rnd = rnd
        self.max_delay = max_delay
        self.pairs: list[_Pair] = []
        self.accepted = 0
        self.forwarded = 0
        self.cuts = 0
        self.held = 0  # connections and chunks that waited for a stall to end
        self._flowing = trio.Event()
        self._flowing.set()

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listener = (await trio.open_tcp_listeners(self.listen[1], host=self.listen[0]))[0]
        async with listener, trio.open_nursery() as nursery:
            task_status.started()
            while True:
                client = await listener.accept()
                self.accepted += 1
                nursery.start_soon(self._carry, client)

    def stall(self) -> None:
        """Hold every byte and every new connection until `resume`."""
        self._flowing = trio.Event()

    def resume(self) -> None:
        self._flowing.set()

    def cut(self) -> trio.Event | None:
        """End one open connection, at random, in the middle of its next chunk; the event
        is set once it is cut (None: no connection open)."""
        live = [p for p in self.pairs if not p.cut_next]
        if not live:
            return None
        pair = self.rnd.choice(live)
        pair.cut_next = True
        return pair.done

    async def _carry(self, client: trio.SocketStream) -> None:
        async with client:
            if not self._flowing.is_set():
                self.held += 1
                await self._flowing.wait()
            try:
                target = await trio.open_tcp_stream(*self.target)
            except OSError:
                return
            pair = _Pair(client, target)
            self.pairs.append(pair)
            try:
                async with target:
                    with pair.scope:
                        async with trio.open_nursery() as nursery:
                            nursery.start_soon(self._pump, pair, client, target)
                            nursery.start_soon(self._pump, pair, target, client)
            finally:
                self.pairs.remove(pair)
                pair.done.set()

    async def _pump(self, pair: _Pair, src: trio.SocketStream, dst: trio.SocketStream) -> None:
        try:
            while data := await src.receive_some(CHUNK):
                await trio.sleep(self.rnd.uniform(0, self.max_delay))
                if not self._flowing.is_set():
                    self.held += 1
                    await self._flowing.wait()
                if pair.cut_next and not pair.broken:
                    pair.broken = True  # by this direction: the other one stops
                    await dst.send_all(data[: max(1, len(data) // 2)])
                    self.cuts += 1
                    _reset(pair.client)
                    _reset(pair.target)
                    pair.scope.cancel()
                    return
                await dst.send_all(data)
                self.forwarded += len(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        # one side finished or broke: so does the other, as a real middlebox would pass it on
        pair.scope.cancel()
