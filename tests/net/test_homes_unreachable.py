"""A joiner that cannot reach the host says, after its first minute and only once, why (the
host's NAT class, its own, what was tried), what would help (naming the flag), and goes on
trying without a line per attempt; a host with seats still empty after its first minute says
which, what it knows of why (its NAT class and mappings, the reply codes pasted) and what would
help: a joiner that never reached it is unknown to it. The words for each kind of invite, and
the real `host` and `join` in two homes of the namespace lab (natlab.py; skipped with the
reason where namespaces or nftables are unavailable), with the first minute shortened by
`$BURACO_P2P_ADVICE_AFTER`."""

from __future__ import annotations

import functools
import re
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from cli_helpers import ENV, kill_leftovers, line_starting, read_until
from natlab import Home, Lab, buraco_command, stun_lab, unavailable

from buraco_p2p.net.mesh.wayout import (
    ADVICE_ENV,
    PastedCode,
    empty_seats_words,
    host_reach_note,
    unreachable_advice,
)
from buraco_p2p.net.reach.candidates import CandidateKind, NatClass
from buraco_p2p.net.reach.invite import Endpoint, Invite

REASON = unavailable()
LAN = Endpoint.parse("10.0.1.2", 4510)
PUBLIC = Endpoint.parse("203.0.113.7", 4510)
V6 = Endpoint.parse("2001:db8:1::2", 4510)
SHARED = Endpoint.parse("100.64.7.9", 4510)  # a provider's carrier-grade NAT (RFC 6598)
# The first minute, shortened so a cell takes seconds.
FIRST_MINUTE = 4.0
# A host whose player pastes a reply code: its first minute ends after the paste, which comes
# once the joiner (a process started after the host printed its invite) has asked STUN and
# printed its code: 11-17 s after the host started, beside two CPU hogs. Its advice at 30 s
# still falls inside the code's 30 s punching window, whenever the paste came, so what it
# says of the code is "punching".
PASTED_FIRST_MINUTE = 30.0


def _invite(*candidates: tuple[Endpoint, CandidateKind], nat: NatClass = NatClass.UNKNOWN
            ) -> Invite:  # fmt: skip
    return Invite(
        secrets.token_bytes(16), secrets.token_bytes(16), secrets.token_bytes(32),
        tuple(ep for ep, _ in candidates), kinds=tuple(int(k) for _, k in candidates),
        nat_class=int(nat),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("candidates", "nat", "reply", "says", "helps"),
    [
        (((LAN, CandidateKind.HOST),), NatClass.UNKNOWN, False,
         "only addresses inside the host's own network (10.0.1.2:4510)",
         "a port mapping on the host's router"),
        (((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.MAPPED)), NatClass.UNKNOWN, False,
         "the port the host's router maps", "ask the host whether its table still runs"),
        (((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.REFLEXIVE)), NatClass.INDEPENDENT,
         False, "join with --stun IP:PORT to get a reply code",
         "a reply code (join again with --stun IP:PORT"),
        (((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.REFLEXIVE)), NatClass.INDEPENDENT,
         True, "give the host the reply code printed above", "the host pasting the reply code"),
        (((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.REFLEXIVE)), NatClass.RANDOM,
         False, "gives every destination a new port", "a port mapping on the host's router"),
        (((PUBLIC, CandidateKind.HOST),), NatClass.UNKNOWN, False, "a firewall",
         "through its router's firewall"),
        (((V6, CandidateKind.HOST),), NatClass.UNKNOWN, False,
         "nothing answers at [2001:db8:1::2]:4510", "IPv6 needs no mapping"),
        (((SHARED, CandidateKind.HOST),), NatClass.UNKNOWN, False,
         "shared space of the host's provider", "a TURN relay both of you name"),
    ],
    ids=["lan-only", "mapped", "reflexive", "reflexive-code", "symmetric", "public", "ipv6",
         "shared"],
)  # fmt: skip
def test_a_joiner_is_told_why_and_what_would_help(
    candidates: tuple[tuple[Endpoint, CandidateKind], ...], nat: NatClass, reply: bool,
    says: str, helps: str,
) -> None:  # fmt: skip
    why, nats, tried, help_, going_on = unreachable_advice(
        _invite(*candidates, nat=nat), reply_code=reply, error="cannot reach the host: ..."
    )
    assert says in why, why
    assert nats.startswith("*   the host's NAT: ") and "yours: not known" in nats, nats
    assert tried.startswith("*   tried: ") and str(candidates[0][0]) in tried, tried
    assert helps in help_ and "--turn USER:PASSWORD@IP:PORT" in help_, help_
    if nat == NatClass.RANDOM or candidates[0][0] in (PUBLIC, V6, SHARED):
        assert "reply code" not in help_, help_  # no punch can help there
    assert "still trying" in going_on


def test_the_host_is_told_when_its_invite_stays_inside_its_network() -> None:
    note = host_reach_note(_invite((LAN, CandidateKind.HOST)))
    assert note is not None and "players elsewhere cannot reach you" in note
    assert host_reach_note(_invite((LAN, CandidateKind.HOST), (PUBLIC, CandidateKind.MAPPED))) \
        is None  # fmt: skip
    # A provider's shared space (RFC 6598) is neither inside the network nor public.
    shared = host_reach_note(_invite((LAN, CandidateKind.HOST), (SHARED, CandidateKind.REFLEXIVE)))
    assert shared is not None and "inside your network" not in shared, shared
    assert "shared address space" in shared and "--turn" in shared, shared



def test_the_host_says_which_seats_are_empty_and_what_it_knows() -> None:
    from buraco_p2p.net.channel.identity import Identity
    from buraco_p2p.net.table.table import Member, Roster

    me = Identity.generate("ana").public
    roster = Roster(secrets.token_bytes(16), 1, (Member(0, me, "ana", ()),), seats=3)
    kinds = {LAN: CandidateKind.HOST, PUBLIC: CandidateKind.REFLEXIVE}
    pasted = [PastedCode("BRR-ABCDEFGHIJKLMN", "no connection within 30 s")]
    lines = empty_seats_words(roster, kinds, NatClass.RANDOM, pasted)
    assert lines[0].startswith("* seats 2, 3 of 3 still empty after a minute"), lines
    assert "a symmetric NAT" in lines[1] and str(PUBLIC) in lines[1], lines
    assert "BRR-ABCDEF...: no connection within 30 s" in lines[2], lines
    assert "--internet" in lines[3] and "--turn USER:PASSWORD@IP:PORT" in lines[3], lines
    mapped = {LAN: CandidateKind.HOST, PUBLIC: CandidateKind.MAPPED}
    assert "a joiner anywhere can dial it" in empty_seats_words(
        roster, mapped, NatClass.UNKNOWN, []
    )[1]
    v6 = empty_seats_words(roster, {LAN: CandidateKind.HOST, V6: CandidateKind.HOST},
                           NatClass.UNKNOWN, [])  # fmt: skip
    assert "your IPv6 address 2001:db8:1::2 is global" in v6[1], v6
    assert "letting port 4510 in (IPv6 needs no mapping" in v6[3], v6
    full = Roster(roster.table_id, 2, (Member(0, me, "ana", ()),), seats=1)
    assert empty_seats_words(full, kinds, NatClass.RANDOM, pasted) == []


def _syn_counter(home: Home, host_ip: str) -> None:
    """Count on `home`'s router every connection attempt from inside to `host_ip`."""
    subprocess.run(
        ["ip", "netns", "exec", home.router, "nft", "insert", "rule", "inet", "guard",
         "pass_through", "iifname", "lan", "ip", "daddr", host_ip, "tcp", "flags", "syn",
         "counter"], check=True, capture_output=True,
    )  # fmt: skip


def _syns(home: Home) -> int:
    listed = subprocess.run(
        ["ip", "netns", "exec", home.router, "nft", "list", "chain", "inet", "guard",
         "pass_through"], check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    found = re.search(r"tcp flags syn counter packets (\d+)", listed)
    assert found is not None, listed
    return int(found.group(1))


class Cell:
    """What a host and a joiner in two homes printed, around the joiner's advice."""

    def __init__(self) -> None:
        self.host = ""
        self.joiner = ""
        self.syns_after_advice = 0
        self.pasted_after_s = 0.0  # from the host's start to the paste


async def _run_cell(
    lab: Lab, host: Home, joiner: Home, port: int, tmp: Path, cell: Cell, *, paste: bool = False
) -> None:
    """With `paste`, the joiner names one STUN server (its NAT class unknown, so it prints a
    reply code) and the host's player pastes its code."""
    env = {**ENV, ADVICE_ENV: str(FIRST_MINUTE)}
    host_env = {**ENV, ADVICE_ENV: str(PASTED_FIRST_MINUTE if paste else FIRST_MINUTE)}
    stun = [a for ep in lab.stun_servers() for a in ("--stun", f"{ep.host}:{ep.port}")]
    hcmd = buraco_command(host.namespace, tmp / "ana", "host", "--nick", "ana",
                          "--port", str(port), *stun)  # fmt: skip
    hproc = await trio.lowlevel.open_process(hcmd, stdin=-1, stdout=-1, env=host_env)
    started = trio.current_time()
    jproc: trio.Process | None = None
    hout: list[bytes] = []
    jout: list[bytes] = []
    try:
        code = await line_starting(hproc, hout, "BRC-", 60)
        _syn_counter(joiner, host.public_ip)
        jcmd = buraco_command(joiner.namespace, tmp / "bia", "join", code, "--nick", "bia",
                              *(stun[:2] if paste else stun))  # fmt: skip
        jproc = await trio.lowlevel.open_process(jcmd, stdin=-1, stdout=-1, env=env)
        if paste:
            reply = await line_starting(jproc, jout, "BRR-", 30)
            assert hproc.stdin is not None
            await hproc.stdin.send_all(reply.encode() + b"\n")
            cell.pasted_after_s = trio.current_time() - started
        await read_until(jproc, jout, b"still trying", 90)
        await read_until(hproc, hout, b"what would help", 60)
        await read_until(hproc, hout, b"\n", 10)
        # It goes on trying, without a word: attempts after the advice reach its router.
        before = _syns(joiner)
        with trio.fail_after(60):
            while _syns(joiner) <= before:
                await trio.sleep(0.2)
        cell.syns_after_advice = _syns(joiner) - before
        assert jproc.stdout is not None
        with trio.move_on_after(1):
            while True:  # whatever it printed meanwhile
                got = await jproc.stdout.receive_some(65536)
                if not got:
                    break
                jout.append(got)
        assert jproc.returncode is None, "the joiner gave up"
    finally:
        await kill_leftovers([p for p in (hproc, jproc) if p is not None])
        cell.host, cell.joiner = b"".join(hout).decode(), b"".join(jout).decode()


@pytest.fixture(scope="module")
def cells(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Cell]]:
    """Three cells at once in one lab: a host behind a symmetric NAT with a joiner behind a
    cone NAT, and twice a host behind a cone NAT with a joiner behind a symmetric one (the
    second time the joiner names one STUN server only, so it does not know its class and
    prints a reply code, which the host's player pastes); nobody has a port mapping."""
    if REASON is not None:
        pytest.skip(REASON)
    tmp = tmp_path_factory.mktemp("unreachable")
    with stun_lab() as lab:
        homes = [lab.add_home(symmetric=s) for s in (True, False, False, True, False, True)]
        found = {"symmetric host": Cell(), "symmetric joiner": Cell(), "pasted": Cell()}

        async def both() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_run_cell, lab, homes[0], homes[1], 4510, tmp / "a",
                                   found["symmetric host"])  # fmt: skip
                nursery.start_soon(_run_cell, lab, homes[2], homes[3], 4511, tmp / "b",
                                   found["symmetric joiner"])  # fmt: skip
                nursery.start_soon(functools.partial(
                    _run_cell, lab, homes[4], homes[5], 4512, tmp / "c", found["pasted"],
                    paste=True,
                ))  # fmt: skip

        trio.run(both)
        yield found


def _after_advice_is_silent(cell: Cell) -> None:
    # Each failure in full once, a repeated one in short, and after the advice nothing.
    assert cell.joiner.count("* cannot reach the host: ") <= 1, cell.joiner
    if cell.joiner.count("trying again in") > 1:
        assert "* still no answer from the host; trying again in" in cell.joiner, cell.joiner
    assert cell.joiner.count("has not answered for a minute") == 1, cell.joiner
    assert cell.joiner.count("what would help") == 1, cell.joiner
    last = cell.joiner.index("\n", cell.joiner.index("still trying")) + 1
    assert cell.joiner[last:] == "", cell.joiner[last:]  # nothing after the advice
    assert cell.syns_after_advice > 0


def test_a_joiner_facing_a_symmetric_host_is_told_why_once_and_keeps_trying(
    cells: dict[str, Cell],
) -> None:
    cell = cells["symmetric host"]
    out = cell.joiner
    assert "the host is behind a NAT (198.51.100.11:" in out, out
    assert "nobody outside its network can reach it" in out, out
    assert "the host's NAT: a symmetric NAT" in out, out
    assert "yours: an endpoint-independent NAT" in out, out
    tried = next(x for x in out.splitlines() if x.startswith("*   tried: "))
    assert "10.0.1.2:4510 (inside the host's network" in tried, tried
    assert "[2001:db8:1::2]:4510 (the host's IPv6 address" in tried, tried
    assert "198.51.100.11:" in tried and "the host's public address from STUN" in tried, tried
    helps = next(x for x in out.splitlines() if x.startswith("* what would help"))
    assert "port mapping on the host's router" in helps and "--turn USER:PASSWORD@" in helps
    assert "reply code" not in helps, helps  # a punch cannot reach a symmetric NAT
    _after_advice_is_silent(cell)


def test_a_symmetric_host_says_which_seats_are_empty_and_what_would_help(
    cells: dict[str, Cell],
) -> None:
    out = cells["symmetric host"].host
    assert out.count("still empty after a minute") == 1, out
    assert "* seats 2, 3, 4 of 4 still empty after a minute" in out, out
    assert "your NAT: a symmetric NAT" in out and "(from STUN) has no port mapping" in out, out
    assert "reply codes pasted: none" in out, out
    helps = next(x for x in out.splitlines() if x.startswith("*   what would help"))
    assert "--internet" in helps and "--turn USER:PASSWORD@IP:PORT" in helps, helps


def test_a_symmetric_joiner_is_told_why_once_and_keeps_trying(cells: dict[str, Cell]) -> None:
    cell = cells["symmetric joiner"]
    out = cell.joiner
    assert out.count("no punch can get through, so no reply code") == 1, out  # not per attempt
    assert "BRR-" not in out, out
    assert "your NAT gives every destination a new port" in out, out
    assert "the host's NAT: an endpoint-independent NAT" in out, out
    assert "yours: a symmetric NAT" in out, out
    helps = next(x for x in out.splitlines() if x.startswith("* what would help"))
    assert "port mapping on the host's router" in helps and "--turn USER:PASSWORD@" in helps
    _after_advice_is_silent(cell)


def test_a_cone_host_says_a_reply_code_would_let_a_joiner_in(cells: dict[str, Cell]) -> None:
    out = cells["symmetric joiner"].host
    assert out.count("still empty after a minute") == 1, out
    assert "your NAT: an endpoint-independent NAT" in out, out
    assert "reply codes pasted: none" in out, out
    helps = next(x for x in out.splitlines() if x.startswith("*   what would help"))
    assert "paste it here" in helps and "--turn USER:PASSWORD@IP:PORT" in helps, helps


def test_a_host_says_what_became_of_a_pasted_reply_code(cells: dict[str, Cell]) -> None:
    cell = cells["pasted"]
    assert "give the host this reply code to paste" in cell.joiner, cell.joiner
    # (the host's first minute in this cell is long enough for the paste to come first)
    assert cell.pasted_after_s < PASTED_FIRST_MINUTE, cell.pasted_after_s
    out = cell.host
    assert "* dialing 198.51.100.16:" in out, out  # the host punches to the joiner's address
    pasted = next(x for x in out.splitlines() if x.startswith("*   reply codes pasted: "))
    assert re.search(r"BRR-\S+\.\.\. \(the joiner's NAT: not known", pasted), pasted
    assert pasted.endswith(": punching"), pasted  # its 30 s window is still open
    # The joiner printed a reply code: its advice says to give it to the host; its first
    # attempt, a punch, is still under way.
    assert "give the host the reply code printed above to paste" in cell.joiner, cell.joiner
    assert "*   tried (the first attempt is still under way): " in cell.joiner, cell.joiner
    _after_advice_is_silent(cell)
