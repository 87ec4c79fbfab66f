"""Secure links over trio streams: the I/O half of the handshake and of framing.

`handshake()` runs over any `trio.abc.Stream`: a TCP connection, or a stream relayed through
the host, which then carries only ciphertext it can neither read nor forge. `SecureLink` is the
result: a message pipe (msgpack values in, msgpack values out) that closes itself, with a typed
error naming the peer, on the first frame that is forged, replayed, reordered, truncated,
oversized or undecodable. A link accepted from a stranger starts under `PreseatLimits`
until `SecureLink.seat()`; `server.LinkServer` is what accepts them.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import trio

from buraco_p2p import codec
from buraco_p2p.net.channel.errors import (
    DecodeError,
    FrameTooLarge,
    HandshakeError,
    HandshakeTimeout,
    LinkClosed,
    LinkError,
    NetError,
    TruncatedFrame,
    VersionMismatch,
)
from buraco_p2p.net.channel.framing import (
    DEFAULT_MAX_FRAME,
    HANDSHAKE_MAX_FRAME,
    KIND_CLOSE,
    KIND_DATA,
    KIND_READY,
    TAG_LEN,
    Frame,
    FrameReader,
    ReceiveCipher,
    SendCipher,
)
from buraco_p2p.net.channel.handshake import (
    HandshakeResult,
    InitiatorHandshake,
    ResponderHandshake,
    version_alert,
)
from buraco_p2p.net.channel.identity import Identity, PeerKey

__all__ = [
    "PRESEAT_LIMITS",
    "ConnectError",
    "PreseatLimits",
    "SecureLink",
    "connect",
    "handshake",
]

_READ_SIZE = 65536
_CLOSE_GRACE = 1.0

# What a peer that is not (yet) seated may send: its greeting and nothing bigger. A join
# greeting with 16 IPv6 addresses is under 1 KiB; the bounds leave room for it and nothing
# more, so a stranger can make us decode at most ~2,000 tiny objects (about a millisecond).
PRESEAT_MAX_BYTES = 2048
PRESEAT_MAX_FRAME = PRESEAT_MAX_BYTES + TAG_LEN + 2


_PRESEAT_CODEC_LIMITS = codec.Limits(
    max_bytes=PRESEAT_MAX_BYTES,
    max_str_len=256,
    max_bin_len=256,
    max_array_len=16,
    max_map_len=4,
    max_depth=6,
)


@dataclass(frozen=True)
class PreseatLimits:
    """Receive limits on a link until its peer is seated (`SecureLink.seat()`)."""

    max_frame: int = PRESEAT_MAX_FRAME
    limits: codec.Limits = _PRESEAT_CODEC_LIMITS


PRESEAT_LIMITS = PreseatLimits()


class ConnectError(LinkError):
    """No TCP connection could be opened to the peer's address."""


def peer_name(stream: trio.abc.Stream) -> object | None:
    """The socket's peer name, when the stream is a connected socket."""
    socket = getattr(stream, "socket", None)
    if socket is None:
        return None
    try:
        name: object = socket.getpeername()
    except OSError:
        return None
    return name


def stream_address(stream: trio.abc.Stream) -> str | None:
    """The remote end as "host:port", for error messages, when the stream is a socket."""
    name = peer_name(stream)
    if name is None:
        return None
    if isinstance(name, tuple) and len(name) >= 2:
        host, port = name[0], name[1]
        return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"
    return str(name)


def _peer_label(result: HandshakeResult, address: str | None) -> str:
    where = f" at {address}" if address else ""
    return f"peer {result.peer.fingerprint()} ({result.peer_nickname!r}{where})"


def _relabel(exc: NetError, label: str) -> NetError:
    """The same error type, with the peer named in front of the message."""
    if isinstance(exc, LinkClosed):
        return LinkClosed(f"{label}: {exc}", graceful=exc.graceful)
    return type(exc)(f"{label}: {exc}")


class _FrameStream:
    """A stream plus a FrameReader: reads whole frames."""

    def __init__(self, stream: trio.abc.Stream, max_frame: int, address: str | None) -> None:
        self.stream = stream
        self.address = address
        self.reader = FrameReader(max_frame)

    async def read_frame(self) -> Frame | None:
        """The next frame, None at EOF between frames; `TruncatedFrame` at EOF inside one."""
        while True:
            frame = self.reader.next_frame()
            if frame is not None:
                return frame
            data = await self.stream.receive_some(max(_READ_SIZE, self.reader.wanted()))
            if not data:
                if self.reader.buffered:
                    raise TruncatedFrame(
                        f"connection ended inside a frame ({self.reader.buffered} bytes buffered)"
                    )
                return None
            self.reader.feed(data)


class SecureLink:
    """One authenticated, encrypted, framed link to one peer.

    `send` may be called from several tasks (frames are serialised); `receive` from one at a
    time. Any error while receiving closes the link for good: there is no resynchronising
    after a bad frame, the peer has to reconnect.
    """

    def __init__(
        self,
        frames: _FrameStream,
        result: HandshakeResult,
        send_cipher: SendCipher,
        receive_cipher: ReceiveCipher,
        *,
        address: str | None,
        limits: codec.Limits,
        preseat: PreseatLimits | None = None,
    ) -> None:
        self._frames = frames
        self._stream = frames.stream
        self._send_cipher = send_cipher
        self._receive_cipher = receive_cipher
        self._send_lock = trio.Lock()
        self._receiving = False
        self._limits = limits  # on what we receive
        self._send_limits = limits
        # Until `seat()`, a link accepted from a stranger reads under the pre-seat limits.
        self._seated_limits: tuple[int, codec.Limits] | None = None
        self._on_seat: Callable[[], None] | None = None
        if preseat is not None:
            self._seated_limits = (frames.reader.max_frame, limits)
            frames.reader.max_frame = preseat.max_frame
            self._limits = preseat.limits
        self._closed = False
        self._error: LinkError | None = None
        self.peer: PeerKey = result.peer
        self.peer_nickname: str = result.peer_nickname
        self.session_hash: bytes = result.session_hash
        # We accepted it under a retired room secret (a replaced invite): seated peers only.
        self.retired_secret: bool = result.retired_secret
        # Made from a short code (shortcode.py): good only for fetching the invite.
        self.short: bool = result.short
        self.address = address
        self.label = _peer_label(result, address)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def seated(self) -> bool:
        """False while the pre-seat limits apply (a link accepted from a stranger)."""
        return self._seated_limits is None

    def seat(self) -> None:
        """The peer is seated (or known to be): lift the pre-seat limits on what it sends.

        Before this, frames and messages are held to `PreseatLimits`, so a stranger who knows
        the invite can make us decode at most a few KiB per message; after it, the link
        carries the game's full-size messages. Idempotent.
        """
        if self._seated_limits is None:
            return
        max_frame, limits = self._seated_limits
        self._seated_limits = None
        self._frames.reader.max_frame = max_frame
        self._limits = limits
        callback, self._on_seat = self._on_seat, None
        if callback is not None:
            callback()

    def call_when_seated(self, callback: Callable[[], None]) -> None:
        """Have `seat()` call `callback` once, when it lifts the pre-seat limits (the front
        door counts its strangers this way); replaces a callback set before."""
        self._on_seat = callback

    def _fail(self, exc: LinkError) -> LinkError:
        error = exc if self.label in str(exc) else _relabel(exc, self.label)
        assert isinstance(error, LinkError)
        if self._error is None:
            self._error = error
        self._closed = True
        return error

    async def _send_frame(self, kind: int, payload: bytes) -> None:
        async with self._send_lock:
            if self._closed:
                raise self._error or LinkClosed(f"{self.label}: link is closed")
            try:
                frame = self._send_cipher.seal(kind, payload)
            except FrameTooLarge as exc:
                raise _relabel(exc, self.label) from None
            except LinkClosed as exc:
                error = self._fail(exc)
                await trio.aclose_forcefully(self._stream)
                raise error from None
            try:
                await self._stream.send_all(frame)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                error = self._fail(LinkClosed(f"connection lost while sending: {exc!r}"))
                await trio.aclose_forcefully(self._stream)
                raise error from exc
            except BaseException:
                # Cancelled (or worse) part-way through a frame: the byte stream is now out of
                # step with the peer's reader, so the link cannot be used any more.
                self._fail(LinkClosed("a send was interrupted part-way through a frame"))
                await trio.aclose_forcefully(self._stream)
                raise

    async def send(self, message: Any) -> None:
        """Send one msgpack-encodable value (`codec.EncodeError` if it is not one)."""
        payload = codec.pack(message, limits=self._send_limits)
        await self._send_frame(KIND_DATA, payload)

    async def receive(self) -> Any:
        """The next message. `LinkClosed` once the link is over; other `LinkError`s on attack."""
        if self._receiving:
            raise trio.BusyResourceError("another task is already receiving on this link")
        if self._error is not None:
            raise self._error
        if self._closed:
            raise LinkClosed(f"{self.label}: link is closed")
        self._receiving = True
        try:
            return await self._receive()
        except LinkError as exc:
            error = self._fail(exc)
            await trio.aclose_forcefully(self._stream)
            raise error from exc
        finally:
            self._receiving = False

    async def _receive(self) -> Any:
        try:
            frame = await self._frames.read_frame()
        except trio.ClosedResourceError as exc:
            raise LinkClosed("link closed locally") from exc
        except trio.BrokenResourceError as exc:
            raise LinkClosed(f"connection lost: {exc!r}") from exc
        if frame is None:
            raise LinkClosed("connection ended without a close frame", graceful=False)
        payload = self._receive_cipher.open(frame)
        if frame.kind == KIND_DATA:
            try:
                return codec.unpack(payload, limits=self._limits)
            except codec.DecodeError as exc:
                raise DecodeError(f"undecodable message: {exc}") from exc
        if frame.kind == KIND_CLOSE:
            raise LinkClosed("peer closed the link", graceful=True)
        raise LinkError(f"unexpected frame kind {frame.kind:#04x} after the handshake")

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Any]:
        """Messages until the link closes; errors other than `LinkClosed` propagate."""
        while True:
            try:
                message = await self.receive()
            except LinkClosed:
                return
            yield message

    def abort_at_close(self) -> None:
        """Have `aclose` reset the connection (no FIN_WAIT kept by the kernel): a peer that
        went silent will not answer a FIN, and the same address pair must be free at once
        for a new connection from our listening port (a punch, docs/protocol.md 2.15). A
        stream that is not one TCP connection of ours (one relayed through a TURN server,
        whose `socket` only names the peer) keeps its ordinary close."""
        sock = getattr(self._stream, "socket", None)
        if isinstance(sock, trio.socket.SocketType):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    async def aclose(self) -> None:
        """Say goodbye with an authenticated close frame (if we can, briefly), then close."""
        if self._closed:
            await trio.aclose_forcefully(self._stream)
            return
        with trio.move_on_after(_CLOSE_GRACE) as scope:
            scope.shield = True
            with contextlib.suppress(LinkError):
                await self._send_frame(KIND_CLOSE, b"")
        self._closed = True
        if self._error is None:
            self._error = LinkClosed(f"{self.label}: link closed locally")
        await trio.aclose_forcefully(self._stream)

    async def __aenter__(self) -> SecureLink:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<SecureLink {self.label}{' closed' if self._closed else ''}>"


async def _run_initiator(
    frames: _FrameStream, state: InitiatorHandshake, label: list[str]
) -> tuple[HandshakeResult, ReceiveCipher]:
    await frames.stream.send_all(state.start())
    frame = await frames.read_frame()
    if frame is None:
        raise HandshakeError(
            "peer closed the connection before answering the handshake "
            "(a wrong room secret for that table: a wrong invite, or another table)"
        )
    finish, result = state.receive_response(frame)
    label[0] = _peer_label(result, frames.address)
    await frames.stream.send_all(finish)
    frame = await frames.read_frame()
    if frame is None:
        raise HandshakeError(
            "peer closed the connection after our identity was sent "
            "(it refused us: not the peer it expected, or not admitted)"
        )
    receive_cipher = ReceiveCipher(result.receive_key)
    try:
        payload = receive_cipher.open(frame)
    except LinkError as exc:
        raise HandshakeError(f"bad READY frame: {exc}") from exc
    if frame.kind != KIND_READY or payload:
        raise HandshakeError(f"expected READY, got frame kind {frame.kind:#04x}")
    return result, receive_cipher


async def _run_responder(
    frames: _FrameStream, state: ResponderHandshake, label: list[str]
) -> tuple[HandshakeResult, SendCipher]:
    frame = await frames.read_frame()
    if frame is None:
        raise HandshakeError("peer closed the connection without starting the handshake")
    try:
        response = state.receive_init(frame)
    except VersionMismatch:
        with trio.move_on_after(_CLOSE_GRACE):
            await frames.stream.send_all(version_alert())
        raise
    await frames.stream.send_all(response)
    frame = await frames.read_frame()
    if frame is None:
        raise HandshakeError(
            "peer closed the connection before finishing the handshake "
            "(wrong room secret, or it refused our identity)"
        )
    result = state.receive_finish(frame)
    label[0] = _peer_label(result, frames.address)
    send_cipher = SendCipher(result.send_key)
    await frames.stream.send_all(send_cipher.seal(KIND_READY, b""))
    return result, send_cipher


async def handshake(
    stream: trio.abc.Stream,
    identity: Identity,
    *,
    room_secret: bytes,
    table_id: bytes,
    initiator: bool,
    expected_peer: PeerKey | None = None,
    timeout: float = 10.0,
    max_frame: int = DEFAULT_MAX_FRAME,
    limits: codec.Limits = codec.DEFAULT_LIMITS,
    address: str | None = None,
    preseat: PreseatLimits | None = None,
    retired_secrets: Sequence[bytes] = (),
    short: bool = False,
    accept_short: bool = False,
) -> SecureLink:
    """Run the key exchange over `stream` and return the secure link.

    `short` (initiator): the short-code handshake, keyed by the room secret alone;
    `accept_short` (responder, a host): answer that one too (the link then says `short`).

    On any failure the stream is closed and a `HandshakeError` (or subclass) naming the peer is
    raised; `HandshakeTimeout` if the whole exchange takes longer than `timeout` seconds.
    With `preseat`, the link reads under those limits until `SecureLink.seat()`. A responder
    also answers under `retired_secrets`; `SecureLink.retired_secret` then says so.
    """
    address = address if address is not None else stream_address(stream)
    label = [f"peer ({address})" if address else "peer (unknown address)"]
    frames = _FrameStream(stream, HANDSHAKE_MAX_FRAME, address)
    try:
        with trio.fail_after(timeout):
            if initiator:
                i_state = InitiatorHandshake(
                    identity,
                    room_secret=room_secret,
                    table_id=table_id,
                    expected_peer=expected_peer,
                    short=short,
                )
                result, receive_cipher = await _run_initiator(frames, i_state, label)
                send_cipher = SendCipher(result.send_key, max_frame)
            else:
                r_state = ResponderHandshake(
                    identity,
                    room_secret=room_secret,
                    table_id=table_id,
                    expected_peer=expected_peer,
                    retired_secrets=retired_secrets,
                )
                r_state.accept_short = accept_short
                result, send_cipher = await _run_responder(frames, r_state, label)
                receive_cipher = ReceiveCipher(result.receive_key)
    except trio.TooSlowError:
        await trio.aclose_forcefully(stream)
        raise HandshakeTimeout(
            f"{label[0]}: handshake not completed within {timeout:g} s"
        ) from None
    except HandshakeError as exc:
        await trio.aclose_forcefully(stream)
        raise _relabel(exc, label[0]) from exc
    except LinkError as exc:  # FrameTooLarge, TruncatedFrame, ... during the handshake
        await trio.aclose_forcefully(stream)
        raise HandshakeError(f"{label[0]}: {exc}") from exc
    except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
        await trio.aclose_forcefully(stream)
        raise HandshakeError(f"{label[0]}: connection lost during the handshake") from exc
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    frames.reader.max_frame = max_frame
    send_cipher.max_frame = max_frame
    # The ciphers keep the counters the handshake used (READY is frame 0 from the responder).
    return SecureLink(
        frames,
        result,
        send_cipher,
        receive_cipher,
        address=address,
        limits=limits,
        preseat=preseat,
    )


async def connect(
    host: str,
    port: int,
    identity: Identity,
    *,
    room_secret: bytes,
    table_id: bytes,
    expected_peer: PeerKey | None = None,
    timeout: float = 10.0,
    max_frame: int = DEFAULT_MAX_FRAME,
    limits: codec.Limits = codec.DEFAULT_LIMITS,
    short: bool = False,
) -> SecureLink:
    """Open a TCP connection and run the handshake as initiator, all within `timeout`."""
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    deadline = trio.current_time() + timeout
    try:
        with trio.fail_after(timeout):
            stream = await trio.open_tcp_stream(host, port)
    except trio.TooSlowError:
        raise ConnectError(f"cannot connect to {address}: timed out") from None
    except OSError as exc:
        raise ConnectError(f"cannot connect to {address}: {exc.strerror or exc}") from exc
    return await handshake(
        stream,
        identity,
        room_secret=room_secret,
        table_id=table_id,
        initiator=True,
        expected_peer=expected_peer,
        timeout=max(0.0, deadline - trio.current_time()),
        max_frame=max_frame,
        limits=limits,
        address=address,
        short=short,
    )
