"""Relaying through the host for pairs that cannot reach each other directly.

The host forwards opaque chunks between two seated peers over the secure links it already
has with each of them; the two endpoints wrap the relayed channel in `RelayStream` (a
`trio.abc.Stream`) and run the very same handshake over it as over TCP. The host only ever
sees the handshake's and the link's ciphertext: it can drop or delay chunks (which the
endpoints detect as a broken link and recover from with a reconnect), but it cannot read
or forge anything, and it cannot impersonate either endpoint because the handshake pins
the expected identity on both sides.

Relay records on a peer<->host link (msgpack lists)::

    ["ro", peer_key, chan]          open a relayed channel
    ["rd", peer_key, chan, bytes]   a chunk of the relayed byte stream
    ["rc", peer_key, chan]          close it

From a peer to the host, `peer_key` names the destination; from the host to a peer, it
names the source (the host rewrites it, so nobody can claim to be someone else). `chan` is
a u32 chosen by the opener so that chunks of an old, broken channel never mix into a new
one. The host keeps no per-channel state.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.channel.identity import PeerKey

RELAY_TAGS = frozenset({"ro", "rd", "rc"})
MAX_CHUNK = 16 * 1024
MAX_QUEUED_CHUNKS = 512
MAX_CHAN = 2**32 - 1


class RelayError(NetError):
    """A malformed relay record, or a relayed channel that broke; names the peer."""


@dataclass(frozen=True)
class RelayRecord:
    kind: str  # "ro", "rd" or "rc"
    peer: PeerKey
    chan: int
    data: bytes = b""

    def to_wire(self) -> list[Any]:
        if self.kind == "rd":
            return ["rd", self.peer.raw, self.chan, self.data]
        return [self.kind, self.peer.raw, self.chan]


def parse_relay(msg: Any, sender: str) -> RelayRecord:
    """Validate a relay record received from `sender`."""
    # The tag is looked up only once it is a str: a peer's array or map would not hash.
    if not isinstance(msg, list) or not msg or not isinstance(msg[0], str) \
            or msg[0] not in RELAY_TAGS:  # fmt: skip
        raise RelayError(f"{sender} sent a malformed relay record")
    kind = msg[0]
    want = 4 if kind == "rd" else 3
    if len(msg) != want:
        raise RelayError(f"{sender} sent a relay record of the wrong length")
    chan = msg[2]
    if type(chan) is not int or not 0 <= chan <= MAX_CHAN:
        raise RelayError(f"{sender} sent a bad relay channel number")
    try:
        peer = PeerKey(msg[1])
    except ValueError as exc:
        raise RelayError(f"{sender} named an invalid key in a relay record") from exc
    data = b""
    if kind == "rd":
        data = msg[3]
        if not isinstance(data, bytes) or not 0 < len(data) <= MAX_CHUNK:
            raise RelayError(f"{sender} sent a relay chunk that is not 1..{MAX_CHUNK} bytes")
    return RelayRecord(kind, peer, chan, data)


SendRecord = Callable[[list[Any]], Awaitable[None]]


class RelayStream(trio.abc.Stream):
    """One end of a relayed channel, as a byte stream for the handshake and `SecureLink`.

    `send_record` delivers a relay record to the host (over our link with it); the host
    link's reader calls `feed`/`feed_eof` with what the host forwards to us.
    """

    def __init__(
        self,
        send_record: SendRecord,
        peer: PeerKey,
        chan: int,
        on_close: Callable[[RelayStream], None] | None = None,
    ) -> None:
        self.peer = peer
        self.chan = chan
        self._send_record = send_record
        self._on_close = on_close
        self._in_send, self._in_recv = trio.open_memory_channel[bytes](MAX_QUEUED_CHUNKS)
        self._pending = b""
        self._closed = False
        self._eof = False
        self._sending = False

    # -- fed by the host link's reader ---------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Queue a chunk; a peer that floods past the queue breaks only this channel."""
        if self._eof:
            return
        try:
            self._in_send.send_nowait(data)
        except trio.WouldBlock:
            self.feed_eof()
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass

    def feed_eof(self) -> None:
        self._eof = True
        self._in_send.close()

    # -- trio.abc.Stream -----------------------------------------------------------------

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self._sending:
            raise trio.BusyResourceError("another task is sending on this relayed stream")
        if self._closed:
            raise trio.ClosedResourceError("relayed stream is closed")
        if self._eof:
            raise trio.BrokenResourceError(f"relayed channel to {self.peer.short()} was closed")
        self._sending = True
        try:
            view = bytes(data)
            if not view:
                await trio.lowlevel.checkpoint()
            for start in range(0, len(view), MAX_CHUNK):
                record = RelayRecord("rd", self.peer, self.chan, view[start : start + MAX_CHUNK])
                try:
                    await self._send_record(record.to_wire())
                except (NetError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    raise trio.BrokenResourceError(
                        f"relay to {self.peer.short()} through the host failed: {exc}"
                    ) from exc
        finally:
            self._sending = False

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._closed:
            raise trio.ClosedResourceError("relayed stream is closed")
        if not self._pending:
            try:
                self._pending = await self._in_recv.receive()
            except trio.EndOfChannel:
                return b""
        else:
            await trio.lowlevel.checkpoint()
        n = len(self._pending) if max_bytes is None else max(1, max_bytes)
        out, self._pending = self._pending[:n], self._pending[n:]
        return out

    async def aclose(self) -> None:
        if self._closed:
            await trio.lowlevel.checkpoint()
            return
        self._closed = True
        was_eof = self._eof
        self.feed_eof()
        self._in_recv.close()
        if self._on_close is not None:
            self._on_close(self)
        if not was_eof:
            with trio.move_on_after(1) as scope:
                scope.shield = True
                with contextlib.suppress(
                    NetError, trio.BrokenResourceError, trio.ClosedResourceError
                ):
                    await self._send_record(RelayRecord("rc", self.peer, self.chan).to_wire())
        await trio.lowlevel.checkpoint()
