"""Homes on IPv6 alone, each behind its router's stateful firewall (no NAT), in the namespace
lab (natlab.py; skipped with the reason where namespaces or nftables are unavailable).

The firewall drops every connection from outside that nobody inside asked for, so a plain dial
between two such homes fails; the host's router lets its port in (as a PCP pinhole would) and
the host times a punch for each pair of joiners, which gets through both firewalls. A table
of four homes forms with every link on IPv6, each saying how it was made, and plays a hand to
identical logs."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator

import pytest
import trio
from natlab import (
    Home,
    Lab,
    TableOutcome,
    add_v6_home,
    mesh_table,
    open_pinhole,
    run_in,
    unavailable,
    wait_event,
)

from buraco_p2p.net.reach.candidates import describe_link

REASON = unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")
HOST_PORT = 4464


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[Lab, list[Home]]]:
    with Lab() as made:
        homes = [add_v6_home(made) for _ in range(4)]
        yield made, homes


def _dial(home: Home, target: str, port: int, timeout: float = 1.0) -> str:
    """From inside `home`: "connected", or why not."""

    async def go() -> str:
        family = socket.AF_INET6 if ":" in target else socket.AF_INET
        with trio.socket.socket(family, socket.SOCK_STREAM) as sock:
            try:
                with trio.fail_after(timeout):
                    await sock.connect((target, port))
            except trio.TooSlowError:
                return "timed out"
            except OSError as exc:
                return exc.strerror or str(exc)
        return "connected"

    return str(run_in(home.namespace, go).join(timeout + 10))


def test_the_firewall_drops_unsolicited_ipv6_and_the_homes_have_no_ipv4(
    lab: tuple[Lab, list[Home]],
) -> None:
    _, homes = lab
    inside, outside = homes[2], homes[3]
    listening, stop = threading.Event(), threading.Event()

    async def serve() -> None:
        listeners = await trio.open_tcp_listeners(4600, host="::")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.serve_listeners, trio.SocketStream.aclose, listeners)
            listening.set()
            await wait_event(stop)
            nursery.cancel_scope.cancel()

    server = run_in(inside.namespace, serve)
    try:
        assert listening.wait(20)
        assert _dial(inside, inside.v6_ip, 4600) == "connected"  # the listener is up
        assert _dial(outside, inside.v6_ip, 4600) == "timed out"  # dropped by the firewall
        assert _dial(outside, "198.51.100.2", 3478) == "Network is unreachable"  # no IPv4
        open_pinhole(inside, 4600)
        assert _dial(outside, inside.v6_ip, 4600) == "connected"  # let in on that port only
        assert _dial(outside, inside.v6_ip, 4601) == "timed out"
    finally:
        stop.set()
        server.join(20)


@pytest.fixture(scope="module")
def table(lab: tuple[Lab, list[Home]], tmp_path_factory: pytest.TempPathFactory) -> TableOutcome:
    _, homes = lab
    open_pinhole(homes[0], HOST_PORT)
    return mesh_table(
        homes, host_port=HOST_PORT, listen_host="::", map_host=False, timeout=120,
        hand_dir=tmp_path_factory.mktemp("v6hand"),
    )  # fmt: skip


def test_four_ipv6_homes_punch_every_joiner_pair_and_play_a_hand(table: TableOutcome) -> None:
    for (a, b), how in table.links.items():
        if 1 in (a, b):
            assert how == "direct (IPv6)", (a, b, how)  # the host's pinholed port
        else:
            assert how == "direct (IPv6, punched)", (a, b, how)
    assert len(table.links) == 12
    assert all(n >= 1 for n in table.tries.values()) and len(table.tries) == 3, table.tries
    assert table.received == {i: sorted({1, 2, 3, 4} - {i}) for i in (1, 2, 3, 4)}
    assert len(table.hand_entries) == 4 and len(set(table.hand_entries.values())) == 1
    assert len(set(table.hand_digests.values())) == 1, table.hand_digests


def test_a_link_says_it_is_ipv6_and_whether_it_was_punched() -> None:
    def say(ip: str, punched: bool) -> str:
        remote = ipaddress.ip_address(ip)
        return describe_link(relayed=False, punched=punched, remote=remote, remote_kind=None)

    # 2001:db8::/32 is a documentation prefix, as the lab's: beyond one network all the same
    assert say("2001:db8:2::2", True) == "direct (IPv6, punched)"
    assert say("2001:db8:2::2", False) == "direct (IPv6)"
    assert say("fd00::5", False) == "direct"
