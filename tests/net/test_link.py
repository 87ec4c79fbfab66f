"""Secure links over real loopback sockets: handshake, ordered delivery, closing."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from buraco_p2p import codec
from buraco_p2p.net import (
    ConnectError,
    FrameTooLarge,
    HandshakeError,
    Identity,
    LinkClosed,
    LinkServer,
    PeerMismatch,
    SecureLink,
    TruncatedFrame,
    connect,
    handshake,
)

ROOM = os.urandom(16)
TABLE = b"test-table"


@asynccontextmanager
async def link_pair(
    alice: Identity | None = None, bob: Identity | None = None, **kwargs: Any
) -> AsyncIterator[tuple[SecureLink, SecureLink]]:
    """Two ends of one link over a real TCP connection on 127.0.0.1."""
    alice = alice or Identity.generate("alice")
    bob = bob or Identity.generate("bob")
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        accepted: list[SecureLink] = []

        async def accept() -> None:
            stream = await listeners[0].accept()
            accepted.append(
                await handshake(
                    stream, bob, room_secret=ROOM, table_id=TABLE, initiator=False, **kwargs
                )
            )

        nursery.start_soon(accept)
        client = await connect("127.0.0.1", port, alice, room_secret=ROOM, table_id=TABLE)
    await listeners[0].aclose()
    try:
        yield client, accepted[0]
    finally:
        await client.aclose()
        await accepted[0].aclose()


async def test_handshake_over_tcp_names_both_peers() -> None:
    alice, bob = Identity.generate("alice"), Identity.generate("bob")
    async with link_pair(alice, bob) as (a, b):
        assert a.peer == bob.public and a.peer_nickname == "bob"
        assert b.peer == alice.public and b.peer_nickname == "alice"
        assert a.session_hash == b.session_hash
        assert a.address is not None and a.address.startswith("127.0.0.1:")
        assert b.address is not None and b.address.startswith("127.0.0.1:")
        assert bob.public.fingerprint() in a.label


async def test_messages_round_trip_in_order_both_ways() -> None:
    messages = [{"seq": i, "body": os.urandom(i % 50), "text": f"msg {i} é"} for i in range(300)]
    async with link_pair() as (a, b):
        received_by_b: list[Any] = []
        received_by_a: list[Any] = []

        async def pump(src: SecureLink, dst: SecureLink, sink: list[Any]) -> None:
            async with trio.open_nursery() as nursery:

                async def sender() -> None:
                    for message in messages:
                        await src.send(message)

                nursery.start_soon(sender)
                for _ in messages:
                    sink.append(await dst.receive())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(pump, a, b, received_by_b)
            nursery.start_soon(pump, b, a, received_by_a)
        assert received_by_b == messages
        assert received_by_a == messages


async def test_concurrent_senders_each_message_arrives_intact_once() -> None:
    async with link_pair() as (a, b):
        async with trio.open_nursery() as nursery:
            for task in range(5):

                async def sender(task: int = task) -> None:
                    for i in range(40):
                        await a.send([task, i, bytes([task]) * 500])

                nursery.start_soon(sender)
            got = [await b.receive() for _ in range(200)]
        assert sorted((t, i) for t, i, _ in got) == [(t, i) for t in range(5) for i in range(40)]
        for task in range(5):
            sequence = [i for t, i, _ in got if t == task]
            assert sequence == list(range(40))  # each sender's own order is kept
        assert all(body == bytes([t]) * 500 for t, _, body in got)


async def test_large_message_and_local_size_limit() -> None:
    async with link_pair() as (a, b):
        big = {"blob": os.urandom(900_000)}
        async with trio.open_nursery() as nursery:
            nursery.start_soon(a.send, big)  # bigger than socket buffers: needs a reader
            assert await b.receive() == big
        with pytest.raises(codec.EncodeError):
            await a.send(os.urandom(2_000_000))
        with pytest.raises(codec.EncodeError):
            await a.send(1.5)
        await a.send("still fine")
        assert await b.receive() == "still fine"
    async with link_pair(max_frame=1000) as (a, b):
        # b refuses frames over 1000 bytes; b's own sends are limited the same way.
        with pytest.raises(FrameTooLarge, match="limit"):
            await b.send(b"x" * 2000)
        await b.send(b"x" * 900)
        assert await a.receive() == b"x" * 900


async def test_graceful_close_ends_iteration_on_the_other_side() -> None:
    async with link_pair() as (a, b):
        for i in range(3):
            await a.send(i)
        await a.aclose()
        assert [m async for m in b] == [0, 1, 2]
        with pytest.raises(LinkClosed) as info:
            await b.receive()
        assert info.value.graceful
        with pytest.raises(LinkClosed):
            await a.send("after close")
        await a.aclose()  # idempotent


async def test_dropped_connection_is_not_graceful() -> None:
    async with link_pair() as (a, b):
        await a.send("last")
        await a._stream.aclose()  # no close frame: like a crash or a cut cable
        assert await b.receive() == "last"
        with pytest.raises(LinkClosed) as info:
            await b.receive()
        assert not info.value.graceful
        assert a.peer.fingerprint() not in str(info.value)
        assert b.peer.fingerprint() in str(info.value)
        with pytest.raises(LinkClosed):
            await b.send("to nobody")


async def test_receive_is_single_consumer() -> None:
    async with link_pair() as (a, b), trio.open_nursery() as nursery:
        nursery.start_soon(b.receive)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(trio.BusyResourceError):
            await b.receive()
        await a.send("wake")


async def test_local_close_interrupts_a_pending_receive() -> None:
    async with link_pair() as (_a, b), trio.open_nursery() as nursery:

        async def closer() -> None:
            await trio.testing.wait_all_tasks_blocked()
            await b.aclose()

        nursery.start_soon(closer)
        with pytest.raises(LinkClosed):
            await b.receive()


async def test_handshake_works_over_any_stream() -> None:
    """A relayed path is just a stream: the handshake and link need nothing socket-specific."""
    left, right = trio.testing.memory_stream_pair()
    alice, bob = Identity.generate("alice"), Identity.generate("bob")
    links: dict[str, SecureLink] = {}
    async with trio.open_nursery() as nursery:

        async def responder() -> None:
            links["b"] = await handshake(
                right, bob, room_secret=ROOM, table_id=TABLE, initiator=False
            )

        nursery.start_soon(responder)
        links["a"] = await handshake(
            left,
            alice,
            room_secret=ROOM,
            table_id=TABLE,
            initiator=True,
            expected_peer=bob.public,
        )
    assert links["a"].address is None
    await links["a"].send({"relayed": True})
    assert await links["b"].receive() == {"relayed": True}


async def test_a_link_through_a_turn_relay_is_closed_as_it_is_when_told_to_abort() -> None:
    """A link that broke is closed with a reset (`abort_at_close`); one whose stream is relayed
    by a TURN server has no socket of ours to reset, and closes as usual: asking did once raise
    AttributeError in the mesh's cleanup, which took a whole joiner down."""
    from buraco_p2p.net.reach.invite import Endpoint
    from buraco_p2p.net.reach.turnwire import TurnServer, TurnStream

    ours, theirs = trio.socket.socketpair()
    peer = Endpoint.parse("198.51.100.20", 4470)
    server = TurnServer("lab", "secret", Endpoint.parse("198.51.100.4", 3478))
    relayed = TurnStream(trio.SocketStream(ours), peer, server)
    alice, bob = Identity.generate("alice"), Identity.generate("bob")
    links: dict[str, SecureLink] = {}
    async with trio.open_nursery() as nursery:

        async def responder() -> None:
            links["b"] = await handshake(
                trio.SocketStream(theirs), bob, room_secret=ROOM, table_id=TABLE,
                initiator=False,
            )  # fmt: skip

        nursery.start_soon(responder)
        links["a"] = await handshake(relayed, alice, room_secret=ROOM, table_id=TABLE,
                                     initiator=True, expected_peer=bob.public)  # fmt: skip
    assert links["a"].address == str(peer)  # the peer behind the relay, not the server
    links["a"].abort_at_close()
    await links["a"].aclose()
    with pytest.raises(LinkClosed):
        await links["b"].receive()


async def test_connect_refused_is_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConnectError, match=f"127.0.0.1:{port}"):
        await connect("127.0.0.1", port, Identity.generate("a"), room_secret=ROOM, table_id=TABLE)


async def test_link_server_serves_many_clients_and_checks_identity() -> None:
    host = Identity.generate("host")
    seen: list[str] = []

    async def echo(link: SecureLink) -> None:
        seen.append(link.peer_nickname)
        link.seat()  # the server admits everyone who knows the room secret
        async for message in link:
            await link.send(["echo", message])

    server = LinkServer(host, echo, room_secret=ROOM, table_id=TABLE)
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, listeners)

        async def client(n: int) -> None:
            me = Identity.generate(f"c{n}")
            async with await connect(
                "127.0.0.1",
                port,
                me,
                room_secret=ROOM,
                table_id=TABLE,
                expected_peer=host.public,
            ) as link:
                for i in range(5):
                    await link.send([n, i])
                    assert await link.receive() == ["echo", [n, i]]

        async with trio.open_nursery() as clients:
            for n in range(6):
                clients.start_soon(client, n)
        with pytest.raises(PeerMismatch):
            await connect(
                "127.0.0.1",
                port,
                Identity.generate("x"),
                room_secret=ROOM,
                table_id=TABLE,
                expected_peer=Identity.generate("impostor").public,
            )
        nursery.cancel_scope.cancel()
    assert sorted(seen) == [f"c{n}" for n in range(6)]
    assert server.completed == 6 and server.refused == 0


async def test_wrong_room_secret_fails_on_both_sides() -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    errors: list[BaseException] = []
    async with trio.open_nursery() as nursery:

        async def accept() -> None:
            stream = await listeners[0].accept()
            try:
                await handshake(
                    stream,
                    Identity.generate("b"),
                    room_secret=ROOM,
                    table_id=TABLE,
                    initiator=False,
                    timeout=5,
                )
            except HandshakeError as exc:
                errors.append(exc)

        nursery.start_soon(accept)
        with pytest.raises(HandshakeError, match="room secret"):
            await connect(
                "127.0.0.1",
                port,
                Identity.generate("a"),
                room_secret=os.urandom(16),
                table_id=TABLE,
            )
    assert len(errors) == 1 and "127.0.0.1" in str(errors[0])
    await listeners[0].aclose()


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback on this machine")
async def test_ipv6_loopback() -> None:
    listeners = await trio.open_tcp_listeners(0, host="::1")
    port = listeners[0].socket.getsockname()[1]
    bob = Identity.generate("bob")
    async with trio.open_nursery() as nursery:
        out: list[SecureLink] = []

        async def accept() -> None:
            stream = await listeners[0].accept()
            out.append(
                await handshake(stream, bob, room_secret=ROOM, table_id=TABLE, initiator=False)
            )

        nursery.start_soon(accept)
        link = await connect("::1", port, Identity.generate("a"), room_secret=ROOM, table_id=TABLE)
    assert link.address == f"[::1]:{port}"
    await link.send("v6")
    assert await out[0].receive() == "v6"
    await link.aclose()
    await out[0].aclose()
    await listeners[0].aclose()


async def test_send_cancelled_part_way_retires_the_link() -> None:
    async with link_pair() as (a, b):
        with trio.move_on_after(0.1) as scope:
            await a.send(os.urandom(900_000))  # nobody reads: blocks inside the frame
        assert scope.cancelled_caught
        assert a.closed
        with pytest.raises(LinkClosed, match="interrupted"):
            await a.send("next")
        with pytest.raises((LinkClosed, TruncatedFrame)):
            while True:
                await b.receive()


@pytest.mark.slow
async def test_soak_many_links_many_messages() -> None:
    """Twenty clients, each sending 2000 messages of random sizes through one server."""
    host = Identity.generate("host")
    totals: dict[str, int] = {}

    async def count(link: SecureLink) -> None:
        n = 0
        link.seat()
        async for message in link:
            assert message["n"] == n
            n += 1
        totals[link.peer_nickname] = n

    server = LinkServer(host, count, room_secret=ROOM, table_id=TABLE)
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, listeners)

        async def client(name: str) -> None:
            me = Identity.generate(name)
            async with await connect(
                "127.0.0.1", port, me, room_secret=ROOM, table_id=TABLE
            ) as link:
                for n in range(2000):
                    await link.send({"n": n, "pad": os.urandom(n % 3000)})

        async with trio.open_nursery() as clients:
            for i in range(20):
                clients.start_soon(client, f"c{i}")
        with trio.fail_after(30):
            while len(totals) < 20:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert totals == {f"c{i}": 2000 for i in range(20)}
