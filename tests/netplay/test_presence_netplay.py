"""A party catching up is answering, over a real mesh on loopback: the host's driver notes a
peer's `at` claims (docs/protocol.md 2.10, 4.5) and its link, so the table's timeout passing
does not name it while its claims advance; once they stop for a timeout, it is named. The
driver's clock is injected, so no assertion depends on how fast this machine is."""

from __future__ import annotations

from pathlib import Path

import trio

from buraco_p2p.bots.selfplay import resolve_rules
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.startup import join_table
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.node import open_node
from buraco_p2p.session import Event, TimedOut, decode_entry

from .lost import seated

TIMEOUT_MS = 1000  # the least a genesis allows


class Clock:
    """The driver's clock: set by the test; counts the reads made at each value."""

    def __init__(self) -> None:
        self.value = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.value

    async def set(self, value: float) -> None:
        """Move to `value` and wait until the driver has read it often enough that at least
        one whole tick ran on it (a tick reads the clock at its start and again after it
        has handed its events on)."""
        self.value, self.reads = value, 0
        with trio.fail_after(10):
            while self.reads < 20:
                await trio.sleep(0.005)


async def test_a_peer_whose_at_claims_advance_is_not_named_until_they_stop(
    tmp_path: Path,
) -> None:
    rules = resolve_rules("classic", (), players=2)
    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    clock = Clock()
    invites: list[Invite] = []
    drivers: list[Driver] = []
    events: list[Event] = []

    async def host() -> None:
        async with open_node(
            ana, tmp_path / "ana", rules=rules, timeout_ms=TIMEOUT_MS, on_invite=invites.append,
            clock=clock, tick_every=0.002, on_events=events.extend,
        ) as driver:  # fmt: skip
            drivers.append(driver)
            await trio.sleep_forever()

    def timed_out() -> list[tuple[int, ...]]:
        return [e.parties for e in events if isinstance(e, TimedOut)]

    async with trio.open_nursery() as nursery:
        nursery.start_soon(host)
        with trio.fail_after(30):
            while not invites:
                await trio.sleep(0.01)
        async with join_table(bia, invites[0]) as b:
            peer = await seated(bia, b, drivers)
            driver = drivers[0]
            # The seat draw waits for bia, who has made nothing: it is catching up.
            assert driver.peer.table.waiting_for == (1,)
            assert driver.mesh.is_up(bia.public)
            geneses = 0

            async def answered(sync: int) -> None:
                """Ask for the log from `sync` and wait for its genesis: every message we
                sent before it has been taken in."""
                nonlocal geneses
                want = geneses + 1
                await b.send(peer, ["sync", sync])
                with trio.fail_after(10):
                    while geneses < want:
                        _key, msg = await b.receive()
                        if msg[0] == "e" and decode_entry(msg[1]).index == 0:
                            geneses += 1

            await answered(0)  # the genesis, again: the claim 0 counts at time 0
            await clock.set(0.5)
            await b.send(peer, ["at", 1])
            await answered(0)  # no progress: 0 was claimed already
            await clock.set(1.2)
            assert timed_out() == []  # past the timeout, but its claim is 0.7 s old
            await b.send(peer, ["at", 1])
            await answered(0)
            await clock.set(1.4)
            assert timed_out() == []  # the same claim again bought nothing more...
            await clock.set(1.5)
            assert timed_out() == [(1,)]  # ...so a timeout after it, bia is named
        nursery.cancel_scope.cancel()
