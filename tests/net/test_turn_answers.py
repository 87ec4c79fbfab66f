"""What the TURN client takes from a server's answer (docs/protocol.md 2.14, RFC 8489 sections
6.3 and 14.5): only the attributes its MESSAGE-INTEGRITY covers, and no answer holding a
comprehension-required attribute it does not understand. Against hostile servers of our own
on 127.0.0.1 that allocate properly but for that one point."""

from __future__ import annotations

import struct

import pytest
import trio
from natlab import TURN_PASSWORD, TURN_USER

from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.stun import (
    ERROR,
    SUCCESS,
    StunMessage,
    StunReader,
    error_value,
    message_type,
    with_integrity,
    xor_address,
)
from buraco_p2p.net.reach.turn import TurnError, TurnServer, open_turn
from buraco_p2p.net.reach.turnwire import (
    ALLOCATE,
    ATTR_LIFETIME,
    ATTR_NONCE,
    ATTR_REALM,
    ATTR_XOR_RELAYED_ADDRESS,
    long_term_key,
)

REALM, NONCE = b"hostile", b"n0nce"
KEY = long_term_key(TURN_USER, REALM, TURN_PASSWORD)
RELAYED = Endpoint.parse("127.0.0.1", 1)


def _success(transaction: bytes, shape: str, key: bytes = KEY) -> bytes:
    relayed = (ATTR_XOR_RELAYED_ADDRESS, xor_address(RELAYED, transaction))
    lifetime = (ATTR_LIFETIME, struct.pack(">I", 600))
    kind = message_type(ALLOCATE, SUCCESS)
    if shape == "relayed-after-integrity":
        signed = with_integrity(StunMessage(kind, transaction, (lifetime,)), key)
        # An attribute appended after MESSAGE-INTEGRITY, the header's length grown to hold it
        # (what anyone on the path could do): the key does not cover it.
        extra = struct.pack(">HH", *relayed[0:1], len(relayed[1])) + relayed[1]
        body = signed[20:] + extra
        return signed[:2] + struct.pack(">H", len(body)) + signed[4:20] + body
    if shape == "unknown-required":
        return with_integrity(StunMessage(kind, transaction, (relayed, lifetime, (0x7FF0, b"?!"))),
                              key)  # fmt: skip
    assert shape == "unknown-optional"
    return with_integrity(StunMessage(kind, transaction, (relayed, lifetime, (0x8022, b"srv"))),
                          key)  # fmt: skip


async def _serve(stream: trio.SocketStream, shape: str, realm: bytes) -> None:
    reader = StunReader(stream, 2048, "client")
    first = StunMessage.from_bytes(await reader.message())
    await stream.send_all(StunMessage(message_type(ALLOCATE, ERROR), first.transaction, (
        (0x0009, error_value(401, "Unauthorized")), (ATTR_REALM, realm), (ATTR_NONCE, NONCE),
    )).to_bytes())  # fmt: skip
    second = StunMessage.from_bytes(await reader.message())
    key = long_term_key(TURN_USER, realm, TURN_PASSWORD)
    await stream.send_all(_success(second.transaction, shape, key))
    with trio.move_on_after(30):
        await reader.message()  # the releasing Refresh: hang up rather than answer it
    await stream.aclose()


def _allocate(shape: str, realm: bytes = REALM) -> Endpoint | str:
    """The relayed address the client took, or the words of its refusal."""
    out: list[Endpoint | str] = []

    async def main() -> None:
        (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
        endpoint = Endpoint.parse("127.0.0.1", listener.socket.getsockname()[1])
        server = TurnServer(TURN_USER, TURN_PASSWORD, endpoint)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.serve_listeners, lambda s: _serve(s, shape, realm), [listener])
            try:
                async with open_turn(server, timeout=10) as relay:
                    assert relay.relayed is not None
                    out.append(relay.relayed)
            except TurnError as exc:
                assert str(exc).startswith(f"TURN server {endpoint}: "), exc
                out.append(str(exc))
            nursery.cancel_scope.cancel()

    trio.run(main)
    return out[0]


def test_an_attribute_after_message_integrity_is_not_taken() -> None:
    said = _allocate("relayed-after-integrity")
    assert isinstance(said, str) and "lacks a relayed address" in said, said


@pytest.mark.parametrize(("shape", "taken"), [("unknown-required", False),
                                              ("unknown-optional", True)])  # fmt: skip
def test_an_answer_with_a_required_attribute_we_do_not_know_fails(shape: str, taken: bool) -> None:
    said = _allocate(shape)
    if taken:
        assert said == RELAYED
    else:
        assert isinstance(said, str) and "0x7ff0" in said and "RFC 8489" in said, said


@pytest.mark.parametrize("size", [763, 764])
def test_a_realm_longer_than_rfc_8489_allows_is_refused(size: int) -> None:
    said = _allocate("unknown-optional", realm=b"r" * size)
    if size <= 763:
        assert said == RELAYED
    else:
        assert isinstance(said, str) and "REALM or NONCE is over 763 bytes" in said, said


def test_a_server_that_breaks_the_protocol_is_hung_up_on_at_once() -> None:
    """After a proper allocation the server sends bytes that are not STUN: the relay ends
    naming it, and the control connection is closed while the caller's block still runs
    (the allocation goes with it), not at the next refresh."""
    hung_up = trio.Event()

    async def serve(stream: trio.SocketStream) -> None:
        reader = StunReader(stream, 2048, "client")
        first = StunMessage.from_bytes(await reader.message())
        await stream.send_all(StunMessage(message_type(ALLOCATE, ERROR), first.transaction, (
            (0x0009, error_value(401, "Unauthorized")), (ATTR_REALM, REALM), (ATTR_NONCE, NONCE),
        )).to_bytes())  # fmt: skip
        second = StunMessage.from_bytes(await reader.message())
        await stream.send_all(_success(second.transaction, "unknown-optional"))
        await stream.send_all(b"HTTP/1.1 200 OK\r\n\r\n")
        with trio.move_on_after(60):
            while await stream.receive_some(2048):
                pass
            hung_up.set()

    async def main() -> None:
        (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
        endpoint = Endpoint.parse("127.0.0.1", listener.socket.getsockname()[1])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.serve_listeners, serve, [listener])
            # refresh far away: only the hang-up on the bad bytes can close the connection
            async with open_turn(TurnServer(TURN_USER, TURN_PASSWORD, endpoint), refresh=600,
                                 timeout=10) as relay:  # fmt: skip
                with trio.fail_after(30):
                    await relay.closed.wait()
                    await hung_up.wait()
                assert "not a STUN message" in str(relay.failure), relay.failure
            nursery.cancel_scope.cancel()

    trio.run(main)
