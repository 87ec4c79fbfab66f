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

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
import trio.testing

from buraco_p2p.play.driver import Driver
from buraco_p2p.play.line import describe_event
from buraco_p2p.session import Router, VoidHeld, VoidProposed
from buraco_p2p.ui import Client, render
from buraco_p2p.ui.driver_feed import DriverFeed
from tests.ui.agreement_helpers import GONE, ME, TIMEOUT_MS, seen_by, silent_table
from tests.ui.ui_helpers import text_of


class Screen:
    """Party ME's table screen: a `DriverFeed` over a `Driver` around its peer."""

    def __init__(self, r: Router, driver: Driver, feed: DriverFeed) -> None:
        self.r = r
        self.driver = driver
        self.feed = feed
        self.told = len(r.events[ME])

    async def pass_events(self) -> None:
        """What the router delivered to our peer, handed to the feed as the driver does,
        and told on the screen's clock."""
        new = self.r.events[ME][self.told :]
        self.told = len(self.r.events[ME])
        assert self.driver.on_events is not None
        self.driver.on_events(list(new))
        await trio.testing.wait_all_tasks_blocked()

    def lines(self) -> list[str]:
        return [c.text for c in self.feed.snapshot().chat]

    def text(self, now: float, cols: int = 80, rows: int = 24) -> str:
        return text_of(render(Client(self.feed.snapshot(), lambda m: None), cols, rows, now))


@asynccontextmanager
async def screen_of(r: Router, tmp: Path) -> AsyncIterator[Screen]:
    async with trio.open_nursery() as nursery:
        driver, feed = seen_by(r, nursery, tmp)
        nursery.start_soon(feed.follow)
        await trio.testing.wait_all_tasks_blocked()
        yield Screen(r, driver, feed)
        nursery.cancel_scope.cancel()


def _status_row(text: str) -> str:
    return text.splitlines()[1]


async def test_a_proposal_is_told_with_its_key_and_the_time_left_before_we_may_be_named(
    tmp_path: Path,
) -> None:
    r = silent_table()
    async with screen_of(r, tmp_path) as s:
        r.advance(TIMEOUT_MS / 1000 + 1)  # every present party has seen GONE keep the step
        await s.pass_events()
        assert GONE in s.driver.overdue
        assert s.feed.snapshot().proposal is None
        seen = time.monotonic()
        r.act(0, r.peers[0].propose_void("end", r.now, (GONE,)))
        r.run()
        await s.pass_events()
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
        assert "else you may be named now" in s.text(prop.deadline + 1)
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
    r = silent_table()
    async with screen_of(r, tmp_path) as s:
        # Only the proposer's clock has passed the timeout: at ours, GONE is not late yet.
        later = r.now + TIMEOUT_MS / 1000 + 1
        r.act(0, r.peers[0].tick(later))
        r.act(0, r.peers[0].propose_void("end", later, (GONE,)))
        r.run()
        await s.pass_events()
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
        # Once our clock has seen it, the proposal is ours to join, and the feed says so.
        r.advance(TIMEOUT_MS / 1000 + 1)
        await s.pass_events()
        prop = s.feed.snapshot().proposal
        assert prop is not None and prop.blocked == ""
        assert s.lines()[-1] == ("waiting for player2 past the table's limit (61 s): you can "
                                 "agree now (player0 proposes to end the match without "
                                 "player2): E agrees")


@pytest.mark.parametrize(("proposer", "holder", "outcome"), [(0, 3, "retry"), (3, 0, "held")])
async def test_a_round_held_past_twice_the_timeout_is_told_in_the_line_clients_words(
    tmp_path: Path, proposer: int, holder: int, outcome: str
) -> None:
    """`holder` is present but never signs: naming it too leaves party 0 and us to sign (a
    retry), or would name party 0, which no round at four may (we wait, naming nobody)."""
    r = silent_table()
    async with screen_of(r, tmp_path) as s:
        r.advance(TIMEOUT_MS / 1000 + 1)
        r.act(proposer, r.peers[proposer].propose_void("end", r.now, (GONE,)))
        r.run()
        r.act(ME, r.peers[ME].join_void(r.now))  # `holder` never signs
        r.run()
        await s.pass_events()
        assert not any(isinstance(ev, VoidHeld) for ev in r.events[ME])
        r.advance(2 * TIMEOUT_MS / 1000 + 1)
        r.run()
        await s.pass_events()
        held = [ev for ev in r.events[ME] if isinstance(ev, VoidHeld)]
        assert [(ev.parties, ev.outcome) for ev in held] == [((holder,), outcome)]
        nick = f"player{holder}"
        line = describe_event(held[0], [], None, lambda p: f"player{p}")
        assert line == {
            "retry": f"{nick} did not sign the agreement: signed it again naming {nick} too",
            "held": f"{nick} did not sign the agreement, and too few would be left to name "
                    f"{nick} too: waiting (nobody is named)",
        }[outcome]  # fmt: skip
        assert line in s.lines(), s.lines()


async def test_the_keys_ask_about_the_proposal_as_it_stands(tmp_path: Path) -> None:
    """E, V and R each join the proposal made (its action, not the key's): the question says
    so; where we cannot agree, the reason is said instead of a question."""
    r = silent_table()
    async with screen_of(r, tmp_path) as s:
        later = r.now + TIMEOUT_MS / 1000 + 1
        r.act(0, r.peers[0].tick(later))
        r.act(0, r.peers[0].propose_void("end", later, (GONE,)))
        r.run()
        await s.pass_events()
        c = Client(s.feed.snapshot(), lambda m: None)
        c.ask_agreement("void")
        assert c.confirm is None and c.message is not None
        assert c.message.text == ("You cannot agree yet: player2 is not past the table's limit "
                                  "here yet.")
        r.advance(TIMEOUT_MS / 1000 + 1)
        await s.pass_events()
        c = Client(s.feed.snapshot(), lambda m: None)
        c.ask_agreement("void")
        assert c.confirm is not None and c.agree_action == "void"
        assert c.confirm[0] == ("Agree: player0 proposes to end the match without player2? "
                                "y agrees, n not.")


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_long_nicknames_keep_the_countdown_and_the_key_whole_at_the_smallest_size(
    players: int,
) -> None:
    """The longest nicknames (24 characters) at every seat count, in the smallest terminal the
    table is drawn in (80x24, 100x28 at six): the status line keeps the countdown whole, and
    the message line the longest wording that fits, never cut."""
    import dataclasses
    import itertools

    from buraco_p2p.bots.selfplay import resolve_rules
    from buraco_p2p.ui.feed import Proposal
    from buraco_p2p.ui.seating import min_size
    from tests.ui.ui_helpers import find_position, snapshot_of

    table, match = find_position(resolve_rules("classic", (), players),
                                 lambda t: True)  # fmt: skip
    snap = snapshot_of(table, match)
    cols, height = min_size(players)
    cases = itertools.product((12, 24), (False, True), ((107.0, "1:47"), (-3.0, None)))
    for size, refused, (left, clock) in cases:
        long = [f"{'x' * (size - 4)}{s:04d}" for s in range(players)]
        seats = tuple(dataclasses.replace(s, nick=long[s.seat]) for s in snap.seats)
        blocked = f"{long[2 % players]} is not past the table's limit here yet" if refused else ""
        prop = Proposal(long[1], "replace", (long[-1],), 1000.0, blocked)
        shown = dataclasses.replace(snap, seats=seats, proposal=prop)
        lines = text_of(render(Client(shown, lambda m: None), cols, height, 1000.0 - left))
        rows = lines.splitlines()
        status = rows[1].rstrip()
        assert status.endswith((f"replace proposed {clock or '0:00'}",
                                f"replace? {clock or '0:00'}")), status  # fmt: skip
        # Twelve characters fit whole beside it (a shorter wording where needed); at 24 (the
        # most a nickname may have) the scores may be cut, as they are beside the turn's clock.
        assert size > 12 or "…" not in rows[0] + rows[1], lines
        msg = rows[-2]
        assert "…" not in msg, lines
        if blocked:
            assert msg.rstrip().endswith(f" {blocked}"), msg
        else:
            assert msg.rstrip().endswith(f"named in {clock}" if clock else "named now"), msg
            assert "R agrees" in msg
