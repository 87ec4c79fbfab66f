"""A refused rewrite, as the clients tell it: one line naming who tried what, nothing else.

A party signs a second entry for an index that is final in our log (docs/protocol.md 4.6).
The table refuses it without a change: the full-screen feed (a real `DriverFeed` over a real
`Driver` around the party's peer, as in test_agreement_feed) and the line client each say so
in one line naming that party, with no cheating complaint and nothing else on the screen
changed; and the same entry heard again says nothing more.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

from buraco_p2p.engine import DrawStock
from buraco_p2p.play.line import describe_event
from buraco_p2p.session import Peer, Rewrite, Router, make_entry
from buraco_p2p.ui import Client, render
from buraco_p2p.ui.driver_feed import DriverFeed
from buraco_p2p.ui.feed import MoveRefused
from tests.session.session_helpers import identities
from tests.ui.agreement_helpers import ME, seen_by, silent_table
from tests.ui.ui_helpers import text_of


@asynccontextmanager
async def _feed(r: Router, tmp: Path) -> AsyncIterator[DriverFeed]:
    async with trio.open_nursery() as nursery:
        _, feed = seen_by(r, nursery, tmp)
        nursery.start_soon(feed.follow)  # the screen's clock: what is told, in order
        yield feed
        nursery.cancel_scope.cancel()


async def _told(feed: DriverFeed) -> None:
    """Until the screen's clock has told everything queued (it tells a line a beat)."""
    with trio.fail_after(30):
        while feed._told.behind:
            await trio.sleep(0.02)


async def test_a_refused_rewrite_is_one_line_naming_its_author(tmp_path: Path) -> None:
    r = silent_table()
    peer = r.peers[ME]
    async with _feed(r, tmp_path) as feed:
        old = next(e for e in peer.log[1:] if e.author == 0)
        assert old.index < peer.settled
        other = make_entry(identities()[0], table=old.table, index=old.index, prev=old.prev,
                           author=0, kind=old.kind, body={**old.body, "x": 1})  # fmt: skip
        assert feed.driver is not None and feed.driver.on_events is not None
        feed.driver.on_events(list(r.events[ME]))  # what the table told so far
        await _told(feed)
        before_log = [e.wire for e in peer.log]
        before = feed.snapshot()
        out = peer.receive(other.wire, r.now)
        (ev,) = [e for e in out.events if isinstance(e, Rewrite)]
        feed.driver.on_events(out.events)
        await _told(feed)
        after = feed.snapshot()
        new = [c.text for c in after.chat][len(before.chat) :]
        assert len(new) == 1
        (line,) = new
        nick = peer.table.terms.nicknames[0]
        assert nick in line and f"entry {old.index}" in line and "nothing changes" in line
        assert "CHEATING" not in line
        assert [e.wire for e in peer.log] == before_log and not out.send and out.rollback is None
        screen = text_of(render(Client(after, lambda m: None), 120, 40, 0.0))
        assert "CHEATING" not in screen
        # the line client says the same, in one line
        said = describe_event(ev, list(peer.table.terms.nicknames), peer.table.view,
                              lambda p: peer.table.terms.nicknames[p])  # fmt: skip
        assert said is not None and "\n" not in said and nick in said
        # heard again: nothing more
        again = peer.receive(other.wire, r.now)
        assert not [e for e in again.events if isinstance(e, Rewrite)]


async def test_a_move_held_by_a_dispute_we_signed_is_refused_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a dispute we signed holds our entries (`Peer.disputing`, 4.6 rule 3 (a)), the
    screen refuses a move with that reason, not "the table is still taking the last move"."""
    r = silent_table()
    peer = r.peers[ME]
    async with _feed(r, tmp_path) as feed:
        monkeypatch.setattr(Peer, "disputing", property(lambda self: True))
        assert not peer.on_turn
        with pytest.raises(MoveRefused) as got:
            await feed.submit(DrawStock(peer.table.my_seat or 0))
        assert "two different entries for one place in the log" in got.value.reason
        assert got.value.code == "wrong_player"
