"""The host's part in punching between joiners, on loopback (tests/net/test_natlab.py has the
real NATs): what it tells a joiner, what a joiner refuses to dial, and the round trip."""

from __future__ import annotations

import socket

import pytest
import trio
import trio.testing
from mesh_helpers import FAST

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.channel.link import stream_address
from buraco_p2p.net.mesh import punching
from buraco_p2p.net.mesh.punching import (
    MAX_PUNCH_CANDIDATES,
    Punch,
    PunchRecordError,
    check_candidate,
    parse_observed,
    parse_punch_record,
    punch_message,
)
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.punch import reusable_socket

CAIO = Identity.generate("caio").public


@pytest.mark.parametrize(
    ("ip", "why"),
    [
        ("224.0.0.251", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("255.255.255.255", "broadcast"),
        ("240.0.0.1", "reserved"),
    ],
)
def test_a_joiner_refuses_to_dial_what_is_no_peer_address(ip: str, why: str) -> None:
    with pytest.raises(PunchRecordError, match=why):
        check_candidate(Endpoint.parse(ip, 40404), "host")
    with pytest.raises(PunchRecordError, match=why):
        parse_punch_record(["punch", CAIO.raw, [[ip, 40404]]], "host")


@pytest.mark.parametrize(
    "record",
    [
        ["punch", CAIO.raw, []],
        ["punch", CAIO.raw, [["198.51.100.9", 40404 + i] for i in range(MAX_PUNCH_CANDIDATES + 1)]],
        ["punch", CAIO.raw, [["198.51.100.9", 0]]],
        ["punch", CAIO.raw, [["198.51.100.9", 65536]]],
        ["punch", CAIO.raw, [["example.org", 40404]]],
        ["punch", CAIO.raw, [["198.51.100.9", True]]],
        ["punch", CAIO.raw[:31], [["198.51.100.9", 40404]]],
        ["punch", bytes(32), [["198.51.100.9", 40404]]],
        ["punch", CAIO.raw, [["198.51.100.9", 40404]], 1],
        ["ping", -1],
        ["ping", 2**32],
        ["pong", "1"],
        ["seen", ["198.51.100.9"]],
    ],
)
def test_malformed_punch_records_are_refused(record: list[object]) -> None:
    with pytest.raises(PunchRecordError):
        parse_punch_record(record, "host")


def test_a_punch_record_round_trips_and_keeps_its_order() -> None:
    eps = (Endpoint.parse("198.51.100.9", 40404), Endpoint.parse("2001:db8::9", 40404))
    parsed = parse_punch_record(punch_message(CAIO, eps), "host")
    assert parsed == Punch(CAIO, eps)


def test_a_seen_record_may_name_any_address_since_it_is_only_shown() -> None:
    parsed = parse_punch_record(["seen", ["127.0.0.1", 50000]], "host")
    assert getattr(parsed, "address", None) == Endpoint.parse("127.0.0.1", 50000)


def test_observed_addresses_parse_from_link_labels() -> None:
    assert parse_observed("198.51.100.9:40404") == Endpoint.parse("198.51.100.9", 40404)
    assert parse_observed("[2001:db8::9]:40404") == Endpoint.parse("2001:db8::9", 40404)
    assert parse_observed("relay") is None
    assert parse_observed(None) is None


async def test_a_joiner_on_every_interface_dials_the_host_from_its_listening_port() -> None:
    """So the address the host sees is the one to punch to; the host tells the joiner."""
    async with (
        host_table(Identity.generate("ana"), config=FAST) as host,
        join_table(
            Identity.generate("bia"), host.invite, listen_host="0.0.0.0", config=FAST
        ) as bia,
    ):
        with trio.fail_after(10):
            await bia.wait_all_up(2)
            while bia.punches.seen is None:
                await trio.sleep(0.01)
        seen = host.punches.observed[bia.me]
        assert seen.port == bia.listen_port
        assert bia.punches.seen == seen


async def test_a_host_does_not_time_punches_between_joiners_it_sees_at_their_own_addresses(
) -> None:
    """On a LAN (here loopback) the plain dial works: no punch is coordinated."""
    async with (
        host_table(Identity.generate("ana"), config=FAST) as host,
        join_table(Identity.generate("bia"), host.invite, config=FAST) as bia,
        join_table(Identity.generate("caio"), host.invite, config=FAST) as caio,
    ):
        with trio.fail_after(10):
            for mesh in (host, bia, caio):
                await mesh.wait_all_up(3)
        assert host.punches.coordinated == 0
        assert bia.how_linked(caio.me) == caio.how_linked(bia.me) == "direct"


async def test_a_punch_record_for_a_peer_not_seated_is_ignored_and_a_bad_one_closes_the_link(
) -> None:
    async with (
        host_table(Identity.generate("ana"), config=FAST) as host,
        join_table(Identity.generate("bia"), host.invite, config=FAST) as bia,
    ):
        with trio.fail_after(10):
            await bia.wait_all_up(2)
            await host.wait_all_up(2)
        await host.send_control(bia.me, ["punch", CAIO.raw, [["198.51.100.9", 40404]]])
        with trio.fail_after(10):
            while not any("not seated" in r for r in bia.rejections):
                await trio.sleep(0.01)
        assert bia.is_up(host.me)
        await host.send_control(bia.me, ["punch", CAIO.raw, [["224.0.0.251", 5353]]])
        with trio.fail_after(10):
            while not any("multicast" in r for r in bia.rejections):
                await trio.sleep(0.01)


async def test_a_peer_syn_that_reaches_our_listener_between_attempts_is_the_punch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Our attempts share the listening port and close between tries: a SYN from the peer
    landing in that gap is accepted by the listener, and the peer's connect succeeds. That
    stream is the punch on our side too; greeted as a newcomer it would leave both sides
    waiting to answer a handshake. Our own SYNs are lost here, as a router drops them."""

    async def lost(*args: object, **kwargs: object) -> trio.SocketStream:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    monkeypatch.setattr(punching, "simultaneous_open", lost)
    async with (
        host_table(Identity.generate("ana"), config=FAST) as host,
        join_table(Identity.generate("bia"), host.invite, config=FAST) as bia,
    ):
        with trio.fail_after(10):
            await bia.wait_all_up(2)
        assert bia.server is not None and bia.listen_port is not None
        peer = await reusable_socket(socket.AF_INET, 0, "127.0.0.1")
        ep = Endpoint.parse("127.0.0.1", peer.getsockname()[1])
        greeted = bia.server.completed + bia.server.failed + bia.server.pending
        got: list[trio.SocketStream | None] = []

        async def punch() -> None:
            got.append(await bia.punches._first_open((ep,)))

        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(punch)
                await trio.testing.wait_all_tasks_blocked()
                await peer.connect(("127.0.0.1", bia.listen_port))
        stream = got[0]
        assert stream is not None and stream_address(stream) == f"127.0.0.1:{ep.port}"
        assert bia.server.completed + bia.server.failed + bia.server.pending == greeted
        assert bia.punches._awaited == {}
        await stream.send_all(b"x")
        assert await trio.SocketStream(peer).receive_some(1) == b"x"
        await stream.aclose()
        peer.close()
