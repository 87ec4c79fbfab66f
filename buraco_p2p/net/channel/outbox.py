"""A link's outgoing side: the bounded queue its own sender task drains, and the run record.

Every link writes through its own queue so that `send` and `broadcast` never wait for a
socket: a peer that stops reading fills only its own queue, and the mesh drops that link.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import trio

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.channel.link import SecureLink

__all__ = ["LinkPath", "LinkRun", "Outbox"]


class LinkPath(IntEnum):
    """How a link runs, the better path the greater: a relay costs latency, and a TURN
    server learns who plays with whom, so one is never taken where a direct path works."""

    HOST_RELAY = 0  # through the host (2.7)
    TURN = 1  # through a TURN server, ours or the peer's (2.14)
    DIRECT = 2  # dialed, mapped or punched


class Outbox:
    """A link's outgoing records, in order, written by the link's own sender task.

    `put` never waits: a full queue means the peer is not reading, and the caller drops the
    link. Relayed chunks are also counted in bytes; our own relayed streams wait (`put_paced`)
    while half of that budget is in use, which leaves the rest for everything else.
    """

    def __init__(self, limit: int, relay_bytes: int) -> None:
        self.limit = limit
        self.relay_budget = relay_bytes
        self.relay_bytes = 0
        self.closed = False
        self._items: deque[tuple[list[Any], int]] = deque()
        self._ready = trio.Event()
        self._room = trio.Event()
        self._busy = False  # the sender holds a record it is still writing
        self._idle = trio.Event()

    def __len__(self) -> int:
        return len(self._items)

    def relay_room(self, size: int) -> bool:
        return self.relay_bytes + size <= self.relay_budget

    def put(self, record: list[Any], relay_size: int = 0) -> bool:
        """Queue `record`; False if the link is closed or the queue is full."""
        if self.closed or len(self._items) >= self.limit or not self.relay_room(relay_size):
            return False
        self._items.append((record, relay_size))
        self.relay_bytes += relay_size
        self._ready.set()
        return True

    async def put_paced(self, record: list[Any], relay_size: int) -> bool:
        """Queue a chunk of our own relayed stream once there is room for it."""
        while not self.closed and (
            self.relay_bytes + relay_size > self.relay_budget // 2
            or len(self._items) >= self.limit // 2
        ):
            self._room = trio.Event()
            await self._room.wait()
        return self.put(record, relay_size)

    async def get(self) -> list[Any]:
        while not self._items:
            self._ready = trio.Event()
            await self._ready.wait()
        record, size = self._items.popleft()
        self.relay_bytes -= size
        self._room.set()
        self._busy = True
        return record

    def sent(self) -> None:
        """The sender finished writing the record it took last."""
        self._busy = False
        if not self._items:
            self._idle.set()

    async def drained(self) -> None:
        """Until everything queued so far has been written (or the link closed)."""
        while not self.closed and (self._items or self._busy):
            self._idle = trio.Event()
            await self._idle.wait()

    def close(self) -> None:
        self.closed = True
        self._items.clear()
        self.relay_bytes = 0
        self._room.set()
        self._idle.set()


@dataclass
class LinkRun:
    link: SecureLink
    relayed: bool
    outbox: Outbox
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    done: trio.Event = field(default_factory=trio.Event)
    up: bool = False
    error: NetError | None = None  # why the link was dropped from outside its reader
    replaced: str | None = None  # set when a newer link for the same peer took over
    path: LinkPath = LinkPath.DIRECT

