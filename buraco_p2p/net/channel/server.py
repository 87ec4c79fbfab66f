"""The front door: accepting connections within bounds, before anyone is seated.

`LinkServer` runs the responder handshake on each accepted connection and hands the links to
a handler. Everything a peer without a seat can make us hold is bounded: handshake slots (per
IPv4 address and per IPv6 /64, the oldest stranger evicted when all are taken), links of
authenticated strangers, and what those links may send (`link.PreseatLimits`). Running out
of file descriptors is reported once, in one line, and retried.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import NoReturn

import trio

from buraco_p2p import codec
from buraco_p2p.net.channel.errors import LinkError
from buraco_p2p.net.channel.framing import DEFAULT_MAX_FRAME
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.link import (
    PRESEAT_LIMITS,
    PreseatLimits,
    SecureLink,
    handshake,
    peer_name,
    stream_address,
)

__all__ = ["LinkServer", "source_bucket", "source_of"]

LinkHandler = Callable[[SecureLink], Awaitable[None]]
ErrorReporter = Callable[[str | None, LinkError], None]
Warner = Callable[[str], None]
MemberCheck = Callable[[PeerKey], bool]
# Takes an accepted stream before any handshake (True: it is the taker's now).
Diverter = Callable[[trio.SocketStream], bool]

# accept() errors that mean "out of descriptors or buffers": wait and retry, one warning.
_RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_ACCEPT_RETRY = 0.1
# Out of descriptors again this soon after the last warning is the same trouble (accepts
# succeed now and then as handshakes end): it is not told twice.
_STARVED_WARN_EVERY = 60.0
_LOG = logging.getLogger("buraco_p2p.net")


def source_of(stream: trio.abc.Stream) -> str:
    """The bucket a connection's handshake slot is counted in.

    One IPv4 address, or one IPv6 /64 (a single host is usually given a whole /64, so
    counting exact IPv6 addresses would let one host hold every slot). IPv4-mapped IPv6
    addresses count as the IPv4 address they carry. A stream that is not a socket (a relayed
    channel) is its own "?" bucket.
    """
    name = peer_name(stream)
    if not (isinstance(name, tuple) and name):
        return "?"
    return source_bucket(str(name[0]))


def source_bucket(host: str) -> str:
    """`source_of` for an address given as text."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class _Slot:
    """One handshake in progress: where it comes from, and how to end it early."""

    def __init__(self, number: int, source: str) -> None:
        self.number = number
        self.source = source
        self.scope = trio.CancelScope()
        self.evicted = False


class LinkServer:
    """Accepts connections and runs the responder handshake on each, within bounds.

    Three pools, each bounded, so that nobody who lacks a seat can crowd out somebody who has
    one:

    * handshake slots: at most `max_handshakes` handshakes run at once and at most
      `max_handshakes_per_source` from one source (an IPv4 address or an IPv6 /64). A new
      connection over the source's bound is closed at once; one that finds every slot taken
      evicts the oldest handshake of the source holding the most slots, so a flood from a few
      sources delays a real peer by one handshake at most instead of locking it out. Each
      handshake also has `handshake_timeout` seconds.
    * unseated links: a completed handshake whose peer `is_member` does not know is a
      stranger (a joiner, or a flood with the invite). At most `max_unseated` of them are held
      at once; past that the new one is closed at once. Seated identities never count, so a
      seated player who restarts gets back in whatever strangers do.
    * message size: a stranger's link reads under `preseat` limits until the handler calls
      `SecureLink.seat()`, so a greeting costs at most a few KiB to decode.

    Besides `room_secret` it answers handshakes under `retired_secrets` (a replaced invite's):
    such a link has `retired_secret` set, and the handler seats nobody new on it.

    Completed links go to `handler`, which owns them until it returns (the link is closed
    after that); a `LinkError` escaping the handler ends only that link. Running out of file
    descriptors on accept is reported once through `on_warning` (one line) and retried.
    """

    def __init__(
        self,
        identity: Identity,
        handler: LinkHandler,
        *,
        room_secret: bytes,
        table_id: bytes,
        retired_secrets: tuple[bytes, ...] = (),
        handshake_timeout: float = 10.0,
        max_handshakes: int = 64,
        max_handshakes_per_source: int = 8,
        max_unseated: int = 32,
        max_frame: int = DEFAULT_MAX_FRAME,
        limits: codec.Limits = codec.DEFAULT_LIMITS,
        preseat: PreseatLimits | None = PRESEAT_LIMITS,
        is_member: MemberCheck | None = None,
        on_error: ErrorReporter | None = None,
        on_warning: Warner | None = None,
    ) -> None:
        self.identity = identity
        self.handler = handler
        self.room_secret = room_secret
        # Secrets of replaced invites: still answered (their hint names them), and the link
        # says so (`SecureLink.retired_secret`) for the handler to refuse a newcomer.
        self.retired_secrets = retired_secrets
        self.table_id = table_id
        self.handshake_timeout = handshake_timeout
        self.max_handshakes = max_handshakes
        self.max_handshakes_per_source = max_handshakes_per_source
        self.max_unseated = max_unseated
        self.max_frame = max_frame
        self.limits = limits
        self.preseat = preseat
        self.is_member = is_member
        self.on_error = on_error
        self.on_warning = on_warning
        # A host also answers short-code handshakes (shortcode.py); such links are never seated.
        self.accept_short = False
        # A joiner punching to a peer claims the connection that peer's SYN opened on the
        # listening port (punching.py): that stream is the punch, not a new link to greet.
        self.divert: Diverter | None = None
        self.peak_pending = 0
        self.refused = 0
        self.evicted = 0
        self.failed = 0
        self.completed = 0
        self.unseated = 0
        self.peak_unseated = 0
        self.refused_unseated = 0
        self._slots: dict[int, _Slot] = {}  # insertion order: oldest first
        self._next_slot = 0
        self._by_source: Counter[str] = Counter()
        self._starved = False
        self._starved_told: float | None = None  # when we last warned of it (trio's clock)
        self._told = False  # that warning awaits its "accepting again"

    @property
    def pending(self) -> int:
        """Handshakes in progress."""
        return len(self._slots)

    def pending_from(self, source: str) -> int:
        return self._by_source[source]

    async def serve(
        self,
        listeners: Sequence[trio.abc.Listener[trio.SocketStream]],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> NoReturn:
        """Serve `listeners` forever (cancel the surrounding scope to stop)."""
        async with trio.open_nursery() as nursery:
            for listener in listeners:
                nursery.start_soon(self._accept_loop, listener, nursery)
            task_status.started()
        raise AssertionError("unreachable")  # pragma: no cover

    async def _accept_loop(
        self, listener: trio.abc.Listener[trio.SocketStream], nursery: trio.Nursery
    ) -> None:
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except OSError as exc:
                    if exc.errno not in _RESOURCE_ERRNOS:
                        raise
                    if not self._starved:
                        self._starved = True
                        now = trio.current_time()
                        last = self._starved_told
                        if last is None or now - last >= _STARVED_WARN_EVERY:
                            self._starved_told, self._told = now, True
                            self._warn(
                                f"cannot accept connections: {exc.strerror or exc} "
                                "(out of file descriptors); still retrying"
                            )
                    await trio.sleep(_ACCEPT_RETRY)
                    continue
                if self._starved:
                    self._starved = False
                    if self._told:
                        self._told = False
                        self._warn("accepting connections again")
                if self.divert is not None and self.divert(stream):
                    continue
                nursery.start_soon(self.handle_stream, stream)

    def _warn(self, text: str) -> None:
        if self.on_warning is not None:
            self.on_warning(text)
        else:
            _LOG.warning("%s", text)

    def _take_slot(self, source: str) -> _Slot | None:
        """A handshake slot for `source`, evicting the oldest stranger if all are taken."""
        if self._by_source[source] >= self.max_handshakes_per_source:
            return None
        if len(self._slots) >= self.max_handshakes:
            busiest = max(self._by_source.values())
            for victim in self._slots.values():
                if self._by_source[victim.source] == busiest:
                    self._release(victim)
                    victim.evicted = True
                    victim.scope.cancel()
                    self.evicted += 1
                    break
        slot = _Slot(self._next_slot, source)
        self._slots[slot.number] = slot
        self._next_slot += 1
        self._by_source[source] += 1
        self.peak_pending = max(self.peak_pending, len(self._slots))
        return slot

    def _release(self, slot: _Slot) -> None:
        if self._slots.pop(slot.number, None) is slot:
            self._by_source[slot.source] -= 1
            if not self._by_source[slot.source]:
                del self._by_source[slot.source]

    async def handle_stream(self, stream: trio.abc.Stream) -> None:
        """Handshake on one accepted (or relayed) stream, then hand the link to the handler."""
        address = stream_address(stream)
        slot = self._take_slot(source_of(stream))
        if slot is None:
            self.refused += 1
            await trio.aclose_forcefully(stream)
            return
        link: SecureLink | None = None
        try:
            with slot.scope:
                link = await handshake(
                    stream,
                    self.identity,
                    room_secret=self.room_secret,
                    retired_secrets=self.retired_secrets,
                    table_id=self.table_id,
                    initiator=False,
                    timeout=self.handshake_timeout,
                    max_frame=self.max_frame,
                    limits=self.limits,
                    address=address,
                    preseat=self.preseat,
                    accept_short=self.accept_short,
                )
        except LinkError as exc:
            self.failed += 1
            if self.on_error is not None:
                self.on_error(address, exc)
            return
        finally:
            self._release(slot)
        if link is None:  # evicted: the handshake was cancelled and its stream closed
            await trio.aclose_forcefully(stream)
            return
        self.completed += 1
        if not link.seated:
            if not link.short and self.is_member is not None and self.is_member(link.peer):
                link.seat()
            elif self.unseated >= self.max_unseated:
                self.refused_unseated += 1
                await link.aclose()
                return
            else:
                self._count_unseated(link)
        try:
            await self.handler(link)
        except LinkError as exc:
            if self.on_error is not None:
                self.on_error(address, exc)
        finally:
            if not link.seated:
                link.seat()  # gives the stranger's place back
            await link.aclose()

    def _count_unseated(self, link: SecureLink) -> None:
        self.unseated += 1
        self.peak_unseated = max(self.peak_unseated, self.unseated)

        def seated() -> None:
            self.unseated -= 1

        link.call_when_seated(seated)
