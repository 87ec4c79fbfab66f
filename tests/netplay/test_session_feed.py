"""The full-screen client's `TableFeed` over a real session with bot peer processes: the
snapshot shows our dealt hand, a legal move is taken, an illegal one refused."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import trio

from buraco_p2p.bots import HeuristicBot
from buraco_p2p.engine import Discard
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.play.driver import my_turn
from buraco_p2p.rules import get_preset
from buraco_p2p.ui.feed import MoveRefused
from buraco_p2p.ui.session_feed import SessionFeed


def test_session_feed_plays_our_turns(tmp_path: Path) -> None:
    feed = SessionFeed(get_preset("classic"), Identity.generate("you"), tmp_path)
    bot = HeuristicBot()
    rng = random.Random(1)

    async def main() -> int:
        played = 0
        async with trio.open_nursery() as nursery:
            nursery.start_soon(feed.run)
            version = 0
            with trio.fail_after(240):
                while played < 2:
                    snap = await feed.next_snapshot(version)
                    version = snap.version
                    d = feed.driver
                    if d is None or snap.view is None or not my_turn(d.peer):
                        continue
                    assert snap.seats[snap.me].nick == "you"
                    assert len(snap.view.hand(snap.me)) > 0
                    if played == 0:
                        with pytest.raises(MoveRefused):
                            await feed.submit(Discard((snap.me + 1) % 4, 0))
                    await feed.submit(bot.choose_move(d.peer.table.view, rng))  # type: ignore[arg-type]
                    played += 1
            nursery.cancel_scope.cancel()
        return played

    assert trio.run(main) == 2
