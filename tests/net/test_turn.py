"""The TURN client (net/reach/turn.py) against the real coturn on 127.0.0.1, and against
hostile servers of our own that break the protocol."""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from natlab import TURN_PASSWORD, TURN_USER, coturn, free_port, turn_unavailable

from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.stun import (
    SUCCESS,
    StunMessage,
    StunReader,
    integrity_holds,
    message_type,
    with_integrity,
)
from buraco_p2p.net.reach.turn import TurnError, TurnServer, open_turn
from buraco_p2p.net.reach.turnwire import ALLOCATE, TurnOptionError, parse_turn_server

LOOPBACK = ipaddress.ip_address("127.0.0.1")
needs_coturn = pytest.mark.skipif(turn_unavailable() is not None, reason=str(turn_unavailable()))


@pytest.fixture(scope="module")
def turn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    if turn_unavailable() is not None:
        pytest.skip(str(turn_unavailable()))
    with coturn("127.0.0.1", free_port(), tmp_path_factory.mktemp("coturn")) as endpoint:
        yield endpoint


def _server(endpoint: Endpoint, password: str = TURN_PASSWORD) -> TurnServer:
    return TurnServer(TURN_USER, password, endpoint)


@needs_coturn
def test_peer_bytes_both_ways_through_a_refreshed_allocation_then_released(
    turn: Endpoint,
) -> None:
    async def main() -> None:
        async with open_turn(_server(turn), refresh=0.3) as relay:
            assert relay.relayed is not None and relay.relayed.ip == LOOPBACK
            assert relay.relayed.port != turn.port
            assert relay.mapped is not None and relay.mapped.ip == LOOPBACK
            assert relay.lifetime > 0
            await relay.permit([LOOPBACK])
            dialer = await trio.open_tcp_stream(relay.relayed.host, relay.relayed.port)
            await dialer.send_all(b"from the peer")
            with trio.fail_after(20):
                incoming = await relay.incoming.receive()
                # the peer as the server saw it: the dialer's own address
                assert (incoming.peer.host, incoming.peer.port) == dialer.socket.getsockname()
                assert incoming.socket.getpeername() == dialer.socket.getsockname()
                got = b""
                while len(got) < len(b"from the peer"):
                    got += await incoming.receive_some()
                assert got == b"from the peer"
                await incoming.send_all(b"from us")
                assert await dialer.receive_some() == b"from us"
                while relay.refreshes < 2:  # the allocation and the permission, twice
                    await trio.sleep(0.05)
            await incoming.send_all(b"still relayed after the refreshes")
            with trio.fail_after(20):
                assert await dialer.receive_some() == b"still relayed after the refreshes"
            relayed = relay.relayed
            assert relay.failure is None
        assert relay.released
        # released: the server closes the relayed port (a moment after it answers)
        with trio.fail_after(20):
            while True:
                try:
                    late = await trio.open_tcp_stream(relayed.host, relayed.port)
                except OSError:
                    break
                await late.aclose()
                await trio.sleep(0.05)

    trio.run(main)


@needs_coturn
def test_a_peer_not_permitted_is_not_let_through(turn: Endpoint) -> None:
    async def main() -> None:
        async with open_turn(_server(turn)) as relay:
            assert relay.relayed is not None
            with trio.fail_after(20):  # the server resets it: no permission for 127.0.0.1
                try:
                    dialer = await trio.open_tcp_stream(relay.relayed.host, relay.relayed.port)
                    assert await dialer.receive_some() == b""
                except (OSError, trio.BrokenResourceError):
                    pass
            with pytest.raises(trio.WouldBlock):
                relay.incoming.receive_nowait()

    trio.run(main)


@needs_coturn
def test_a_wrong_password_is_one_line_naming_the_server(turn: Endpoint) -> None:
    async def main() -> None:
        async with open_turn(_server(turn, "not-the-password")):
            raise AssertionError("allocated with a wrong password")

    with pytest.raises(TurnError) as caught:
        trio.run(main)
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith(f"TURN server {turn}: refused the user name or password (401"), text


@needs_coturn
def test_a_server_without_tcp_relays_says_so(tmp_path: Path) -> None:
    port = free_port()

    async def main() -> None:
        async with open_turn(_server(Endpoint.parse("127.0.0.1", port))):
            raise AssertionError("a TCP allocation from a server with --no-tcp-relay")

    with coturn("127.0.0.1", port, tmp_path, tcp_relay=False), pytest.raises(TurnError) as caught:
        trio.run(main)
    assert str(caught.value).startswith(
        f"TURN server 127.0.0.1:{port}: refuses TCP allocations (442"
    ), caught.value


def test_an_unreachable_server_is_named() -> None:
    port = free_port()  # nobody listens there

    async def main() -> None:
        async with open_turn(_server(Endpoint.parse("127.0.0.1", port)), timeout=5):
            raise AssertionError("allocated on a closed port")

    with pytest.raises(TurnError) as caught:
        trio.run(main)
    reached = f"TURN server 127.0.0.1:{port}: cannot be reached: Connection refused"
    assert str(caught.value) == reached, caught.value


# -- hostile servers -----------------------------------------------------------------------


async def _hostile(answer: bytes | None) -> tuple[trio.SocketListener, Endpoint]:
    """A server that reads one request and sends `answer` (None: a success for that very
    request, with no authentication asked)."""
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    return listener, Endpoint.parse("127.0.0.1", listener.socket.getsockname()[1])


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (None, "allocated without asking for credentials"),
        (b"HTTP/1.1 200 OK\r\n\r\n", "not a STUN message"),
        (b"\x01\x13\xff\xf0" + b"\0" * 16, "longer than"),
        (b"", "closed the connection"),
    ],
    ids=["no-auth", "not-stun", "too-long", "closed"],
)
def test_a_hostile_server_is_a_typed_error_naming_it(answer: bytes | None, words: str) -> None:
    async def main() -> None:
        listener, endpoint = await _hostile(answer)

        async def serve(stream: trio.SocketStream) -> None:
            request = StunMessage.from_bytes(await StunReader(stream, 2048, "us").message())
            if answer is None:
                reply = StunMessage(message_type(ALLOCATE, SUCCESS), request.transaction, ())
                await stream.send_all(reply.to_bytes())
            else:
                await stream.send_all(answer)
            await stream.aclose()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.serve_listeners, serve, [listener])
            with pytest.raises(TurnError) as caught:
                async with open_turn(_server(endpoint), timeout=10):
                    raise AssertionError("allocated on a hostile server")
            assert str(caught.value).startswith(f"TURN server {endpoint}: "), caught.value
            assert words in str(caught.value), caught.value
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_message_integrity_round_trip_and_tamper() -> None:
    msg = StunMessage(message_type(ALLOCATE, 0), b"t" * 12, ((0x0019, struct.pack(">I", 6 << 24)),))
    data = with_integrity(msg, b"key")
    assert integrity_holds(data, b"key")
    assert not integrity_holds(data, b"other key")
    assert not integrity_holds(data[:-1] + bytes([data[-1] ^ 1]), b"key")
    assert not integrity_holds(msg.to_bytes(), b"key")  # none at all


def test_turn_option_is_numeric_with_the_default_port() -> None:
    server = parse_turn_server("ana:p@ss:w@rd@198.51.100.4")
    assert (server.user, server.password, str(server.endpoint)) == (
        "ana", "p@ss:w@rd", "198.51.100.4:3478"
    )
    assert str(parse_turn_server("a:b@[2001:db8::4]:5349").endpoint) == "[2001:db8::4]:5349"
    for bad, words in [
        ("ana:pw@turn.example.org", "numeric IP address"),
        ("198.51.100.4:3478", "USER:PASSWORD@IP:PORT"),
        ("ana@198.51.100.4", "USER:PASSWORD"),
        ("ana:pw@198.51.100.4:0", "1..65535"),
        ("ana:pw@[2001:db8::4", "missing ']'"),
    ]:
        with pytest.raises(TurnOptionError, match=words.replace("[", "\\[").replace(".", "\\.")):
            parse_turn_server(bad)


def test_the_turn_vectors_are_what_the_client_sends_and_reads() -> None:
    import json

    from buraco_p2p.net.reach.stun import (
        INDICATION,
        attribute,
        class_of,
        error_code,
        method_of,
        parse_xor_address,
    )
    from buraco_p2p.net.reach.turnwire import (
        ATTR_CONNECTION_ID,
        ATTR_XOR_PEER_ADDRESS,
        ATTR_XOR_RELAYED_ADDRESS,
        CONNECTION_ATTEMPT,
        long_term_key,
    )

    vectors = Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "candidates.json"
    v = json.loads(vectors.read_text())["turn"]
    key = long_term_key(v["user"], v["realm"].encode(), v["password"])
    assert key.hex() == v["key"]
    signed = [v[n] for n in ("allocate", "refresh", "connection_bind", "release")]
    for data in [*signed, v["create_permission"]["binary"], v["allocate_success"]["binary"]]:
        assert integrity_holds(bytes.fromhex(data), key)
        assert not integrity_holds(bytes.fromhex(data), long_term_key("ana", b"x", "y"))
    challenge = StunMessage.from_bytes(bytes.fromhex(v["allocate_challenge"]))
    assert error_code(challenge) == (401, "Unauthorized")
    success = StunMessage.from_bytes(bytes.fromhex(v["allocate_success"]["binary"]))
    relayed = attribute(success, ATTR_XOR_RELAYED_ADDRESS)
    assert relayed is not None
    assert str(parse_xor_address(relayed, success.transaction)) == v["allocate_success"]["relayed"]
    attempt = StunMessage.from_bytes(bytes.fromhex(v["connection_attempt"]["binary"]))
    assert method_of(attempt.kind) == CONNECTION_ATTEMPT and class_of(attempt.kind) == INDICATION
    assert attribute(attempt, ATTR_CONNECTION_ID) == bytes.fromhex(
        v["connection_attempt"]["connection_id"]
    )
    peer = attribute(attempt, ATTR_XOR_PEER_ADDRESS)
    assert peer is not None
    assert str(parse_xor_address(peer, attempt.transaction)) == v["connection_attempt"]["peer"]


# -- the commands ------------------------------------------------------------------------


def test_a_bad_turn_option_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import subprocess

    from cli_helpers import COMMAND, ENV

    from buraco_p2p.net.channel.identity import Identity
    from buraco_p2p.net.reach.invite import Invite

    key = Identity.generate("x").public.raw
    code = Invite(bytes(16), bytes(16), key, (Endpoint.parse("127.0.0.1", 9),)).to_text()
    for args in (["host", "--turn", "ana:pw@turn.example.org"],
                 ["join", code, "--turn", "198.51.100.4:3478"]):  # fmt: skip
        done = subprocess.run(
            [*COMMAND, *args, "--line", "--config-dir", str(tmp_path / "me")],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=ENV,
        )  # fmt: skip
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert "--turn" in lines[0] and "Traceback" not in done.stderr, lines


@needs_coturn
def test_host_and_join_with_turn_seat_a_joiner_through_the_relay(
    turn: Endpoint, tmp_path: Path
) -> None:
    """`host --turn` advertises a relayed candidate; a joiner given an invite that holds only
    that candidate prints a reply code with the address its own `--turn` server saw; pasted
    at the host, it lets the joiner through the relay, and the lobby names the link."""
    from cli_helpers import kill_leftovers, read_until, start

    from buraco_p2p.net.reach.candidates import CandidateKind
    from buraco_p2p.net.reach.invite import Invite

    option = f"{TURN_USER}:{TURN_PASSWORD}@{turn}"

    async def main() -> None:
        host = await start(["host", "--line", "--listen", "127.0.0.1", "--auto-approve",
                            "--turn", option, "--nick", "ana"], tmp_path / "ana")  # fmt: skip
        procs = [host]
        try:
            hout: list[bytes] = []
            await read_until(host, hout, b"BRC-", 30)
            await read_until(host, hout, b"\n", 10)
            text = b"".join(hout).decode()
            assert f"the TURN server {turn}" not in text or "relayed address" in text, text
            assert "relayed address 127.0.0.1:" in text, text
            invite = Invite.from_text(next(ln for ln in text.splitlines()
                                           if ln.startswith("BRC-")))  # fmt: skip
            relayed = [ep for ep, kind in zip(invite.addresses, invite.kinds, strict=True)
                       if kind == CandidateKind.RELAYED]  # fmt: skip
            assert len(relayed) == 1 and relayed[0].ip == LOOPBACK, invite
            only_relay = Invite(invite.table_id, invite.room_secret, invite.host_key,
                                tuple(relayed), kinds=(3,))  # fmt: skip
            joiner = await start(["join", only_relay.to_text(), "--line", "--listen",
                                  "127.0.0.1", "--turn", option, "--nick", "bia"],
                                 tmp_path / "bia")  # fmt: skip
            procs.append(joiner)
            jout: list[bytes] = []
            await read_until(joiner, jout, b"BRR-", 30)
            await read_until(joiner, jout, b"\n", 10)
            code = next(ln for ln in b"".join(jout).decode().splitlines()
                        if ln.startswith("BRR-"))  # fmt: skip
            assert host.stdin is not None
            await host.stdin.send_all(code.encode() + b"\n")
            await read_until(host, hout, b"relayed (TURN 127.0.0.1)", 60)
        finally:
            await kill_leftovers(procs)

    trio.run(main)


# -- the mesh with a relay -----------------------------------------------------------------


@needs_coturn
def test_a_reachable_host_is_dialed_directly_though_its_relay_would_work(turn: Endpoint) -> None:
    """The relayed candidate comes last and starts only once the others fail: a host that
    answers on its own address is never reached through the relay, even where it is
    permitted."""
    import functools

    from buraco_p2p.net.channel.identity import Identity
    from buraco_p2p.net.mesh.startup import host_table, join_table
    from buraco_p2p.net.mesh.turning import keep_relay
    from buraco_p2p.net.reach.candidates import CandidateKind

    async def main() -> None:
        said: list[str] = []
        async with host_table(Identity.generate("ana")) as host:
            relay = await host.nursery.start(
                functools.partial(keep_relay, advertise=True), host, [_server(turn)], said.append
            )
            assert relay is not None and relay.relayed is not None
            await relay.permit([LOOPBACK])
            invite = host.invite
            assert invite.kinds[-1] == CandidateKind.RELAYED
            assert invite.addresses[-1] == relay.relayed
            async with join_table(Identity.generate("bia"), invite) as joiner:
                with trio.fail_after(30):
                    while not joiner.is_up(host.me):
                        await trio.sleep(0.02)
                assert joiner.how_linked(host.me) == "direct"
        assert any(line.startswith(f"* relayed address {relay.relayed}") for line in said)

    trio.run(main)


@needs_coturn
def test_only_a_reply_code_keyed_with_the_room_secret_opens_the_host_relay(
    turn: Endpoint,
) -> None:
    """A stranger without the invite cannot make the host permit an address: the code's tag
    is checked before any permission."""
    import functools

    from buraco_p2p.net.channel.identity import Identity
    from buraco_p2p.net.mesh.internet import answer_reply_code
    from buraco_p2p.net.mesh.startup import host_table
    from buraco_p2p.net.mesh.turning import keep_relay
    from buraco_p2p.net.reach.candidates import Candidate, CandidateKind, NatClass
    from buraco_p2p.net.reach.reply import ReplyCode

    stranger = ipaddress.ip_address("127.0.0.66")
    joiner = ipaddress.ip_address("127.0.0.77")

    def code(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, secret: bytes, table: bytes) -> str:
        candidate = Candidate(CandidateKind.REFLEXIVE, Endpoint(ip, 40400))
        return ReplyCode((candidate,), NatClass.RANDOM).to_text(secret, table)

    async def main() -> None:
        said: list[str] = []
        async with host_table(Identity.generate("ana")) as host:
            relay = await host.nursery.start(
                functools.partial(keep_relay, advertise=True), host, [_server(turn)], said.append
            )
            assert relay is not None
            forged = code(stranger, bytes(16), host.table_id)
            await answer_reply_code(host, 1, forged, said.append)
            assert relay.permitted == set()
            assert any(line.startswith("* reply code refused") for line in said), said
            await answer_reply_code(host, 1, code(joiner, host.room_secret, host.table_id),
                                    said.append)  # fmt: skip
            assert relay.permitted == {joiner}

    trio.run(main)


@needs_coturn
def test_a_turn_server_that_goes_away_ends_the_relay_with_its_name(tmp_path: Path) -> None:
    port = free_port()

    async def main() -> None:
        with coturn("127.0.0.1", port, tmp_path):
            cm = open_turn(_server(Endpoint.parse("127.0.0.1", port)), refresh=0.2)
            relay = await cm.__aenter__()
        try:
            with trio.fail_after(30):
                await relay.closed.wait()
            assert relay.failure is not None
            assert str(relay.failure).startswith(f"TURN server 127.0.0.1:{port}: "), relay.failure
            with pytest.raises(trio.EndOfChannel):
                await relay.incoming.receive()
        finally:
            await cm.__aexit__(None, None, None)
        assert not relay.released

    trio.run(main)


@pytest.mark.parametrize(
    ("after", "words"),
    [
        (b"HTTP/1.1 200 OK\r\n\r\n", "not a STUN message"),
        (None, "answered a request it was not asked"),
        (b"", "closed the connection"),
    ],
    ids=["garbage", "unasked-answer", "closed"],
)
def test_a_server_that_breaks_the_protocol_after_allocating_ends_the_relay_naming_it(
    after: bytes | None, words: str
) -> None:
    """A server that allocates properly (401, then a success our key verifies) and then
    sends what TURN does not allow: the relay ends, `failure` names the server, and the
    caller's tasks go on."""
    from buraco_p2p.net.reach.stun import ERROR, attribute, error_value, xor_address
    from buraco_p2p.net.reach.turnwire import (
        ATTR_LIFETIME,
        ATTR_NONCE,
        ATTR_REALM,
        ATTR_XOR_RELAYED_ADDRESS,
        long_term_key,
    )

    realm, nonce = b"hostile", b"n0nce"
    key = long_term_key(TURN_USER, realm, TURN_PASSWORD)

    async def serve(stream: trio.SocketStream) -> None:
        reader = StunReader(stream, 2048, "client")
        first = StunMessage.from_bytes(await reader.message())
        await stream.send_all(StunMessage(message_type(ALLOCATE, ERROR), first.transaction, (
            (0x0009, error_value(401, "Unauthorized")), (ATTR_REALM, realm), (ATTR_NONCE, nonce),
        )).to_bytes())  # fmt: skip
        second_bytes = await reader.message()
        assert integrity_holds(second_bytes, key)
        second = StunMessage.from_bytes(second_bytes)
        assert attribute(second, 0x0006) == TURN_USER.encode()
        relayed = Endpoint.parse("127.0.0.1", 1)
        ok = StunMessage(message_type(ALLOCATE, SUCCESS), second.transaction, (
            (ATTR_XOR_RELAYED_ADDRESS, xor_address(relayed, second.transaction)),
            (ATTR_LIFETIME, struct.pack(">I", 600)),
        ))  # fmt: skip
        await stream.send_all(with_integrity(ok, key))
        if after is None:
            await stream.send_all(with_integrity(ok, key))  # the same answer again
        elif after:
            await stream.send_all(after)
        await stream.aclose()

    async def main() -> None:
        (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
        endpoint = Endpoint.parse("127.0.0.1", listener.socket.getsockname()[1])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.serve_listeners, serve, [listener])
            async with open_turn(_server(endpoint), timeout=10) as relay:
                assert relay.relayed == Endpoint.parse("127.0.0.1", 1)
                with trio.fail_after(20):
                    await relay.closed.wait()
                assert relay.failure is not None
                assert str(relay.failure).startswith(f"TURN server {endpoint}: "), relay.failure
                assert words in str(relay.failure), relay.failure
            nursery.cancel_scope.cancel()

    trio.run(main)


@needs_coturn
def test_a_joiner_permits_only_the_hosts_public_addresses_and_waits_through_its_relay(
    turn: Endpoint,
) -> None:
    """A joiner with its own relay, at a host behind a NAT: it permits the invite's
    candidates that lead outside the host's network (never its LAN address), prints a reply
    code with the address its TURN server saw and its relayed address, and waits to be
    dialed through the relay from the host's reflexive address."""
    import functools

    from buraco_p2p.net.channel.identity import Identity
    from buraco_p2p.net.mesh.internet import prepare_reply_code
    from buraco_p2p.net.mesh.startup import host_table
    from buraco_p2p.net.mesh.turning import keep_relay
    from buraco_p2p.net.reach.candidates import CandidateKind
    from buraco_p2p.net.reach.invite import Invite
    from buraco_p2p.net.reach.reply import ReplyCode

    lan, public = Endpoint.parse("10.0.1.2", 4464), Endpoint.parse("198.51.100.11", 4464)
    invite = Invite(bytes(range(16)), bytes(16), Identity.generate("h").public.raw,
                    (lan, public), kinds=(0, 2), nat_class=2)  # fmt: skip

    async def main() -> None:
        said: list[str] = []
        # a mesh of our own stands for the joiner's (only its relay and targets are used)
        async with host_table(Identity.generate("bia")) as mesh:
            relay = await mesh.nursery.start(
                functools.partial(keep_relay, advertise=False), mesh, [_server(turn)],
                said.append,
            )  # fmt: skip
            assert relay is not None and relay.relayed is not None
            await prepare_reply_code(mesh, 1, invite, [], said.append)
            assert relay.permitted == {public.ip}
            assert mesh.turn_targets == frozenset({public})
            assert mesh.punch_targets == frozenset()
            text = next(line for line in said if line.startswith("BRR-"))
            code = ReplyCode.from_text(text, invite.room_secret, invite.table_id)
            assert [c.kind for c in code.candidates] == [CandidateKind.REFLEXIVE,
                                                         CandidateKind.RELAYED]  # fmt: skip
            assert code.candidates[0].endpoint == relay.mapped
            assert code.candidates[1].endpoint == relay.relayed

    trio.run(main)
