"""The life of each link to a seated peer, from its first record to its close.

A link, however it was opened (dialed, accepted, punched or relayed: `MeshCore.run_link`),
starts with a `Resume` exchange (`reliable.py`), after which missed messages are sent again
and the link goes live. From then on it has three tasks: its own sender, the only writer of
its socket, which drains the link's bounded queue (`outbox.py`) so `send` and `broadcast`
never wait for a socket; a heartbeat, which sends an ack at least every interval; and the
reader, which checks every record against the tags this link may carry (`PEER_TAGS` and the
like) before it is dispatched. A link that hears nothing for `heartbeat_timeout`, whose socket
accepts nothing for as long, or whose queue overflows is dropped and its peer reported down.

This is separate from the mesh proper because it is where every way a link can end comes
together: whatever one peer's input provokes, and a reset from the other side, ends that
link only and is remembered in `Mesh.rejections`; the mesh keeps the roster, the seats and
what the application sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from buraco_p2p import codec
from buraco_p2p.net.channel.errors import LinkClosed, LinkError, MeshError, NetError
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.channel.link import SecureLink
from buraco_p2p.net.channel.outbox import LinkRun, Outbox
from buraco_p2p.net.channel.reliable import (
    RELIABLE_TAGS,
    Ack,
    Data,
    Liveness,
    ReliableChannel,
    Resume,
    SequenceError,
    parse_record,
)
from buraco_p2p.net.mesh.events import PeerDown, PeerUp, StreamReset
from buraco_p2p.net.mesh.moved import MOVED, MOVED_TAGS
from buraco_p2p.net.mesh.peer import Peer
from buraco_p2p.net.mesh.punching import HOST_PUNCH_TAGS, JOINER_PUNCH_TAGS
from buraco_p2p.net.mesh.relay import RELAY_TAGS, parse_relay
from buraco_p2p.net.table.table import LEAVE, LEFT, Roster, TableError, check_roster, roster_message

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.core import MeshCore

__all__ = [
    "HOST_TO_JOINER_TAGS",
    "JOINER_TO_HOST_TAGS",
    "JOINER_TO_JOINER_TAGS",
    "PEER_TAGS",
    "PUNCH_TAGS",
    "SEND_QUEUE_HEADROOM",
    "Peer",
    "PeerLinks",
]

# The records a seated peer may send once its link is resumed (before that: only "r"),
# by who the two ends are; anything else ends the link.
PEER_TAGS = frozenset({"d", "a"})
JOINER_TO_HOST_TAGS = PEER_TAGS | RELAY_TAGS | JOINER_PUNCH_TAGS | {LEAVE}
HOST_TO_JOINER_TAGS = PEER_TAGS | RELAY_TAGS | HOST_PUNCH_TAGS | MOVED_TAGS | {"roster"}
# Between two joiners: the reliable stream, and the host's `moved` record passed on.
JOINER_TO_JOINER_TAGS = PEER_TAGS | MOVED_TAGS
PUNCH_TAGS = HOST_PUNCH_TAGS | JOINER_PUNCH_TAGS
# Records a link may have queued beyond a full retransmit buffer (acks, roster, relay).
SEND_QUEUE_HEADROOM = 1024


class PeerLinks:
    """The link life cycle of one mesh: owns each link from its resume record to its close."""

    def __init__(self, mesh: MeshCore) -> None:
        self.mesh = mesh

    def peer(self, key: PeerKey) -> Peer:
        """Our record of `key`, made on first use with the delivery state saved for it."""
        mesh = self.mesh
        p = mesh.records.get(key)
        if p is None:
            saved = mesh.saved_state.channels.get(key.raw) if mesh.saved_state else None
            channel = ReliableChannel(
                mesh.incarnation,
                f"peer {key.fingerprint()}",
                max_buffer=mesh.config.max_buffer,
                state=saved,
            )
            p = mesh.records[key] = Peer(key, channel)
        return p

    async def run(self, key: PeerKey, link: SecureLink, *, relayed: bool) -> None:
        """Own `link` until it dies; exactly one link per peer is live at a time."""
        mesh = self.mesh
        p = self.peer(key)
        limit = mesh.config.max_buffer + SEND_QUEUE_HEADROOM
        run = LinkRun(link, relayed, Outbox(limit, mesh.config.relay_queue_bytes),
                      path=mesh.path_of(link, relayed=relayed))  # fmt: skip
        old = p.run
        if old is not None and old.error is None and not old.done.is_set() and (
            old.path > run.path
        ):
            # A relay (the host's or a TURN server's) never takes over a working direct link,
            # nor one still resuming: it costs latency, and a TURN server would learn who
            # plays with whom. The peer does the same with its end of this link; a direct link
            # that died is dropped within a heartbeat timeout, and the next relayed link is
            # then taken.
            mesh.reject(link.label, MeshError(f"{link.label}: a relayed link does not replace "
                                              "a working direct one"))  # fmt: skip
            with trio.CancelScope(shield=True):
                await link.aclose()
            return
        while p.run is not None:  # the newest link wins; wait until the old one is gone
            old = p.run
            if old.replaced is None:
                to_direct = old.path < run.path
                old.replaced = "moved to a direct link" if to_direct else "replaced by a new link"
            old.scope.cancel()
            await old.done.wait()
        p.run = run
        reason = "link closed"
        try:
            with run.scope:
                await self._serve_link(p, run)
        except LinkClosed as exc:
            reason = str(exc)
        except (NetError, trio.TooSlowError) as exc:
            reason = str(exc) or type(exc).__name__
            mesh.reject(link.label, exc)
            link.abort_at_close()  # a silent peer answers no FIN: free the address pair now
        except Exception as exc:
            # Whatever one peer's input provokes ends that peer's link, never the mesh.
            reason = f"{link.label}: its input raised {type(exc).__name__}: {exc}"
            mesh.reject(link.label, MeshError(reason))
        finally:
            run.outbox.close()
            if run.error is not None:
                link.abort_at_close()
                reason = str(run.error)
                mesh.reject(link.label, run.error)
            elif run.replaced is not None:
                reason = run.replaced
            if p.link is link:
                p.link = None
            if p.run is run:
                p.run = None
            p.channel.link_lost()
            if not mesh.is_host and mesh.is_host_key(key):
                # Every relayed channel ran over this link: end them all now.
                mesh.relays.end_all()
            with trio.CancelScope(shield=True):
                await link.aclose()
            # A link taken over by a newer one is no change to show; the newer one reports.
            if run.up and run.replaced is None:
                mesh.moves.link_down(key)
            if run.replaced is None and p.shown is not None and p.run is None:
                p.shown = None
                mesh.emit(PeerDown(key, reason))
            run.done.set()

    async def _serve_link(self, p: Peer, run: LinkRun) -> None:
        mesh = self.mesh
        link = run.link
        name = link.label
        liveness = Liveness(
            trio.current_time(),
            interval=mesh.config.heartbeat_interval,
            timeout=mesh.config.heartbeat_timeout,
        )
        error: NetError | trio.TooSlowError | None = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._sender, run, liveness)
            try:
                self.enqueue(run, p.channel.make_resume().to_wire())
                with trio.fail_after(mesh.config.handshake_timeout):
                    first = await link.receive()
                record = parse_record(first, name)
                if not isinstance(record, Resume):
                    raise SequenceError(f"{name} did not start the link with a resume record")
                # No checkpoint from here until `p.link` is set: nothing can be sent between
                # the retransmissions and the link going live, so the order holds.
                resend, restarted = p.channel.on_resume(record)
                for r in resend:
                    self.enqueue(run, r.to_wire())
                p.link = link
                if mesh.is_host and mesh.roster is not None:
                    # Seats may have changed since this peer's welcome, while no link was up
                    # to tell it: every (re)established link starts from the current roster.
                    self.enqueue(run, roster_message(mesh.roster))
                    if mesh.roster.member(p.key) is None:
                        # its seat was freed while this link was starting: that roster
                        # tells it so, and then the link goes
                        nursery.start_soon(self.retire, run, f"{name} holds no seat here")
                run.up = True
                member = mesh.roster.member(p.key) if mesh.roster else None
                nickname = member.nickname if member is not None else link.peer_nickname
                up = PeerUp(p.key, nickname, run.relayed)
                if up != p.shown:
                    p.shown = up
                    mesh.emit(up)
                if restarted is not None:
                    mesh.emit(StreamReset(p.key))
                if mesh.is_host and not run.relayed:
                    mesh.punches.link_up(p.key, link.address)
                mesh.moves.link_up(p.key, run)
                liveness.on_receive(trio.current_time())
                nursery.start_soon(self._heartbeat, p, run)
                await self._read_loop(p, link, liveness)
            except (NetError, trio.TooSlowError) as exc:
                error = exc
            nursery.cancel_scope.cancel()
        if error is not None:
            raise error

    async def _sender(self, run: LinkRun, liveness: Liveness) -> None:
        """The only writer of `run.link`; a socket that takes nothing for the timeout is
        a stalled peer, and its link is dropped."""
        mesh = self.mesh
        link = run.link
        stall = mesh.config.heartbeat_timeout
        while True:
            record = await run.outbox.get()
            try:
                with trio.fail_after(stall):
                    await link.send(record)
                run.outbox.sent()
            except trio.TooSlowError:
                why = f"{link.label} stopped reading: a send was stuck for {stall:g} s"
                self.drop(run, MeshError(why))
                return
            except LinkError as exc:
                self.drop(run, exc)
                return
            liveness.on_send(trio.current_time())

    async def _heartbeat(self, p: Peer, run: LinkRun) -> None:
        """Acks double as heartbeats: one at least every interval, sooner when acks are due."""
        mesh = self.mesh
        next_at = trio.current_time() + mesh.config.heartbeat_interval
        while True:
            with trio.move_on_at(next_at):
                await p.ack_wake.wait()
            p.ack_wake = trio.Event()
            if p.link is not run.link:
                return
            if not self.enqueue(run, p.channel.make_ack().to_wire()):
                return
            next_at = trio.current_time() + mesh.config.heartbeat_interval

    def _allowed_tags(self, key: PeerKey) -> frozenset[str]:
        """The record tags `key` may send us on a resumed link, by who we are to each other."""
        mesh = self.mesh
        if mesh.is_host:
            return JOINER_TO_HOST_TAGS
        if mesh.is_host_key(key):
            return HOST_TO_JOINER_TAGS
        return JOINER_TO_JOINER_TAGS

    async def _read_loop(self, p: Peer, link: SecureLink, liveness: Liveness) -> None:
        """Every record is checked against the tags this link may carry before dispatch;
        anything else is a protocol error that ends this link only."""
        mesh = self.mesh
        name = link.label
        allowed = self._allowed_tags(p.key)
        while True:
            with trio.move_on_at(liveness.last_received + liveness.timeout):
                msg = await link.receive()
                liveness.on_receive(trio.current_time())
                tag = msg[0] if isinstance(msg, list) and msg and isinstance(msg[0], str) else None
                if tag is None:
                    raise MeshError(f"{name} sent a message that is not a tagged record")
                if tag not in allowed:
                    raise MeshError(
                        f"{name} sent a record this link does not carry: {tag[:20]!r}"
                    )
                if tag in RELIABLE_TAGS:
                    record = parse_record(msg, name)
                    if isinstance(record, Data):
                        self._on_data(p, record, name)
                    elif isinstance(record, Ack):
                        p.channel.on_ack(record.ack)
                    else:  # pragma: no cover - "r" is never in `allowed`
                        raise SequenceError(f"{name} sent a resume record mid-link")
                elif tag in RELAY_TAGS:
                    await mesh.relays.on_record(p.key, parse_relay(msg, name))
                elif tag in PUNCH_TAGS:
                    await mesh.punches.on_record(p.key, msg, name)
                elif tag == MOVED:
                    await mesh.moves.on_record(p.key, msg, name)
                elif tag == LEAVE:
                    if msg != [LEAVE]:
                        raise MeshError(f"{name} sent a malformed leave record")
                    mesh.seating.free(p.key, LEFT)
                else:
                    self._on_roster(msg, name)
                continue
            raise MeshError(
                f"{name} went silent: nothing heard for {liveness.timeout:g} s"
            )

    def _on_data(self, p: Peer, record: Data, name: str) -> None:
        mesh = self.mesh
        size = 0
        if record.seq == p.channel.recv_next:  # a new message (a gap fails in `on_data`)
            # Capped in bytes before it is taken in: a count alone would let 8192 messages
            # of a megabyte each sit in memory.
            size = len(codec.pack(record.payload))
            cap = mesh.config.max_unread_bytes
            if p.unread_bytes + size > cap:
                raise MeshError(
                    f"{name} sent more than {cap} bytes of messages we have not read yet"
                )
        fresh, payload = p.channel.on_data(record)
        if fresh:
            p.unread_bytes += size
            mesh.deliver(p.key, p.channel.peer_incarnation, payload, size)

    def _on_roster(self, msg: list[Any], name: str) -> None:
        mesh = self.mesh
        if len(msg) != 2:
            raise TableError(f"{name} sent a malformed roster message")
        roster = Roster.from_wire(msg[1], name)
        check_roster(roster, name, mesh.table_id)
        mesh.adopt_roster(roster, name)

    # -- a link's outgoing side, for the mesh and its other parts ------------------------

    async def retire(self, run: LinkRun, why: str) -> None:
        """Close a link whose peer lost its seat, once what we queued (the roster that
        says so) is written, or after a heartbeat interval at most."""
        with trio.move_on_after(self.mesh.config.heartbeat_interval):
            await run.outbox.drained()
        self.drop(run, MeshError(why))

    def live_run_or_none(self, key: PeerKey) -> LinkRun | None:
        try:
            return self.live_run(key)
        except MeshError:
            return None

    def live_run(self, key: PeerKey) -> LinkRun:
        p = self.mesh.records.get(key)
        run = p.run if p is not None else None
        if p is None or p.link is None or run is None or run.link is not p.link:
            raise MeshError(f"no link to {key.fingerprint()}")
        return run

    def enqueue(self, run: LinkRun, record: list[Any], relay_size: int = 0) -> bool:
        """Queue a record on `run`'s link; a full queue drops the link (it is not reading)."""
        if run.outbox.put(record, relay_size):
            return True
        if not run.outbox.closed and len(run.outbox) >= run.outbox.limit:
            self.drop(
                run,
                MeshError(
                    f"{run.link.label} is not reading: {len(run.outbox)} records are queued"
                ),
            )
        return False

    def drop(self, run: LinkRun, error: NetError) -> None:
        """End `run` from outside its reader, remembering why for the `PeerDown`."""
        if run.error is None:
            run.error = error
        run.outbox.close()
        run.scope.cancel()

    async def send_raw(self, key: PeerKey, message: list[Any]) -> None:
        """A control/relay record on the current link to `key` (not sequenced, not waiting)."""
        run = self.live_run(key)
        if not self.enqueue(run, message):
            raise MeshError(f"link to {key.fingerprint()} is closed or not reading")
        await trio.lowlevel.checkpoint()

    async def send_relayed_chunk(self, key: PeerKey, message: list[Any], size: int) -> None:
        """A chunk of one of our relayed streams: waits for room, never overflows the queue."""
        run = self.live_run(key)
        if not await run.outbox.put_paced(message, size):
            raise MeshError(f"link to {key.fingerprint()} closed")
