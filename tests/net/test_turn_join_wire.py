"""The kinds beside a joiner's addresses (docs/protocol.md 2.6): one encoding, every field
checked, and the host passes a joiner's kinds on in its roster entry."""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
import trio
from mesh_helpers import FAST, raw_link

from buraco_p2p.net.channel.errors import LinkError
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.startup import host_table
from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.table.table import (
    HELLO_JOIN,
    HostTable,
    Member,
    Roster,
    TableError,
    join_message,
    kinds_for,
    parse_greeting,
    parse_welcome,
)

LAN = Endpoint.parse("192.168.1.20", 47100)
TURNED = Endpoint.parse("198.51.100.4", 49152)
HOST, RELAYED = CandidateKind.HOST, CandidateKind.RELAYED


def test_a_greeting_names_kinds_only_when_one_is_not_zero() -> None:
    assert join_message((LAN,), (HOST,)) == ["join", {"addrs": [["192.168.1.20", 47100]]}]
    with_relay = join_message((LAN, TURNED), (HOST, RELAYED))
    assert with_relay[1]["kinds"] == [0, 3]
    greeting = parse_greeting(with_relay, "bia")
    assert greeting.kind == HELLO_JOIN and greeting.kinds == (HOST, RELAYED)
    # A greeting without kinds (an older writer's) is all kind 0.
    old = parse_greeting(["join", {"addrs": [["192.168.1.20", 47100]]}], "bia")
    assert old.addresses == (LAN,) and old.kinds == ()


def test_a_member_record_keeps_one_form_for_one_meaning() -> None:
    key = Identity.generate("bia").public
    plain = Member(1, key, "bia", (LAN,), (HOST,))
    assert plain.kinds == () and plain == Member(1, key, "bia", (LAN,))
    assert "kinds" not in plain.to_wire()
    relayed = Member(1, key, "bia", (LAN, TURNED), (HOST, RELAYED))
    assert relayed.to_wire()["kinds"] == [0, 3] and relayed.relayed() == (TURNED,)
    host = Member(0, Identity.generate("ana").public, "ana", ())
    roster = Roster(bytes(16), 2, (host, relayed))
    assert Roster.from_wire(roster.to_wire(), "ana") == roster
    with pytest.raises(ValueError):
        Member(1, key, "bia", (LAN, TURNED), (RELAYED,))


def test_the_host_table_replaces_kinds_with_the_addresses() -> None:
    ana, bia = Identity.generate("ana").public, Identity.generate("bia").public
    table = HostTable(bytes(16), Member(0, ana, "ana", ()))
    seated = table.seat_new(bia, "bia", (LAN, TURNED), (HOST, RELAYED)).member
    assert seated is not None and seated.relayed() == (TURNED,)
    back = table.readmit(bia, "bia", (LAN,)).member
    assert back is not None and back.kinds == () and back.relayed() == ()


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ({"addrs": [["198.51.100.4", 49152]], "kinds": 3}, "one kind per address"),
        ({"addrs": [["198.51.100.4", 49152]], "kinds": [3, 0]}, "one kind per address"),
        ({"addrs": [["198.51.100.4", 49152]], "kinds": [-1]}, "unknown candidate kind"),
        ({"addrs": [["198.51.100.4", 49152]], "kinds": [3.0]}, "unknown candidate kind"),
        ({"addrs": [["198.51.100.4", 49152]], "kinds": [False]}, "unknown candidate kind"),
        ({"addrs": [], "kinds": []}, "only 0"),
        ({"addrs": [["10.1.2.3", 4000]], "kinds": [3]}, "no TURN server lends"),
        ({"addrs": [["172.16.0.1", 4000]], "kinds": [3]}, "no TURN server lends"),
        ({"addrs": [["255.255.255.255", 4000]], "kinds": [3]}, "no TURN server lends"),
        ({"addrs": [["fd00::1", 4000]], "kinds": [3]}, "no TURN server lends"),
        ({"addrs": [["ff02::1", 4000]], "kinds": [3]}, "no TURN server lends"),
        ({"addrs": [["64:ff9b::c633:6404", 4000]], "kinds": [3]}, "no TURN server lends"),
        ({"addrs": [["198.51.100.4", 1], ["2001:db8::4", 2]], "kinds": [3, 3]}, "more than 1"),
        ({"addrs": [], "kinds": [], "nick": "eve"}, "without a valid join"),
    ],
)
def test_bad_kinds_are_a_typed_error_naming_the_peer(body: dict[str, Any], why: str) -> None:
    with pytest.raises(TableError, match="eve") as caught:
        parse_greeting(["join", body], "eve")
    assert why in str(caught.value)


async def _wait_rejection(rejections: deque[str], needle: str) -> str:
    with trio.fail_after(10):
        while True:
            for text in list(rejections):
                if needle in text:
                    return text
            await trio.sleep(0.01)


async def test_the_host_seats_a_relayed_candidate_and_refuses_a_relayed_lan() -> None:
    async with host_table(Identity.generate("ana"), config=FAST) as host:
        invite = host.invite
        # A joiner whose greeting lists a TURN server's address: seated, and the roster the
        # host sends carries its kinds. Nobody dials that address here (two peers: the host
        # never dials a joiner), so no packet leaves the loopback.
        cleo = Identity.generate("cleo")
        link = await raw_link(invite, cleo, invite.addresses[0], host.me)
        await link.send(join_message((LAN, TURNED), (HOST, RELAYED)))
        with trio.fail_after(10):
            answer = await link.receive()
        roster, _ = parse_welcome(answer, "ana", cleo.public, invite.table_id)
        mine = roster.member(cleo.public)
        assert mine is not None and mine.kinds == (HOST, RELAYED)
        assert host.roster is not None and host.roster.member(cleo.public) == mine
        # A hostile greeting: a relayed address inside a LAN. The host names the peer, closes
        # its link, seats nobody; the table goes on.
        eve = await raw_link(invite, Identity.generate("eve"), invite.addresses[0], host.me)
        await eve.send(["join", {"addrs": [["192.168.1.1", 80]], "kinds": [3]}])
        text = await _wait_rejection(host.rejections, "eve")
        assert "relayed address" in text, text
        with trio.fail_after(10), pytest.raises(LinkError):
            await eve.receive()
        assert len(host.roster.members) == 2
        # Still seating: a joiner with own-interface addresses only (no kinds sent).
        duda = Identity.generate("duda")
        other = await raw_link(invite, duda, invite.addresses[0], host.me)
        await other.send(join_message(()))
        with trio.fail_after(10):
            welcome = await other.receive()
        roster, _ = parse_welcome(welcome, "ana", duda.public, invite.table_id)
        assert [m.key for m in roster.members][1:] == [cleo.public, duda.public]
        await other.aclose()
        await link.aclose()


def test_a_writer_never_sends_kinds_its_reader_refuses() -> None:
    # A TURN server on the peer's own machine or network (a loopback test, a LAN server)
    # lends an address no reader takes as relayed: it is written as an ordinary address.
    loop = Endpoint.parse("127.0.0.1", 41752)
    assert kinds_for((LAN, loop), {loop: RELAYED}) == ()
    second = Endpoint.parse("198.51.100.5", 49152)
    kinds = kinds_for((TURNED, second), {TURNED: RELAYED, second: RELAYED})
    assert kinds == (RELAYED, HOST)
    greeting = parse_greeting(join_message((TURNED, second), kinds), "bia")
    assert greeting.addresses == (second, TURNED)  # the relayed address goes last
    assert greeting.kinds == (HOST, RELAYED)
    # A TURN server inside a provider's carrier-grade NAT lends an address of the shared
    # space (RFC 6598): relayed as any public one, not written down to an ordinary address.
    shared = Endpoint.parse("100.64.0.4", 49152)
    assert kinds_for((LAN, shared), {shared: RELAYED}) == (HOST, RELAYED)
    assert parse_greeting(join_message((LAN, shared), (HOST, RELAYED)), "bia").kinds == (
        HOST, RELAYED)


def test_a_joiner_permits_only_the_seated_members_public_ips() -> None:
    from buraco_p2p.net.mesh.seating import seated_ips

    ana, bia, me = (Identity.generate(n).public for n in ("ana", "bia", "cleo"))
    public = Endpoint.parse("203.0.113.7", 4464)
    roster = Roster(bytes(16), 3, (
        Member(0, ana, "ana", (LAN, public), (HOST, CandidateKind.MAPPED)),
        Member(1, bia, "bia", (Endpoint.parse("10.0.0.2", 4470), TURNED), (HOST, RELAYED)),
        Member(2, me, "cleo", (Endpoint.parse("198.51.100.77", 4470),)),
    ))  # fmt: skip
    # Never a LAN address, never a TURN server's relayed address, never our own.
    assert seated_ips(roster, me) == [public.ip]
