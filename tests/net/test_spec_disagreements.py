"""Where the program did what docs/protocol.md refuses: zone ids in a join greeting (2.10), an
over-long `refused` reason (2.6, 2.10) and a sealed frame with another version byte (2.4).

Each was found by an implementation written from the spec alone: the host wrote a zone id
into the roster, which such a client refuses, so one hostile joiner locked it out of the table.
"""

from __future__ import annotations

import contextlib
import functools
import struct
from collections import deque

import pytest
import trio
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from mesh_helpers import FAST, raw_link

from buraco_p2p.net.channel.errors import DecryptError, LinkError, MeshError
from buraco_p2p.net.channel.framing import KIND_DATA, FrameReader, ReceiveCipher, SendCipher
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.channel.link import handshake
from buraco_p2p.net.mesh.punching import PunchRecordError, parse_observed, parse_punch_record
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.net.table.table import (
    JoinRefused,
    TableError,
    addresses_from_wire,
    parse_hello,
    parse_welcome,
)

KEY = bytes(range(32))


async def _wait_rejection(rejections: deque[str], needle: str) -> str:
    with trio.fail_after(10):
        while True:
            for text in list(rejections):
                if needle in text:
                    return text
            await trio.sleep(0.01)


@pytest.mark.parametrize("ip", ["fe80::1%lo", "fe80::1%1", "2001:db8::1%eth0"])
def test_an_address_with_a_zone_id_is_refused(ip: str) -> None:
    with pytest.raises(TableError, match="zone id"):
        parse_hello(["join", {"addrs": [[ip, 4000]]}], "eve")
    with pytest.raises(TableError, match="zone id"):
        addresses_from_wire([[ip, 4000]], "host")


@pytest.mark.parametrize(
    "record",
    [
        ["seen", ["fe80::1%eth0", 40404]],
        ["punch", Identity.generate("caio").public.raw, [["2001:db8::9%eth0", 40404]]],
    ],
    ids=["seen", "punch"],
)
def test_a_zone_id_in_a_punching_record_closes_the_link(record: list[object]) -> None:
    with pytest.raises(PunchRecordError, match="zone id"):
        parse_punch_record(record, "host")


def test_the_host_tells_a_joiner_where_it_sees_it_without_a_zone_id() -> None:
    observed = parse_observed("[fe80::1%eth0]:40404")
    assert observed is not None and str(observed.ip) == "fe80::1" and observed.port == 40404


def test_addresses_without_a_zone_id_still_parse() -> None:
    kind, addrs = parse_hello(["join", {"addrs": [["fe80::1", 4000], ["::ffff:1.2.3.4", 9]]}], "x")
    assert kind == "join" and [str(a.ip) for a in addrs] == ["fe80::1", "::ffff:102:304"]


async def test_the_host_refuses_a_greeting_with_a_zone_id_and_seats_nobody() -> None:
    async with host_table(Identity.generate("ana"), config=FAST) as host:
        invite = host.invite
        eve = await raw_link(invite, Identity.generate("eve"), invite.addresses[0], host.me)
        await eve.send(["join", {"addrs": [["fe80::1%lo", 4000]]}])
        text = await _wait_rejection(host.rejections, "zone id")
        assert "eve" in text, text
        # Closed without a `refused`: a protocol error, not an answer.
        with trio.fail_after(10), pytest.raises(LinkError):
            await eve.receive()
        assert host.roster is not None and len(host.roster.members) == 1
        assert all("%" not in str(a.ip) for m in host.roster.members for a in m.addresses)


BIA = Identity.generate("bia").public


@pytest.mark.parametrize("reason", ["x" * 201, "é" * 201, 7, None, b"no"])
def test_a_malformed_refused_record_is_a_protocol_error_not_a_refusal(reason: object) -> None:
    with pytest.raises(TableError) as caught:
        parse_welcome(["refused", reason], "host", BIA, bytes(16))
    assert not isinstance(caught.value, JoinRefused)


@pytest.mark.parametrize("reason", ["", "the host declined", "é" * 200])
def test_a_refused_reason_of_at_most_200_characters_is_final(reason: str) -> None:
    with pytest.raises(JoinRefused):
        parse_welcome(["refused", reason], "host", BIA, bytes(16))


def _sealed(version: int, counter: int, payload: bytes) -> bytes:
    header = struct.pack(">I", 2 + len(payload) + 16) + bytes((version, KIND_DATA))
    nonce = b"\x00" * 4 + struct.pack(">Q", counter)
    return header + ChaCha20Poly1305(KEY).encrypt(nonce, payload, header)


@pytest.mark.parametrize("version", [0, 1, 3, 255])
def test_a_sealed_frame_with_another_version_byte_is_refused(version: int) -> None:
    # The tag is valid: the sender sealed the frame with that header as associated data.
    reader = FrameReader(1 << 20)
    reader.feed(_sealed(version, 0, b"\x90"))
    frame = reader.next_frame()
    assert frame is not None and frame.version == version
    receiver = ReceiveCipher(KEY)
    with pytest.raises(DecryptError, match="version byte"):
        receiver.open(frame)
    assert receiver.counter == 0


def test_a_sealed_frame_with_version_byte_2_opens() -> None:
    frame_bytes = _sealed(2, 0, b"\x90")
    assert frame_bytes == SendCipher(KEY).seal(KIND_DATA, b"\x90")
    reader = FrameReader(1 << 20)
    reader.feed(frame_bytes)
    frame = reader.next_frame()
    assert frame is not None and ReceiveCipher(KEY).open(frame) == b"\x90"


@pytest.mark.parametrize(("length", "final"), [(201, False), (200, True)])
async def test_a_joiner_retries_after_an_over_long_refusal_and_stops_after_a_lawful_one(
    length: int, final: bool
) -> None:
    """A host (here a bare responder) that answers the greeting with `["refused", reason]`:
    a reason of 200 code points is a final answer (`JoinRefused`); one of 201 is a protocol
    error, so the joiner closes the link and reports the host unreachable (`MeshError`, which
    the clients retry), never a final refusal."""
    host = Identity.generate("ana")
    secret, table = bytes(range(16)), bytes(range(16, 32))
    greetings: list[object] = []

    async def answer(stream: trio.SocketStream) -> None:
        link = await handshake(
            stream, host, room_secret=secret, table_id=table, initiator=False, timeout=10
        )
        greetings.append(await link.receive())
        await link.send(["refused", "x" * length])
        with trio.move_on_after(10):
            with contextlib.suppress(LinkError):
                await link.receive()  # until the joiner hangs up
        await link.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            functools.partial(trio.serve_tcp, host="127.0.0.1"), answer, 0
        )
        port = listeners[0].socket.getsockname()[1]
        invite = Invite(table, secret, host.public.raw, (Endpoint.parse("127.0.0.1", port),))
        expected: type[Exception] = JoinRefused if final else MeshError
        with trio.fail_after(30), pytest.raises(expected) as caught:
            async with join_table(Identity.generate("bia"), invite, config=FAST):
                pass
        assert final or not isinstance(caught.value, JoinRefused)
        assert len(greetings) == 1 and isinstance(greetings[0], list) and greetings[0][0] == "join"
        nursery.cancel_scope.cancel()
