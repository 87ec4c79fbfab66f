"""A table where one party has gone silent, seen by a present party through a real `Driver`
and `DriverFeed`: four in-memory session peers (every proof made and checked) carried by a
`Router`; the seen party's driver has a real mesh that is never linked (the router carries
the entries) and hands the peer's events to the feed as it does on a live table.

Run as a program (`PYTHONPATH=. python tests/ui/agreement_helpers.py DIR`), it opens the
full-screen client on that table in this terminal and, once drawn, has party 0 propose to end
the match naming the silent party: what the tmux test reads.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import trio

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.net.mesh.mesh import Mesh
from buraco_p2p.net.mesh.meshconfig import MeshConfig
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.store import TableStore
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Peer, Router, make_genesis
from buraco_p2p.ui.driver_feed import DriverFeed
from tests.session.session_helpers import bot_chooser, identities, run_until

GONE = 2  # the party that goes silent
ME = 1  # the party whose screen is read
TIMEOUT_MS = 60_000


def silent_table() -> Router:
    """Four peers in the first hand (target 300), party GONE silent from here on."""
    rules = dataclasses.replace(get_preset("us"), target_score=300)
    g = make_genesis(b"agree-feed-tabl1", identities(), rules, timeout_ms=TIMEOUT_MS)
    r = Router([Peer(g, i, DeterministicRandomSource(bytes([41, n]) * 16))
                for n, i in enumerate(identities())], bot_chooser(41), relay=True)  # fmt: skip
    r.start()
    run_until(r, lambda: len(r.peers[0].log) > 40)
    r.silent = {GONE}
    r.run()
    return r


def seen_by(
    r: Router, nursery: trio.Nursery, root: Path, feed: DriverFeed | None = None
) -> tuple[Driver, DriverFeed]:
    """Party ME's driver (clock: the router's) and `feed` (a new one if None) attached to it."""
    peer = r.peers[ME]
    mesh = Mesh(identities()[ME], peer.table.terms.table_id, b"\x00" * 32, nursery,
                config=MeshConfig(), state=None, is_host=False)  # fmt: skip
    driver = Driver(mesh, peer, TableStore(root / "table"), secret=b"\x01" * 32,
                    saved=len(peer.log), clock=lambda: r.now)  # fmt: skip
    feed = feed or DriverFeed(peer.table.rules, "network table")
    feed.attach(driver)
    return driver, feed


class ProposedFeed(DriverFeed):
    """The feed of `seen_by`, for the full-screen client: once the table is on screen, the
    others' clocks pass the timeout and party 0 proposes to end the match naming GONE."""

    def __init__(self, root: Path) -> None:
        super().__init__(None, "network table")
        self.root = root

    async def run(self) -> None:
        r = silent_table()
        async with trio.open_nursery() as nursery:
            driver, _ = seen_by(r, nursery, self.root, self)
            nursery.start_soon(self.follow)  # the screen's clock: what is told, in order
            told = len(r.events[ME])
            await trio.sleep(1.0)
            r.advance(TIMEOUT_MS / 1000 + 1)
            r.act(0, r.peers[0].propose_void("end", r.now, (GONE,)))
            r.run()
            assert driver.on_events is not None
            driver.on_events(list(r.events[ME][told:]))
            await trio.sleep_forever()


if __name__ == "__main__":
    from buraco_p2p.ui.app import run_client

    run_client(ProposedFeed(Path(sys.argv[1])))
