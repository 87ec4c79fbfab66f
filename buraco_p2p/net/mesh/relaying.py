"""The relayed channels of one peer: opening, accepting, forwarding (host) and upgrading.

`relay.py` holds the wire records and the byte stream (`RelayStream`); this module runs
them on behalf of a `Mesh`. On a joiner it keeps the relayed streams that pass through the
host link, opens one when a direct link to a peer cannot be had, and accepts the ones the
host opens towards us; on the host it forwards chunks between two seated peers, naming the
real source. A relayed pair keeps trying the direct link and moves to it when it opens.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import trio

from buraco_p2p.net.channel.errors import LinkError, MeshError
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.channel.link import SecureLink, handshake
from buraco_p2p.net.mesh.relay import RelayError, RelayRecord, RelayStream

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.core import MeshCore

__all__ = ["MAX_RELAYS_PER_PEER", "Relays"]

MAX_RELAYS_PER_PEER = 4


class Relays:
    """The relayed streams of one mesh, keyed by (other peer, channel number)."""

    def __init__(self, mesh: MeshCore) -> None:
        self.mesh = mesh
        self.streams: dict[tuple[PeerKey, int], RelayStream] = {}
        self.relayed_chunks = 0  # host: chunks forwarded so far
        self._next_chan = secrets.randbelow(2**31)

    def end_all(self) -> None:
        """The host link is gone and every relayed channel ran over it: end them all now."""
        for stream in list(self.streams.values()):
            stream.feed_eof()

    async def on_record(self, sender: PeerKey, rec: RelayRecord) -> None:
        """A relay record received on the link with `sender`."""
        mesh = self.mesh
        if mesh.is_host:
            await self._forward(sender, rec)
            return
        if not mesh.is_host_key(sender):
            raise RelayError(f"peer {sender.fingerprint()} sent relay traffic but is not the host")
        slot = (rec.peer, rec.chan)
        if rec.kind == "ro":
            source = rec.peer
            if mesh.roster is None or source == mesh.me or mesh.seat_of(source) <= 0:
                mesh.rejections.append("host opened a relay from a peer not at the table")
                return
            if slot in self.streams or (
                sum(1 for k in self.streams if k[0] == source) >= MAX_RELAYS_PER_PEER
            ):
                mesh.rejections.append(f"too many relays from {source.fingerprint()}")
                return
            stream = RelayStream(self._host_sender(), source, rec.chan, self._forget)
            self.streams[slot] = stream
            mesh.nursery.start_soon(self._accept, stream)
        elif rec.kind == "rd":
            relay = self.streams.get(slot)
            if relay is not None:
                relay.feed(rec.data)
        else:
            relay = self.streams.pop(slot, None)
            if relay is not None:
                relay.feed_eof()

    async def _forward(self, sender: PeerKey, rec: RelayRecord) -> None:
        """Host: pass a relay record on, naming the sender as its source."""
        mesh = self.mesh
        target = rec.peer
        if mesh.roster is None or mesh.seat_of(sender) <= 0 or mesh.seat_of(target) <= 0:
            raise RelayError(f"peer {sender.fingerprint()} asked to relay outside the table")
        if target == sender:
            raise RelayError(f"peer {sender.fingerprint()} asked to relay to itself")
        if rec.kind != "rc":
            mesh.punches.relayed(sender, target)
        if rec.kind == "rd":
            self.relayed_chunks += 1
            if mesh.config.relay_tap is not None:
                mesh.config.relay_tap(sender, target, rec.data)
        forwarded = RelayRecord(rec.kind, sender, rec.chan, rec.data).to_wire()
        run = mesh.live_run_or_none(target)
        if run is not None and rec.kind == "rd" and not run.outbox.relay_room(len(rec.data)):
            # The destination is not draining this channel: end the channel, not the link.
            mesh.rejections.append(
                f"relay {sender.fingerprint()} -> {target.fingerprint()} closed: "
                "the destination is not keeping up"
            )
            mesh.enqueue(run, RelayRecord("rc", sender, rec.chan).to_wire())
            run = None
        elif run is not None and not mesh.enqueue(run, forwarded, len(rec.data)):
            run = None
        if run is None and rec.kind != "rc":
            with contextlib.suppress(MeshError):
                await mesh.send_control(sender, RelayRecord("rc", target, rec.chan).to_wire())
        await trio.lowlevel.checkpoint()

    def _forget(self, stream: RelayStream) -> None:
        if self.streams.get((stream.peer, stream.chan)) is stream:
            del self.streams[(stream.peer, stream.chan)]

    def _host_sender(self) -> Callable[[list[Any]], Awaitable[None]]:
        mesh = self.mesh
        assert mesh.roster is not None
        host = mesh.roster.host.key

        async def send(record: list[Any]) -> None:
            if record[0] == "rd":
                await mesh.send_relayed_chunk(host, record, len(record[3]))
            else:
                await mesh.send_control(host, record)

        return send

    async def _accept(self, stream: RelayStream) -> None:
        mesh = self.mesh
        try:
            link = await handshake(
                stream,
                mesh.identity,
                room_secret=mesh.mesh_secret,
                table_id=mesh.table_id,
                initiator=False,
                expected_peer=stream.peer,
                timeout=mesh.config.handshake_timeout,
                address="relay",
            )
        except LinkError as exc:
            mesh.reject(f"relay from {stream.peer.fingerprint()}", exc)
            self.streams.pop((stream.peer, stream.chan), None)
            return
        live = mesh.live_run_or_none(stream.peer)
        if live is not None and not live.relayed and live.link.address in mesh.punched:
            # A relay dialed while the punch was opening: the punched link stays.
            self.streams.pop((stream.peer, stream.chan), None)
            await link.aclose()
            return
        try:
            await mesh.run_link(stream.peer, link, relayed=True)
        finally:
            self.streams.pop((stream.peer, stream.chan), None)

    async def dial(self, key: PeerKey) -> SecureLink | None:
        """A relayed link to `key` through the host, or None if none could be opened."""
        mesh = self.mesh
        assert mesh.roster is not None
        host = mesh.roster.host.key
        if not mesh.is_up(host):
            return None
        self._next_chan = (self._next_chan + 1) % 2**32
        chan = self._next_chan
        stream = RelayStream(self._host_sender(), key, chan, self._forget)
        self.streams[(key, chan)] = stream
        try:
            await mesh.send_control(host, RelayRecord("ro", key, chan).to_wire())
            return await handshake(
                stream,
                mesh.identity,
                room_secret=mesh.mesh_secret,
                table_id=mesh.table_id,
                initiator=True,
                expected_peer=key,
                timeout=mesh.config.handshake_timeout,
                address="relay",
            )
        except (LinkError, MeshError) as exc:
            mesh.reject(f"relay to {key.fingerprint()}", exc)
            self.streams.pop((key, chan), None)
            await stream.aclose()
            return None

    async def run(self, key: PeerKey, link: SecureLink) -> None:
        """Run a relayed link while retrying the direct one in the background.

        A direct link that opens takes over (the relayed one is closed; the resume exchange
        on the new link resends whatever the switch cut off) and is run until it dies.
        """
        mesh = self.mesh
        upgraded = False

        async def retry_direct() -> None:
            nonlocal upgraded
            delay = mesh.config.direct_retry_min
            while True:
                await trio.sleep(delay)
                delay = min(delay * 2, mesh.config.direct_retry_max)
                direct = await mesh.dialer.dial_direct(key)
                if direct is not None:
                    upgraded = True
                    await mesh.run_link(key, direct, relayed=False)
                    return

        async with trio.open_nursery() as nursery:
            nursery.start_soon(retry_direct)
            await mesh.run_link(key, link, relayed=True)
            if not upgraded:
                nursery.cancel_scope.cancel()
