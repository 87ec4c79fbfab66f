"""A void agreement under way, as the full-screen client tells it (docs/protocol.md 4.5).

Four in-memory session peers play until one goes silent; the table screen of a present party
is a real `DriverFeed` over a real `Driver` around that party's peer (its mesh is not linked:
the router carries the entries, and the driver hands the peer's events to the feed as it does
on a live table). What is checked: another party's proposal is told with what it is, the key
that agrees and the time left before a party that neither agrees nor plays on may be named too
(ticking in the status line, nothing cut at 80x24); where our clock has not seen the named
party late, the words say why we cannot agree; a round we signed that waited twice the timeout
tells whether we signed again naming the holders too or wait naming nobody, with the line
client's words.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.net.mesh.mesh import Mesh
from buraco_p2p.net.mesh.meshconfig import MeshConfig
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.line import describe_event
from buraco_p2p.play.store import TableStore
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Peer, Router, VoidHeld, VoidProposed, make_genesis
from buraco_p2p.ui import Client, render
from buraco_p2p.ui.driver_feed import DriverFeed
from tests.session.session_helpers import bot_chooser, identities, run_until
from tests.ui.ui_helpers import text_of

GONE = 2  # the party that goes silent
ME = 1  # the party whose screen is read
TIMEOUT_MS = 60_000


def _router() -> Router:
    rules = dataclasses.replace(get_preset("us"), target_score=300)
    g = make_genesis(b"agree-feed-tabl1", identities(), rules, timeout_ms=TIMEOUT_MS)
    r = Router([Peer(g, i, DeterministicRandomSource(bytes([41, n]) * 16))
                for n, i in enumerate(identities())], bot_chooser(41), relay=True)  # fmt: skip
    r.start()
    run_until(r, lambda: len(r.peers[0].log) > 40)
    r.silent = {GONE}
    r.run()
    return r


class Screen:
    """Party ME's table screen: a `DriverFeed` over a `Driver` around its peer."""

    def __init__(self, r: Router, driver: Driver, feed: DriverFeed) -> None:
        self.r = r
        self.driver = driver
        self.feed = feed
        self.told = len(r.events[ME])

    def pass_events(self) -> None:
        """What the router delivered to our peer, handed to the feed as the driver does."""
        new = self.r.events[ME][self.told :]
        self.told = len(self.r.events[ME])
        assert self.driver.on_events is not None
        self.driver.on_events(list(new))

    def lines(self) -> list[str]:
        return [c.text for c in self.feed.snapshot().chat]

    def text(self, now: float, cols: int = 80, rows: int = 24) -> str:
        return text_of(render(Client(self.feed.snapshot(), lambda m: None), cols, rows, now))


@asynccontextmanager
async def screen_of(r: Router, tmp: Path) -> AsyncIterator[Screen]:
    peer = r.peers[ME]
    ident = identities()[ME]
    async with trio.open_nursery() as nursery:
        mesh = Mesh(ident, peer.table.terms.table_id, b"\x00" * 32, nursery, config=MeshConfig(),
                    state=None, is_host=False)  # fmt: skip
        store = TableStore(tmp / "table")
        driver = Driver(mesh, peer, store, secret=b"\x01" * 32, saved=len(peer.log),
                        clock=lambda: r.now)  # fmt: skip
        feed = DriverFeed(peer.table.rules, "network table")
        feed.attach(driver)
        yield Screen(r, driver, feed)
        nursery.cancel_scope.cancel()


def _status_row(text: str) -> str:
    return text.splitlines()[1]


async def test_a_proposal_is_told_with_its_key_and_the_time_left_before_we_may_be_named(
    tmp_path: Path,
) -> None:
    r = _router()
    async with screen_of(r, tmp_path) as s:
        r.advance(TIMEOUT_MS / 1000 + 1)  # every present party has seen GONE keep the step
        s.pass_events()
        assert GONE in s.driver.overdue
        assert s.feed.snapshot().proposal is None
        seen = time.monotonic()
        r.act(0, r.peers[0].propose_void("end", r.now, (GONE,)))
        r.run()
        s.pass_events()
        assert any(isinstance(ev, VoidProposed) for ev in r.events[ME])
        said = [t for t in s.lines() if "proposes" in t]
        assert said == ["player0 proposes to end the match without player2: E agrees; if you "
                        "neither agree nor play on, the others may name you too in 2:00"]
        prop = s.feed.snapshot().proposal
        assert prop is not None and prop.by == "player0" and prop.blocked == ""
        # Twice the table's timeout from when we saw it, by our clock.
        assert seen <= prop.deadline - 2 * TIMEOUT_MS / 1000 <= time.monotonic()
        screen = s.text(prop.deadline - 107)
        assert "end proposed 1:47" in _status_row(screen), screen
        assert "end proposed 0:05" in _status_row(s.text(prop.deadline - 5))
        assert "end proposed 0:00" in _status_row(s.text(prop.deadline + 1))
        # The message line holds its whole text at 80 columns: nothing of it is cut.
        row = next(x for x in screen.splitlines() if "E agrees, or play on" in x)
        assert row.rstrip() == (" player0 proposes end: E agrees, or play on; else you may be "
                                "named in 1:47"), screen
        # Agreeing (E, through the driver) is what the key does: the proposal is then ours.
        assert (await s.feed.agree("end")) == "joined the agreement to end"
        assert s.feed.snapshot().proposal is None
        assert "proposed" not in _status_row(s.text(prop.deadline - 107))


async def test_where_our_clock_has_not_seen_the_party_late_the_words_say_why(
    tmp_path: Path,
) -> None:
    r = _router()
    async with screen_of(r, tmp_path) as s:
        # Only the proposer's clock has passed the timeout: at ours, GONE is not late yet.
        later = r.now + TIMEOUT_MS / 1000 + 1
        r.act(0, r.peers[0].tick(later))
        r.act(0, r.peers[0].propose_void("end", later, (GONE,)))
        r.run()
        s.pass_events()
        assert GONE not in s.driver.overdue
        said = [t for t in s.lines() if "proposes" in t]
        assert len(said) == 1
        assert "you cannot agree: player2 is not past the table's limit here yet" in said[0]
        prop = s.feed.snapshot().proposal
        assert prop is not None and prop.blocked == "player2 is not past the table's limit here yet"
        screen = s.text(prop.deadline - 60)
        assert "player2 is not past the table's limit here yet" in screen, screen
        # The key says the same, instead of a silent refusal.
        said_now = await s.feed.agree("end")
        assert said_now.startswith("not yet"), said_now
        # Once our clock has seen it, the proposal is ours to join.
        r.advance(TIMEOUT_MS / 1000 + 1)
        s.pass_events()
        prop = s.feed.snapshot().proposal
        assert prop is not None and prop.blocked == ""


async def test_a_round_held_past_twice_the_timeout_is_told_in_the_line_clients_words(
    tmp_path: Path,
) -> None:
    r = _router()
    async with screen_of(r, tmp_path) as s:
        r.advance(TIMEOUT_MS / 1000 + 1)
        r.act(0, r.peers[0].propose_void("end", r.now, (GONE,)))
        r.run()
        r.act(ME, r.peers[ME].join_void(r.now))  # party 3 is present but never signs
        r.run()
        s.pass_events()
        r.advance(2 * TIMEOUT_MS / 1000 + 1)
        r.run()
        s.pass_events()
        held = [ev for ev in r.events[ME] if isinstance(ev, VoidHeld)]
        assert held, r.events[ME]
        nicks = identities()
        for ev in held:
            line = describe_event(ev, [], None, lambda p: nicks[p].nickname)
            assert line is not None and line in s.lines(), (line, s.lines())


async def test_the_keys_ask_about_the_proposal_as_it_stands(tmp_path: Path) -> None:
    """E, V and R each join the proposal made (its action, not the key's): the question says
    so; where we cannot agree, the reason is said instead of a question."""
    r = _router()
    async with screen_of(r, tmp_path) as s:
        later = r.now + TIMEOUT_MS / 1000 + 1
        r.act(0, r.peers[0].tick(later))
        r.act(0, r.peers[0].propose_void("end", later, (GONE,)))
        r.run()
        s.pass_events()
        c = Client(s.feed.snapshot(), lambda m: None)
        c.ask_agreement("void")
        assert c.confirm is None and c.message is not None
        assert c.message.text == ("You cannot agree yet: player2 is not past the table's limit "
                                  "here yet.")
        r.advance(TIMEOUT_MS / 1000 + 1)
        s.pass_events()
        c = Client(s.feed.snapshot(), lambda m: None)
        c.ask_agreement("void")
        assert c.confirm is not None and c.agree_action == "void"
        assert c.confirm[0] == ("Agree: player0 proposes to end the match without player2? "
                                "y agrees, n not.")
