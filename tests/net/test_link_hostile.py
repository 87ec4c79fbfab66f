"""Hostile peers against a running LinkServer on loopback.

Every attack must end only the attacker's own connection with a typed error naming it, while
an honest link opened beforehand keeps working and new honest peers still get in.
"""

from __future__ import annotations

import os
import struct
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest
import trio

from buraco_p2p.net import (
    DecodeError,
    DecryptError,
    FrameTooLarge,
    HandshakeError,
    HandshakeTimeout,
    Identity,
    LinkClosed,
    LinkError,
    LinkServer,
    PeerMismatch,
    SecureLink,
    TruncatedFrame,
    connect,
    handshake,
)
from buraco_p2p.net.channel.framing import KIND_CLOSE, KIND_DATA, FrameReader
from buraco_p2p.net.channel.handshake import InitiatorHandshake

ROOM = os.urandom(16)
TABLE = b"hostile-table"
WAIT = 5.0


class RecordingStream(trio.abc.Stream):
    """Wraps a socket stream: records every `send_all` and can hold frames back."""

    def __init__(self, inner: trio.SocketStream) -> None:
        self.inner = inner
        self.sent: list[bytes] = []
        self.hold = False

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.sent.append(bytes(data))
        if not self.hold:
            await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self.inner.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Server:
    port: int
    host: Identity
    server: LinkServer
    link_errors: list[LinkError] = field(default_factory=list)
    handshake_errors: list[LinkError] = field(default_factory=list)

    async def wait_for(self, errors: Callable[[], list[LinkError]], count: int = 1) -> LinkError:
        with trio.fail_after(WAIT):
            while len(errors()) < count:
                await trio.sleep(0.005)
        return errors()[count - 1]

    async def link_error(self) -> LinkError:
        return await self.wait_for(lambda: self.link_errors)

    async def handshake_error(self, count: int = 1) -> LinkError:
        return await self.wait_for(lambda: self.handshake_errors, count)

    async def honest(self, nickname: str = "honest", local: str | None = None) -> SecureLink:
        me = Identity.generate(nickname)
        if local is None:
            return await connect(
                "127.0.0.1",
                self.port,
                me,
                room_secret=ROOM,
                table_id=TABLE,
                expected_peer=self.host.public,
                timeout=WAIT,
            )
        stream = await trio.open_tcp_stream("127.0.0.1", self.port, local_address=local)
        return await handshake(
            stream,
            me,
            room_secret=ROOM,
            table_id=TABLE,
            initiator=True,
            expected_peer=self.host.public,
            timeout=WAIT,
        )

    async def attacker(self, nickname: str = "mallory") -> tuple[SecureLink, RecordingStream]:
        """A peer that knows the room secret, with its raw stream under our control."""
        raw = RecordingStream(await trio.open_tcp_stream("127.0.0.1", self.port))
        link = await handshake(
            raw, Identity.generate(nickname), room_secret=ROOM, table_id=TABLE, initiator=True
        )
        raw.sent.clear()
        return link, raw

    async def raw(self) -> trio.SocketStream:
        return await trio.open_tcp_stream("127.0.0.1", self.port)


async def echo_ok(link: SecureLink, tag: object) -> None:
    await link.send(tag)
    with trio.fail_after(WAIT):
        assert await link.receive() == ["echo", tag]


@asynccontextmanager
async def running_server(
    *,
    handshake_timeout: float = WAIT,
    max_handshakes: int = 64,
    max_handshakes_per_source: int = 8,
) -> AsyncIterator[tuple[Server, SecureLink]]:
    """A LinkServer echoing every message, plus an honest bystander link already open."""
    host = Identity.generate("host")
    state: list[Server] = []

    async def echo(link: SecureLink) -> None:
        link.seat()  # these attacks come from a seated peer: full-size limits
        try:
            async for message in link:
                await link.send(["echo", message])
        except LinkError as exc:
            state[0].link_errors.append(exc)

    def on_error(address: str | None, exc: LinkError) -> None:
        state[0].handshake_errors.append(exc)

    server = LinkServer(
        host,
        echo,
        room_secret=ROOM,
        table_id=TABLE,
        on_error=on_error,
        handshake_timeout=handshake_timeout,
        max_handshakes=max_handshakes,
        max_handshakes_per_source=max_handshakes_per_source,
    )
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1", backlog=512)
    state.append(Server(listeners[0].socket.getsockname()[1], host, server))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, listeners)
        bystander = await state[0].honest("bystander")
        await echo_ok(bystander, "before")
        yield state[0], bystander
        # The attack hurt no one else: the old link works and a new peer gets in.
        await echo_ok(bystander, "after")
        newcomer = await state[0].honest("newcomer")
        await echo_ok(newcomer, "newcomer")
        await newcomer.aclose()
        await bystander.aclose()
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("seed", range(4))
async def test_random_bytes_instead_of_a_handshake(seed: int) -> None:
    async with running_server() as (srv, _):
        stream = await srv.raw()
        await stream.send_all(os.urandom(3000))
        error = await srv.handshake_error()
        assert isinstance(error, HandshakeError)
        assert "127.0.0.1:" in str(error)
        await stream.aclose()


async def test_random_bytes_inside_an_established_link() -> None:
    async with running_server() as (srv, _):
        link, raw = await srv.attacker()
        await raw.inner.send_all(struct.pack(">I", 200) + os.urandom(200))
        error = await srv.link_error()
        assert isinstance(error, DecryptError)
        assert link.peer == srv.host.public
        assert srv.server.identity.public.fingerprint() not in str(error)
        assert "mallory" in str(error)


async def test_oversized_frame_refused_from_its_header_alone() -> None:
    async with running_server() as (srv, _):
        stream = await srv.raw()
        await stream.send_all(struct.pack(">I", 2**31) + b"\x01\x01")  # no body ever follows
        error = await srv.handshake_error()
        assert "limit" in str(error)
        link, raw = await srv.attacker()
        await raw.inner.send_all(struct.pack(">I", 64 << 20) + b"\x01\x11")
        frame_error = await srv.link_error()
        assert isinstance(frame_error, FrameTooLarge)
        assert link.peer_nickname == "host" and "mallory" in str(frame_error)
        await stream.aclose()


async def test_wrong_room_secret_is_refused_on_both_sides() -> None:
    async with running_server() as (srv, _):
        with pytest.raises(HandshakeError, match="room secret"):
            await connect(
                "127.0.0.1",
                srv.port,
                Identity.generate("outsider"),
                room_secret=os.urandom(16),
                table_id=TABLE,
            )
        assert isinstance(await srv.handshake_error(), HandshakeError)
        with pytest.raises(HandshakeError):
            await connect(
                "127.0.0.1",
                srv.port,
                Identity.generate("outsider"),
                room_secret=ROOM,
                table_id=b"another table",
            )
        await srv.handshake_error(2)
        assert srv.server.completed == 1  # only the bystander


async def test_identity_that_does_not_match_the_expected_peer() -> None:
    async with running_server() as (srv, _):
        somebody_else = Identity.generate("host-lookalike").public
        with pytest.raises(PeerMismatch, match=somebody_else.fingerprint()):
            await connect(
                "127.0.0.1",
                srv.port,
                Identity.generate("joiner"),
                room_secret=ROOM,
                table_id=TABLE,
                expected_peer=somebody_else,
            )
        await srv.handshake_error()


async def test_responder_refuses_an_unexpected_initiator() -> None:
    bob = Identity.generate("bob")
    expected = Identity.generate("alice")
    impostor = Identity.generate("alice")  # same nickname, different key
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    errors: list[BaseException] = []
    async with trio.open_nursery() as nursery:

        async def accept() -> None:
            stream = await listeners[0].accept()
            try:
                await handshake(
                    stream,
                    bob,
                    room_secret=ROOM,
                    table_id=TABLE,
                    initiator=False,
                    expected_peer=expected.public,
                )
            except PeerMismatch as exc:
                errors.append(exc)

        nursery.start_soon(accept)
        with pytest.raises(HandshakeError, match="refused"):
            await connect("127.0.0.1", port, impostor, room_secret=ROOM, table_id=TABLE)
    assert len(errors) == 1
    assert impostor.public.fingerprint() in str(errors[0])
    assert expected.public.fingerprint() in str(errors[0])
    await listeners[0].aclose()


async def test_replayed_frame() -> None:
    async with running_server() as (srv, _):
        link, raw = await srv.attacker()
        await echo_ok(link, "pay 10")
        (frame,) = raw.sent
        await raw.inner.send_all(frame)  # the same sealed frame again
        error = await srv.link_error()
        assert isinstance(error, DecryptError) and "replayed" in str(error)


async def test_reordered_frames() -> None:
    async with running_server() as (srv, _):
        link, raw = await srv.attacker()
        raw.hold = True
        await link.send("first")
        await link.send("second")
        first, second = raw.sent
        await raw.inner.send_all(second + first)
        error = await srv.link_error()
        assert isinstance(error, DecryptError) and "#0" in str(error)


async def test_dropped_frame() -> None:
    async with running_server() as (srv, _):
        link, raw = await srv.attacker()
        raw.hold = True
        await link.send("dropped")
        await link.send("kept")
        await raw.inner.send_all(raw.sent[1])
        assert isinstance(await srv.link_error(), DecryptError)


async def test_truncated_frame() -> None:
    async with running_server() as (srv, _):
        link, raw = await srv.attacker()
        raw.hold = True
        await link.send({"a": "message that will be cut"})
        await raw.inner.send_all(raw.sent[0][:-7])
        await raw.inner.send_eof()
        error = await srv.link_error()
        assert isinstance(error, TruncatedFrame) and "mallory" in str(error)


@pytest.mark.parametrize("position", [4, 5, 6, 20, -1])
async def test_flipped_bit(position: int) -> None:
    async with running_server() as (srv, _):
        link, raw = await srv.attacker()
        raw.hold = True
        await link.send("a message of some length")
        frame = bytearray(raw.sent[0])
        frame[position] ^= 0x10
        await raw.inner.send_all(bytes(frame))
        assert isinstance(await srv.link_error(), DecryptError)


async def test_flipped_length_bit() -> None:
    async with running_server() as (srv, _):
        link, raw = await srv.attacker()
        raw.hold = True
        await link.send("x" * 100)
        frame = bytearray(raw.sent[0])
        frame[3] ^= 0x01  # one byte shorter or longer than the real frame
        await raw.inner.send_all(bytes(frame) + b"\x00")
        await raw.inner.send_eof()
        assert isinstance(await srv.link_error(), DecryptError)


async def test_handshake_that_stops_halfway_times_out_on_the_server() -> None:
    async with running_server(handshake_timeout=0.3) as (srv, _):
        stream = await srv.raw()
        state = InitiatorHandshake(Identity.generate("staller"), room_secret=ROOM, table_id=TABLE)
        await stream.send_all(state.start())  # message 1 only; never message 3
        error = await srv.handshake_error()
        assert isinstance(error, HandshakeTimeout)
        assert "0.3" in str(error) and "127.0.0.1:" in str(error)
        await stream.aclose()


async def test_silent_connection_times_out_on_the_server() -> None:
    async with running_server(handshake_timeout=0.3) as (srv, _):
        stream = await srv.raw()
        assert isinstance(await srv.handshake_error(), HandshakeTimeout)
        with trio.fail_after(WAIT):
            assert await stream.receive_some() == b""  # the server hung up
        await stream.aclose()


async def test_server_that_stops_halfway_times_out_on_the_client() -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:

        async def mute_server() -> None:
            stream = await listeners[0].accept()
            reader = FrameReader()
            while reader.next_frame() is None:
                reader.feed(await stream.receive_some())
            await trio.sleep_forever()

        nursery.start_soon(mute_server)
        with pytest.raises(HandshakeTimeout, match=f"127.0.0.1:{port}"):
            await connect(
                "127.0.0.1",
                port,
                Identity.generate("a"),
                room_secret=ROOM,
                table_id=TABLE,
                timeout=0.3,
            )
        nursery.cancel_scope.cancel()
    await listeners[0].aclose()


@pytest.mark.parametrize(
    "bomb",
    [
        b"\xdd\xff\xff\xff\xff",
        b"\xdf\xff\xff\xff\xff",
        b"\xdb\x7f\xff\xff\xff",
        b"\xc6\x7f\xff\xff\xff",
        b"\x91" * 50_000 + b"\xc0",
        b"\x81\xa1k" * 20_000 + b"\xc0",
        b"\xd6\xff\x00\x00\x00\x00",
        b"\xcb\x00\x00\x00\x00\x00\x00\x00\x00",
    ],
    ids=["array", "map", "str", "bin", "deep-array", "deep-map", "ext", "float"],
)
async def test_msgpack_bomb_inside_a_valid_frame(bomb: bytes) -> None:
    async with running_server() as (srv, _):
        link, _raw = await srv.attacker()
        await link._send_frame(KIND_DATA, bomb)
        error = await srv.link_error()
        assert isinstance(error, DecodeError) and "mallory" in str(error)


async def test_authenticated_frame_of_unknown_kind() -> None:
    async with running_server() as (srv, _):
        link, _raw = await srv.attacker()
        await link._send_frame(0x7E, b"")
        error = await srv.link_error()
        assert "unexpected frame kind" in str(error)


async def test_close_frame_ends_only_that_link_quietly() -> None:
    async with running_server() as (srv, _):
        link, _raw = await srv.attacker()
        await link._send_frame(KIND_CLOSE, b"")
        with trio.fail_after(WAIT), pytest.raises(LinkClosed):
            await link.receive()  # the server's handler ended and hung up
        assert srv.link_errors == []


async def test_connection_flood_does_not_starve_honest_peers() -> None:
    async with running_server(
        max_handshakes=16, max_handshakes_per_source=4, handshake_timeout=WAIT
    ) as (srv, _):
        flood: list[trio.SocketStream] = []
        for i in range(150):
            stream = await srv.raw()
            if i % 3 == 0:
                await stream.send_all(os.urandom(64))
            flood.append(stream)
        # The flood is still open (idle ones hold their slots) when honest peers arrive from
        # other hosts of the loopback network.
        honest = [await srv.honest(f"h{n}", local=f"127.0.0.{n + 2}") for n in range(3)]
        for n, link in enumerate(honest):
            await echo_ok(link, n)
        assert srv.server.peak_pending <= 4 + 3
        assert srv.server.refused >= 100
        for stream in flood:
            await stream.aclose()
        for link in honest:
            await link.aclose()
        # Once the flood is gone, the flooding host itself is served again.
        with trio.fail_after(WAIT):
            while srv.server.pending:
                await trio.sleep(0.005)
        again = await srv.honest("same-host")
        await echo_ok(again, "again")
        await again.aclose()
