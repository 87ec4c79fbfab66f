"""One clock for the screen: a networked table's hand end is told in order.

Four in-memory session peers (every proof made and checked) play a match of two hands; party
ME's screen is a real `DriverFeed` over a real `Driver` around its peer, the session running
far ahead of the screen (entries arrive in bursts while the screen pauses after each bot's
move, on trio's mock clock). Every snapshot the screen is handed is recorded, and a player
presses Enter a while after each hand's panel appears. What must hold on every snapshot:

- the move that ended a hand is in the feed before that hand's result shows (the panel, the
  history, the new totals), and the scores change only with the history;
- while a hand's panel is up, nothing of the next hand is told (no shuffle, no deal);
- "match over" shows only with the last hand's result;
- the next hand's turn clock starts when the screen shows it, not when the session reached it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import time
from pathlib import Path

import trio
import trio.testing

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.net.mesh.mesh import Mesh
from buraco_p2p.net.mesh.meshconfig import MeshConfig
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.store import TableStore
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Peer, Router, make_genesis
from buraco_p2p.ui.driver_feed import DriverFeed
from buraco_p2p.ui.feed import TableSnapshot
from tests.session.session_helpers import bot_chooser, identities

ME = 1
BURST = 40  # entries delivered between two looks of the screen (the session runs ahead)


class Recorded(DriverFeed):
    """A `DriverFeed` that keeps every snapshot it publishes, with when it was published."""

    def __init__(self) -> None:
        super().__init__(None, "network table")
        self.seen: list[tuple[float, TableSnapshot]] = []
        self.clock: list[float] = []  # trio's clock at each snapshot

    def _publish(self) -> None:
        super()._publish()
        self.seen.append((time.monotonic(), self.snapshot()))
        with contextlib.suppress(RuntimeError):
            self.clock.append(trio.current_time())


def _ended(snap: TableSnapshot) -> int:
    return sum(1 for c in snap.chat if c.text.endswith("the hand is over"))


def test_a_hand_end_is_told_in_order_on_one_clock(tmp_path: Path) -> None:
    rules = dataclasses.replace(get_preset("us"), hands=2)
    ids = identities()
    g = make_genesis(b"told-order-table", ids, rules, timeout_ms=600_000)
    r = Router([Peer(g, i, DeterministicRandomSource(bytes([7, n]) * 16))
                for n, i in enumerate(ids)], bot_chooser(7))  # fmt: skip
    feed = Recorded()
    readied: list[tuple[float, int]] = []  # (when, hands in the history) at each Enter

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            peer = r.peers[ME]
            mesh = Mesh(ids[ME], peer.table.terms.table_id, b"\x00" * 32, nursery,
                        config=MeshConfig(), state=None, is_host=False)  # fmt: skip
            driver = Driver(mesh, peer, TableStore(tmp_path / "table"), secret=b"\x01" * 32,
                            saved=len(peer.log), clock=lambda: r.now)  # fmt: skip
            feed.attach(driver)
            feed.pace = 0.5
            nursery.start_soon(feed.follow)
            nursery.start_soon(_player, feed, readied)
            r.start()
            told = 0
            while r.queue:
                r.run(BURST)
                new = r.events[ME][told:]
                told = len(r.events[ME])
                assert driver.on_events is not None
                driver.on_events(list(new))
                await trio.sleep(0.05)
            with trio.fail_after(600):
                while not (feed.snapshot().match_over and feed.snapshot().hand_over):
                    await trio.sleep(0.5)
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert r.peers[ME].table.closed
    seen = [snap for _, snap in feed.seen]
    assert len(seen[-1].history) == 2 and seen[-1].match_over
    for i, (before, after) in enumerate(itertools.pairwise(seen)):
        k = len(after.history)
        if k > len(before.history):
            # The result shows: the move that ended the hand was told before it, and stayed
            # in sight a while (two paces) before the panel covered it.
            assert _ended(before) == k, [c.text for c in before.chat[-6:]]
            told = next(j for j in range(i + 1) if _ended(seen[j]) == k)
            assert feed.clock[i + 1] - feed.clock[told] >= 2 * feed.pace, (told, i)
        if after.scores != before.scores:
            assert len(after.history) != len(before.history), (before.scores, after.scores)
        if after.match_over:
            assert k == 2
    for snap in seen:
        if snap.hand_over:
            told = [c.text for c in snap.chat]
            last_end = max(i for i, t in enumerate(told) if t.endswith("the hand is over"))
            later = told[last_end + 1 :]
            assert not any(" dealt by " in t or t.startswith("shuffle ") for t in later), later
    # Each Enter came before the next hand was on screen: its turn clock starts after it.
    assert len(readied) == 1
    at, _ = readied[0]
    first_of_next = next(snap for when, snap in feed.seen
                         if when >= at and snap.view is not None
                         and snap.view.setup.hand_number == 1)  # fmt: skip
    assert first_of_next.turn_since >= at


async def _player(feed: Recorded, readied: list[tuple[float, int]]) -> None:
    """Presses Enter two seconds after each hand's panel appears (but not at the match's
    end: nothing follows it)."""
    version = 0
    while True:
        snap = await feed.next_snapshot(version)
        version = snap.version
        if snap.hand_over and not snap.match_over:
            await trio.sleep(2.0)
            if feed.snapshot().match_over:
                continue
            readied.append((time.monotonic(), len(snap.history)))
            await feed.ready()
