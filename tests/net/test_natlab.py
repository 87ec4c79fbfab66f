"""Behind real NATs: homes in network namespaces with nftables routers (see natlab.py).

Each peer runs in its own home's namespace; a STUN responder of the test's own stands on the
lab's "internet". Cone NATs (`masquerade`) must be punched through and the punched stream must
carry the real handshake; a symmetric NAT (`masquerade fully-random`) must be classified as
such and a punch toward it must fail with a clear error (its links stay on the relay); IPv6
between two homes needs no NAT but still a simultaneous open through routers that drop
unsolicited inbound. Skipped with the reason where namespaces or nftables are unavailable.
"""

from __future__ import annotations

import os
import secrets
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from cli_helpers import kill_leftovers, quit_all, read_until
from natlab import (
    STUN_PORT,
    Home,
    Lab,
    mesh_table,
    portmap_responder,
    punch_all,
    run_in,
    stun_lab,
    unavailable,
    wait_event,
)

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.channel.link import handshake
from buraco_p2p.net.reach.candidates import Candidate, CandidateKind, NatClass
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.net.reach.portmap import PortMapError, hold_mapping, map_port
from buraco_p2p.net.reach.punch import PunchError, simultaneous_open
from buraco_p2p.net.reach.reply import ReplyCode
from buraco_p2p.net.reach.stun import StunError, binding, probe

REASON = unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")
PUNCH_PORT = 40400


@pytest.fixture
def lab() -> Iterator[Lab]:
    with stun_lab() as made:
        yield made


def _punch_pair(
    lab: Lab, a: Home, b: Home, *, v6: bool = False, window: float = 3.0
) -> tuple[object, object]:
    """Probe both sides, swap their reflexive candidates, punch at once, hand-shake."""
    secret, table = secrets.token_bytes(16), secrets.token_bytes(16)
    ids = Identity.generate("a"), Identity.generate("b")
    seen: dict[int, tuple[Endpoint, NatClass]] = {}
    barrier = threading.Barrier(2, timeout=20)

    def side(me: int, home: Home, other: Home) -> object:
        async def go() -> object:
            if v6:
                barrier.wait()
                remote = Endpoint.parse(other.v6_ip, PUNCH_PORT)
            else:
                seen[me] = await probe(PUNCH_PORT, lab.stun_servers())
                barrier.wait()  # both have their reflexive address: the "candidates" swap
                remote = seen[1 - me][0]
            barrier.wait()  # the coordinator's "dial now", heard by both at once
            try:
                stream = await simultaneous_open(PUNCH_PORT, remote, window=window)
            except PunchError as exc:
                return exc
            link = await handshake(
                stream, ids[me], room_secret=secret, table_id=table, initiator=me == 0,
                expected_peer=ids[1 - me].public, timeout=5,
            )
            async with link:
                await link.send({"hello": me})
                return await link.receive()

        return go

    first, second = run_in(a.namespace, side(0, a, b)), run_in(b.namespace, side(1, b, a))
    return first.join(30), second.join(30), seen  # type: ignore[return-value]


def test_stun_sees_the_public_address_of_a_cone_nat(lab: Lab) -> None:
    home = lab.add_home()

    async def go() -> tuple[Endpoint, NatClass]:
        return await probe(PUNCH_PORT, lab.stun_servers())

    mapped, nat = run_in(home.namespace, go).join(30)
    assert mapped == Endpoint.parse(home.public_ip, PUNCH_PORT)
    assert nat is NatClass.INDEPENDENT


def test_a_symmetric_nat_is_classified_random(lab: Lab) -> None:
    home = lab.add_home(symmetric=True)

    async def go() -> tuple[Endpoint, NatClass]:
        return await probe(PUNCH_PORT, lab.stun_servers())

    mapped, nat = run_in(home.namespace, go).join(30)
    assert str(mapped.ip) == home.public_ip
    assert nat is NatClass.RANDOM


def test_a_router_drops_an_unsolicited_connection(lab: Lab) -> None:
    a, b = lab.add_home(), lab.add_home()

    async def listen() -> None:
        listeners = await trio.open_tcp_listeners(PUNCH_PORT, host="0.0.0.0")
        with trio.move_on_after(3):
            await listeners[0].accept()
            raise AssertionError("an unsolicited connection got through the router")

    async def dial() -> str:
        try:
            with trio.fail_after(2):
                await trio.open_tcp_stream(b.public_ip, PUNCH_PORT)
        except (OSError, trio.TooSlowError) as exc:
            return type(exc).__name__
        return "connected"

    listener = run_in(b.namespace, listen)
    assert run_in(a.namespace, dial).join(10) != "connected"
    listener.join(10)


def test_two_cone_nats_punch_a_direct_link_that_carries_the_handshake(lab: Lab) -> None:
    a, b = lab.add_home(), lab.add_home()
    got_a, got_b, seen = _punch_pair(lab, a, b)
    assert got_a == {"hello": 1} and got_b == {"hello": 0}
    assert all(nat is NatClass.INDEPENDENT for _, nat in seen.values())  # type: ignore[attr-defined]


def test_a_symmetric_nat_cannot_be_punched_and_says_so(lab: Lab) -> None:
    a, b = lab.add_home(), lab.add_home(symmetric=True)
    got_a, got_b, _ = _punch_pair(lab, a, b, window=1.5)
    assert isinstance(got_a, PunchError) and isinstance(got_b, PunchError)
    assert "no connection to" in str(got_a)


def test_ipv6_between_two_homes_needs_a_simultaneous_open(lab: Lab) -> None:
    a, b = lab.add_home(), lab.add_home()
    got_a, got_b, _ = _punch_pair(lab, a, b, v6=True)
    assert got_a == {"hello": 1} and got_b == {"hello": 0}


def test_stun_to_nobody_is_a_clear_error(lab: Lab) -> None:
    home = lab.add_home()

    async def go() -> str:
        from buraco_p2p.net.reach.punch import reusable_socket

        with pytest.raises(StunError) as caught:
            await binding(Endpoint.parse("198.51.100.99", STUN_PORT),
                          await reusable_socket(2, 0), timeout=1)
        return str(caught.value)

    assert "198.51.100.99" in run_in(home.namespace, go).join(10)


def test_four_homes_behind_cone_nats_punch_every_link(lab: Lab) -> None:
    homes = [lab.add_home() for _ in range(4)]
    links = punch_all(lab, homes, PUNCH_PORT)
    assert links == {(i, j): "direct" for i in range(1, 5) for j in range(i + 1, 5)}


def test_one_symmetric_nat_leaves_only_its_three_links_unpunched(lab: Lab) -> None:
    homes = [lab.add_home(symmetric=k == 3) for k in range(4)]
    links = punch_all(lab, homes, PUNCH_PORT, window=1.5)
    direct = {pair for pair, how in links.items() if how == "direct"}
    assert direct == {(1, 2), (1, 3), (2, 3)}
    assert all("no connection" in links[(i, 4)] for i in (1, 2, 3))


def test_a_host_behind_a_nat_is_reached_through_a_pasted_reply_code(lab: Lab) -> None:
    """The host's invite carries its reflexive candidate and NAT class; the joiner answers
    with a reply code and dials at once; the host dials when the code is pasted (later)."""
    host_home, joiner_home = lab.add_home(), lab.add_home()
    host_id, joiner_id = Identity.generate("ana"), Identity.generate("bia")
    secret, table = secrets.token_bytes(16), secrets.token_bytes(16)
    invite_box: list[Invite] = []
    reply_box: list[str] = []
    made_invite, pasted = threading.Event(), threading.Event()

    async def host() -> object:
        reflexive, nat = await probe(PUNCH_PORT, lab.stun_servers())
        invite = Invite(
            table, secret, host_id.public.raw,
            (Endpoint.parse(host_home.lan_ip, PUNCH_PORT), reflexive),
            kinds=(CandidateKind.HOST, CandidateKind.REFLEXIVE), nat_class=nat,
        )
        invite_box.append(Invite.from_text(invite.to_text()))
        made_invite.set()
        await wait_event(pasted)
        code = ReplyCode.from_text(reply_box[0], secret, table)
        target = next(c.endpoint for c in code.candidates if c.kind == CandidateKind.REFLEXIVE)
        stream = await simultaneous_open(PUNCH_PORT, target, window=5)
        link = await handshake(stream, host_id, room_secret=secret, table_id=table,
                               initiator=False, timeout=5)
        async with link:
            return (link.peer, await link.receive())

    async def joiner() -> object:
        await wait_event(made_invite)
        invite = invite_box[0]
        assert invite.nat_class == NatClass.INDEPENDENT
        target = invite.addresses[invite.kinds.index(CandidateKind.REFLEXIVE)]
        mine, nat = await probe(PUNCH_PORT, lab.stun_servers())
        code = ReplyCode((Candidate(CandidateKind.REFLEXIVE, mine),), nat)
        reply_box.append(code.to_text(invite.room_secret, invite.table_id))
        async with trio.open_nursery() as nursery:
            result: list[trio.SocketStream] = []

            async def dial() -> None:
                result.append(await simultaneous_open(PUNCH_PORT, target, window=5))

            nursery.start_soon(dial)
            await trio.sleep(0.3)  # the host reads the code some time after it is printed
            pasted.set()
        link = await handshake(result[0], joiner_id, room_secret=invite.room_secret,
                               table_id=invite.table_id, initiator=True,
                               expected_peer=host_id.public, timeout=5)  # fmt: skip
        async with link:
            await link.send({"hello": "from the joiner"})
        return True

    h, j = run_in(host_home.namespace, host), run_in(joiner_home.namespace, joiner)
    assert j.join(30) is True
    peer, message = h.join(30)
    assert peer == joiner_id.public and message == {"hello": "from the joiner"}



def test_the_host_command_with_stun_advertises_its_public_address_and_nat_class(
    lab: Lab, tmp_path: Path
) -> None:
    home = lab.add_home()
    servers = [f"{ep.host}:{ep.port}" for ep in lab.stun_servers()]
    command = [
        "ip", "netns", "exec", home.namespace, sys.executable, "-m", "buraco_p2p", "host",
        "--auto-approve", "--port", "4464", "--nick", "ana", "--config-dir", str(tmp_path),
        "--stun", servers[0], "--stun", servers[1],
    ]  # fmt: skip

    async def run() -> str:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = await trio.lowlevel.open_process(command, stdin=-1, stdout=-1, env=env)
        buf: list[bytes] = []
        try:
            await read_until(proc, buf, b"\nBRC-", 30)
            await read_until(proc, buf, b"\n", 5)
            await quit_all([proc])
        finally:
            await kill_leftovers([proc])
        return b"".join(buf).decode()

    output = trio.run(run)
    assert f"will contact the STUN servers {servers[0]}, {servers[1]}; nothing else" in output
    assert f"public address {home.public_ip}:4464 (from STUN)" in output
    code = next(line for line in output.splitlines() if line.startswith("BRC-"))
    invite = Invite.from_text(code)
    assert invite.nat_class == NatClass.INDEPENDENT
    found = dict(zip(invite.addresses, invite.kinds, strict=True))
    assert found[Endpoint.parse(home.public_ip, 4464)] == CandidateKind.REFLEXIVE
    assert found[Endpoint.parse(home.lan_ip, 4464)] == CandidateKind.HOST
    assert not any(ep.ip.is_loopback for ep in invite.addresses)


@pytest.mark.parametrize("pcp", [True, False], ids=["PCP", "NAT-PMP"])
def test_a_router_that_grants_a_mapping_lets_a_stranger_dial_in(lab: Lab, pcp: bool) -> None:
    home, other = lab.add_home(), lab.add_home()
    stop = threading.Event()
    responder = portmap_responder(home, stop, pcp=pcp)
    listening, mapped_box = threading.Event(), []

    async def host() -> bytes:
        listeners = await trio.open_tcp_listeners(PUNCH_PORT, host="0.0.0.0")
        try:
            mapped_box.append(await map_port(PUNCH_PORT))
        finally:
            listening.set()
        with trio.fail_after(10):
            stream = await listeners[0].accept()
            return await stream.receive_some(100)

    async def stranger() -> None:
        await wait_event(listening)
        if not mapped_box:
            return  # the host's error is reported by its own join()
        ep = mapped_box[0].external
        stream = await trio.open_tcp_stream(ep.host, ep.port)  # no punch: the mapping lets it in
        await stream.send_all(b"knock")

    try:
        h = run_in(home.namespace, host)
        dialer = run_in(other.namespace, stranger)
        assert h.join(20) == b"knock"
        dialer.join(20)
        mapping = mapped_box[0]
        assert mapping.protocol == ("PCP" if pcp else "NAT-PMP")
        assert mapping.external == Endpoint.parse(home.public_ip, PUNCH_PORT)
    finally:
        stop.set()
        responder.join(10)


@pytest.mark.parametrize("pcp", [True, False], ids=["PCP", "NAT-PMP"])
def test_a_held_mapping_is_renewed_at_half_its_lifetime_and_deleted_at_the_end(
    lab: Lab, pcp: bool
) -> None:
    """The clock is injected: the first wait returns at once (the lifetime's half has
    passed), later ones never; no real time passes between the requests."""
    import struct

    home = lab.add_home()
    stop = threading.Event()
    log: list[bytes] = []
    responder = portmap_responder(home, stop, pcp=pcp, log=log)
    waits: list[float] = []

    async def clock(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) > 1:
            await trio.sleep_forever()

    def lifetime(request: bytes) -> int:
        field = request[4:8] if pcp else request[8:12]
        return int(struct.unpack(">I", field)[0])

    def maps() -> list[bytes]:
        opcode = b"\x02\x01" if pcp else b"\x00\x02"
        return [r for r in log if r[:2] == opcode]

    async def go() -> tuple[int, Endpoint]:
        async with hold_mapping(PUNCH_PORT, sleep=clock) as held:
            with trio.fail_after(10):
                while held.renewals < 1:
                    await trio.sleep(0.01)
            renewals, external = held.renewals, held.mapping.external
        with trio.fail_after(10):
            while len(maps()) < 3:
                await trio.sleep(0.01)
        return renewals, external

    try:
        renewals, external = run_in(home.namespace, go).join(30)
    finally:
        stop.set()
        responder.join(10)
    assert renewals == 1
    assert external == Endpoint.parse(home.public_ip, PUNCH_PORT)
    assert waits[0] == 3600  # half of the 7200 s the responder granted
    first, renewal, deletion = maps()
    assert lifetime(first) == lifetime(renewal) == 7200 and lifetime(deletion) == 0
    if pcp:  # the same nonce renews and deletes the same mapping (RFC 6887 section 11.2.1)
        assert first[24:36] == renewal[24:36] == deletion[24:36]
    else:  # a deletion suggests external port 0 (RFC 6886 section 3.4)
        assert deletion[6:8] == b"\x00\x00"


def test_a_held_mapping_asked_again_keeps_its_nonce_and_a_refused_deletion_is_said(
    lab: Lab,
) -> None:
    """Asking the router again (`ask_again`, as a host checking whether its address moved)
    uses the socket and the nonce of the first request (RFC 6887 section 11.1: the nonce is
    the mapping's owner); a router that refuses the deletion anyway is said, with how long it
    keeps the port."""
    home = lab.add_home()
    stop = threading.Event()
    log: list[bytes] = []
    responder = portmap_responder(home, stop, log=log, delete_result=2)
    said: list[str] = []

    async def go() -> None:
        async with hold_mapping(PUNCH_PORT, say=said.append) as held:
            await held.ask_again()
            await held.ask_again()

    try:
        run_in(home.namespace, go).join(30)
    finally:
        stop.set()
        responder.join(10)
    maps = [r for r in log if r[:2] == b"\x02\x01"]
    assert len(maps) == 4  # the mapping, asked twice again, the deletion
    assert len({r[24:36] for r in maps}) == 1, "one nonce for the mapping's life"
    external = Endpoint.parse(home.public_ip, PUNCH_PORT)
    assert said == [f"* the port mapping {external} was not deleted (the router refused the "
                    "deletion of the PCP mapping: NOT_AUTHORIZED (2): it holds the mapping for "
                    "another request (another nonce)); the router keeps it open for up to "
                    "7200 s"], said  # fmt: skip


def test_no_port_mapping_where_nobody_answers(lab: Lab) -> None:
    home = lab.add_home()

    async def go() -> str:
        with pytest.raises(PortMapError, match="did not answer") as caught:
            await map_port(PUNCH_PORT)
        return str(caught.value)

    assert "10.0.1.1" in run_in(home.namespace, go).join(20)


def test_a_joiner_seats_itself_at_a_host_behind_a_nat_through_a_pasted_reply_code(
    lab: Lab, tmp_path: Path
) -> None:
    """The command line end to end: neither side can be dialed; the reply code is the signal."""
    host_home, joiner_home = lab.add_home(), lab.add_home()
    stun = [a for ep in lab.stun_servers() for a in ("--stun", f"{ep.host}:{ep.port}")]

    def command(home: Home, nick: str, *role: str) -> list[str]:
        return ["ip", "netns", "exec", home.namespace, sys.executable, "-m", "buraco_p2p",
                *role, "--nick", nick, "--config-dir", str(tmp_path / nick), *stun]

    async def run() -> tuple[str, str]:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        procs: list[trio.Process] = []
        bufs: list[list[bytes]] = [[], []]
        try:
            host = await trio.lowlevel.open_process(
                command(host_home, "ana", "host", "--auto-approve", "--port", "4464"),
                stdin=-1, stdout=-1, env=env,
            )
            procs.append(host)
            await read_until(host, bufs[0], b"\nBRC-", 30)
            await read_until(host, bufs[0], b"\n", 5)
            invite = next(
                line for line in b"".join(bufs[0]).decode().splitlines() if line.startswith("BRC-")
            )
            joiner = await trio.lowlevel.open_process(
                command(joiner_home, "bia", "join", invite), stdin=-1, stdout=-1, env=env
            )
            procs.append(joiner)
            await read_until(joiner, bufs[1], b"\nBRR-", 30)
            await read_until(joiner, bufs[1], b"\n", 5)
            reply = next(
                line for line in b"".join(bufs[1]).decode().splitlines() if line.startswith("BRR-")
            )
            assert host.stdin is not None
            await host.stdin.send_all(reply.encode() + b"\n")
            await read_until(host, bufs[0], b"dialing", 20)
            await read_until(joiner, bufs[1], b"seated", 40)
            await quit_all(procs)
        finally:
            await kill_leftovers(procs)
        return b"".join(bufs[0]).decode(), b"".join(bufs[1]).decode()

    host_out, joiner_out = trio.run(run)
    assert f"dialing {joiner_home.public_ip}:" in host_out
    assert "give the host this reply code" in joiner_out


def test_four_homes_behind_cone_nats_form_a_table_with_every_link_direct_and_play_a_hand(
    lab: Lab, tmp_path: Path
) -> None:
    """The host's router maps its port; the joiners have no STUN and no mapping: the host
    tells each where it sees it and times their punches, so no link stays on the relay.
    Then four bots play a hand of the classic rules over those links."""
    homes = [lab.add_home() for _ in range(4)]
    # A punch that misses (a busy machine) is timed again while the pair is relayed.
    table = mesh_table(homes, hand_dir=tmp_path, timeout=240, direct_wait=30.0)
    joiners = (2, 3, 4)
    for a in range(1, 5):
        for b in range(1, 5):
            if a == b:
                continue
            how = table.links[(a, b)]
            if a in joiners and b in joiners:
                assert how == "direct (punched)", (a, b, how)
            else:
                assert how in ("direct", "mapped"), (a, b, how)
    assert table.links[(2, 1)] == "mapped"  # a joiner reaches the host through its mapping
    assert table.received == {i: [j for j in range(1, 5) if j != i] for i in range(1, 5)}
    entries = set(table.hand_entries.values())
    assert len(table.hand_entries) == 4 and len(entries) == 1 and entries.pop() > 10
    assert len(set(table.hand_digests.values())) == 1  # every home holds the same log


def test_a_symmetric_home_keeps_its_joiner_links_on_the_relay_and_the_table_plays(
    lab: Lab,
) -> None:
    homes = [lab.add_home(symmetric=k == 3) for k in range(4)]
    table = mesh_table(homes, direct_wait=8.0)
    assert table.links[(2, 3)] == table.links[(3, 2)] == "direct (punched)"
    for other in (2, 3):
        assert table.links[(4, other)] == table.links[(other, 4)] == "relayed by the host"
        # The host keeps trying, with its backoff, while the pair's relay carries traffic
        # (heartbeats at least), not only when the relayed channel opens.
        assert table.tries[frozenset((4, other))] >= 3, table.tries
    assert table.links[(4, 1)] == "mapped"
    assert table.relayed_chunks > 0
    assert table.received == {i: [j for j in range(1, 5) if j != i] for i in range(1, 5)}


def test_the_lab_leaves_no_thread_in_its_namespaces() -> None:
    """Runs after the lab's tests (file order): a thread still inside a lab namespace would
    later serve another test's blocking call there (see natlab.wait_event)."""
    mine = os.readlink("/proc/thread-self/ns/net")
    strays = [
        tid
        for tid in os.listdir("/proc/self/task")
        if os.readlink(f"/proc/self/task/{tid}/ns/net") != mine
    ]
    assert strays == []
