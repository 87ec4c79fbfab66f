"""A host's router renumbers mid-hand, and the table finds itself again without a server.

Three homes of the namespace lab (natlab.py), one seat each, play one hand of bots over the
real mesh. Mid-hand the host's router restarts with a new public address (`natlab.renumber`:
address changed, its mappings and its connection tracking flushed), every link through it
dies, and nobody restarts:

(a) the host's router maps ports (the lab's PCP responder grants the new address). The
    host asks again, signs a `moved` record and dials the joiner whose router maps its port
    too; that joiner passes the record on to the other joiner (no mapping), which checks the
    host's signature and dials the host's new mapped address. Nobody pastes anything.
(b) the host is behind a cone NAT with no mapping (joined through reply codes). STUN tells
    the host its new address; it prints a re-join code, the test pastes it into each
    joiner (`Moves.accept_code`, what the line client does with a `BRJ-` line) and the two
    ends punch.

Either way the hand ends with identical logs on every seat, and they verify. Skipped with the
reason where namespaces or nftables are unavailable.
"""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio
from natlab import (
    Home,
    Lab,
    portmap_responder,
    renumber,
    run_in,
    stun_responder,
    unavailable,
    wait_event,
)

from buraco_p2p.audit import verify_bytes
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.mesh import Mesh, MeshConfig
from buraco_p2p.net.mesh.moving import keep_address, mapping_probe, stun_probe
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.candidates import CandidateKind, NatClass
from buraco_p2p.net.reach.invite import Endpoint, Invite

REASON = unavailable()
pytestmark = [pytest.mark.netns, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

# Small timeouts: a dead link is noticed in 2 s, a punch window is 3 s.
CONFIG = MeshConfig(
    heartbeat_interval=0.5, heartbeat_timeout=2.0, direct_timeout=2.0, punch_window=3.0,
    redial_max=1.0,
)  # fmt: skip
FOLLOWED = "another seat failed"
RENUMBER_AT = 24  # log entries before the router restarts (the deal is under way)


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[Lab, list[Home]]]:
    with Lab() as made:
        stop = threading.Event()
        stun = stun_responder(made, stop)
        try:
            yield made, [made.add_home() for _ in range(3)]
        finally:
            stop.set()
            stun.join(10)


@dataclass
class Run:
    """What each seat saw: its log of the first hand, its moves, the codes printed."""

    wires: dict[int, list[bytes]] = field(default_factory=dict)
    reached: threading.Event = field(default_factory=threading.Event)
    rejoin_codes: list[str] = field(default_factory=list)
    rejoin_ready: threading.Event = field(default_factory=threading.Event)
    reply_codes: list[str] = field(default_factory=list)
    moved_serial: dict[int, int] = field(default_factory=dict)
    host_addresses: dict[int, tuple[Endpoint, ...]] = field(default_factory=dict)
    back_s: float = 0.0


class _Countdown:
    def __init__(self, count: int, failed: threading.Event) -> None:
        self.count, self.lock, self.event = count, threading.Lock(), threading.Event()
        self.failed = failed

    async def wait(self) -> None:
        """Until every seat is done; a seat that failed ends the others' wait (and test)."""
        while not self.event.is_set():
            if self.failed.is_set():
                raise AssertionError(FOLLOWED)
            await trio.sleep(0.01)

    def done(self) -> None:
        with self.lock:
            self.count -= 1
            if self.count <= 0:
                self.event.set()


def _play(
    homes: list[Home], root: Path, lab: Lab, *, mapped_host: bool, mapped_joiner: bool,
    new_ip: str, port: int,
) -> Run:
    """A table of `homes` (host first) that plays one hand of bots while the host's router
    renumbers to `new_ip`; returns what every seat saw."""
    from buraco_p2p.bots import make_bot
    from buraco_p2p.net.mesh.internet import answer_reply_code, prepare_reply_code
    from buraco_p2p.net.reach.portmap import hold_mapping, map_port
    from buraco_p2p.play.botpeer import cut_after_hands
    from buraco_p2p.play.node import start_on_mesh
    from buraco_p2p.rules import get_preset

    run = Run()
    ids = {h.index: Identity.generate(f"p{h.index}") for h in homes}
    stun = lab.stun_servers()
    invite_box: list[Invite] = []
    invite_ready = threading.Event()
    failed = threading.Event()
    handed, settled = _Countdown(len(homes), failed), _Countdown(len(homes), failed)
    linked = _Countdown(len(homes), failed)
    rules = get_preset("classic").with_overrides({"players": len(homes)})
    bot = make_bot("heuristic")
    lock = threading.Lock()

    def choose(peer: Any, rng: Any) -> Any:
        return bot.choose_move(peer.table.view, rng)

    async def hand(me: int, mesh: Mesh) -> None:
        try:
            await seat(me, mesh)
        except BaseException:
            failed.set()
            raise

    async def seat(me: int, mesh: Mesh) -> None:
        await mesh.wait_all_up(len(homes))
        # The joiners punch to each other (the host times it); the way back uses that link.
        await _until(lambda: not any(mesh.is_relayed(k) or not mesh.is_up(k)
                                     for k in mesh.peers()), 30, failed)  # fmt: skip
        linked.done()
        await linked.wait()
        async with start_on_mesh(
            mesh, ids[me], root / f"p{me}", rules=rules if mesh.is_host else None,
            choose=choose,
        ) as driver:  # fmt: skip
            if mesh.is_host:
                await driver.wait_until(lambda p: len(p.log) >= RENUMBER_AT)
                run.reached.set()
            if not await _until(lambda: cut_after_hands(driver.peer, 1) is not None, 60, failed):
                stopped = f"the hand stopped at {len(driver.peer.log)}"
                raise AssertionError(_stuck(me, mesh, stopped))
            with lock:
                run.wires[me] = cut_after_hands(driver.peer, 1) or []
                if mesh.moves.latest is not None:
                    run.moved_serial[me] = mesh.moves.latest.serial
                run.host_addresses[me] = mesh.moves.host_addresses
            handed.done()
            await handed.wait()
        # Every link comes back, a joiner's to the host at its new address: the entries may
        # have gone round a dead link through another party meanwhile.
        if not await _until(lambda: all(mesh.is_up(k) for k in mesh.peers()) and (
            mesh.is_host or _host_link_at(mesh, new_ip)
        ), 30, failed):  # fmt: skip
            raise AssertionError(_stuck(me, mesh, "a link did not come back"))
        settled.done()
        await settled.wait()
        await trio.sleep(0.3)  # the last acks

    def host(home: Home) -> Callable[[], Awaitable[None]]:
        async def go() -> None:
            async with contextlib.AsyncExitStack() as stack, host_table(
                ids[home.index], listen_host="0.0.0.0", port=port, seats=len(homes),
                config=CONFIG,
            ) as mesh:  # fmt: skip
                if mapped_host:
                    held = await stack.enter_async_context(hold_mapping(port))
                    mesh.advertise_also(held.mapping.external, CandidateKind.MAPPED)
                    probe = mapping_probe(held)
                else:
                    found = await stun_probe(port, stun[0])()
                    mesh.advertise_also(found[0].endpoint, CandidateKind.REFLEXIVE)
                    mesh.nat_class = NatClass.INDEPENDENT
                    probe = stun_probe(port, stun[0])

                def announce(code: str) -> None:
                    run.rejoin_codes.append(code)
                    run.rejoin_ready.set()

                mesh.moves.announce = announce
                invite_box.append(mesh.invite)
                invite_ready.set()
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(keep_address, mesh, probe)
                    if not mapped_host:
                        nursery.start_soon(answer_codes, mesh)
                    await hand(home.index, mesh)
                    nursery.cancel_scope.cancel()

        async def answer_codes(mesh: Mesh) -> None:
            answered = 0
            while True:
                while answered < len(run.reply_codes):
                    text = run.reply_codes[answered]
                    answered += 1
                    mesh.nursery.start_soon(answer_reply_code, mesh, port, text, print)
                await trio.sleep(0.05)

        return go

    def joiner(home: Home) -> Callable[[], Awaitable[None]]:
        async def go() -> None:
            await wait_event(invite_ready)
            invite = invite_box[0]
            jport = port + 10
            advertise: tuple[Endpoint, ...] | None = None
            if mapped_joiner and home is homes[1]:
                mapping = await map_port(jport)
                advertise = (Endpoint.parse(home.lan_ip, jport), mapping.external)

            async def before_dial(mesh: Mesh, bound: int) -> None:
                def say(line: str) -> None:
                    if line.startswith("BRR-"):
                        run.reply_codes.append(line)

                await prepare_reply_code(mesh, bound, invite, stun, say)

            async with (
                join_table(
                    ids[home.index], invite, listen_host="0.0.0.0", port=jport, config=CONFIG,
                    advertise=advertise, before_dial=None if mapped_host else before_dial,
                ) as mesh,
                trio.open_nursery() as nursery,
            ):  # fmt: skip
                if not mapped_host:
                    nursery.start_soon(paste, mesh)
                await hand(home.index, mesh)
                nursery.cancel_scope.cancel()

        async def paste(mesh: Mesh) -> None:
            await wait_event(run.rejoin_ready)
            mesh.moves.accept_code(run.rejoin_codes[-1])

        return go

    stop = threading.Event()
    responders = [portmap_responder(h, stop) for h in homes[:2] if mapped_host]
    try:
        start = time.monotonic()
        threads = [run_in(homes[0].namespace, host(homes[0]))]
        threads += [run_in(h.namespace, joiner(h)) for h in homes[1:]]
        while not run.reached.wait(0.1):
            assert not failed.is_set() and time.monotonic() < start + 120, "no renumbering"
        renumber(lab, homes[0], new_ip)
        cut = time.monotonic()
        errors: list[BaseException] = []
        for t in threads:
            try:
                t.join(180)
            except BaseException as exc:  # every thread is joined before one error is raised
                errors.append(exc)
        run.back_s = round(time.monotonic() - cut, 2)
        if errors:  # the seat that failed first says why; the others only followed it
            first = next((e for e in errors if str(e) != FOLLOWED), errors[0])
            raise AssertionError(f"{first}\nrouters: {_routers(lab)}") from first
    finally:
        stop.set()
        for r in responders:
            r.join(10)
    return run


async def _until(done: Callable[[], bool], seconds: float, failed: threading.Event) -> bool:
    """Whether `done()` held within `seconds`; False at once when another seat failed."""
    with trio.move_on_after(seconds):
        while not failed.is_set():
            if done():
                return True
            await trio.sleep(0.02)
    return False


def _stuck(me: int, mesh: Mesh, what: str) -> str:
    links = [mesh.how_linked(k) for k in mesh.peers()]
    return (f"seat {me}: {what}; links {links}, host addresses {mesh.moves.host_addresses}: "
            f"{list(mesh.rejections)[-6:]}")  # fmt: skip


def _routers(lab: Lab) -> str:
    """What each router maps now (for a failure's message)."""
    out = []
    for h in lab.homes:
        done = subprocess.run(["ip", "netns", "exec", h.router, "nft", "list", "chain", "ip",
                               "nat", "in_nat"], capture_output=True, text=True)  # fmt: skip
        rules = [ln.strip() for ln in done.stdout.splitlines() if "dnat" in ln]
        out.append(f"r{h.index} {h.public_ip}: {rules}")
    return "; ".join(out)


def _host_link_at(mesh: Mesh, ip: str) -> bool:
    """A joiner's link to the host is up, to (or punched from) the host's address `ip`."""
    assert mesh.roster is not None
    record = mesh.records.get(mesh.roster.host.key)
    address = record.link.address if record is not None and record.link is not None else None
    return address is not None and address.rsplit(":", 1)[0] == ip


def _same_logs_that_verify(run: Run, seats: int) -> None:
    assert sorted(run.wires) == list(range(1, seats + 1)), run.wires.keys()
    digests = {i: hashlib.sha256(b"".join(w)).hexdigest() for i, w in run.wires.items()}
    assert len(set(digests.values())) == 1, {i: len(w) for i, w in run.wires.items()}
    wires = next(iter(run.wires.values()))
    assert len(wires) > RENUMBER_AT
    verdict = verify_bytes(encode_log(wires), partial=True)
    assert verdict.code == 0, verdict


# Among the slow tests: in one run of about forty, beside the rest of the suite, the host never
# linked again to the joiner whose router maps its port (that joiner got no moved record in
# 60 s), so this cell is not yet one that passes every time.
@pytest.mark.slow
def test_a_mapped_host_is_found_again_through_a_joiner(
    lab: tuple[Lab, list[Home]], tmp_path: Path
) -> None:
    made, homes = lab
    run = _play(homes, tmp_path, made, mapped_host=True, mapped_joiner=True,
                new_ip="198.51.100.111", port=4600)  # fmt: skip
    _same_logs_that_verify(run, len(homes))
    new = Endpoint.parse("198.51.100.111", 4600)
    # Both joiners learnt the host's new address from its signed record, nobody pasted.
    assert run.moved_serial == {1: 1, 2: 1, 3: 1}, run.moved_serial
    assert run.host_addresses[2][:1] == (new,) and run.host_addresses[3][:1] == (new,)


def test_a_host_with_no_mapping_gives_a_rejoin_code(
    lab: tuple[Lab, list[Home]], tmp_path: Path
) -> None:
    made, homes = lab
    run = _play(homes, tmp_path, made, mapped_host=False, mapped_joiner=False,
                new_ip="198.51.100.112", port=4700)  # fmt: skip
    _same_logs_that_verify(run, len(homes))
    assert run.rejoin_codes and all(c.startswith("BRJ-") for c in run.rejoin_codes)
    new = Endpoint.parse("198.51.100.112", 4700)
    assert run.host_addresses[2] == (new,) and run.host_addresses[3] == (new,)
