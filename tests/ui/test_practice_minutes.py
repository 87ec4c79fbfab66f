"""The practice table with a time limit: its own clock (passed in) ends the match with the
hand in progress when the time is up."""

from __future__ import annotations

import random

import trio

from buraco_p2p.bots import HeuristicBot
from buraco_p2p.rules import get_preset
from buraco_p2p.ui.practice import PracticeTable


def test_the_practice_table_ends_with_the_hand_in_progress() -> None:
    rules = get_preset("classic").with_overrides({"minutes": 1})
    now = [0.0]
    feed = PracticeTable(rules, 5, bot_delay=0, clock=lambda: now[0])
    bot = HeuristicBot()
    rng = random.Random(5)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(feed.run)
            version = -1
            for _ in range(100_000):
                snap = await feed.next_snapshot(version)
                version = snap.version
                if snap.match_over:
                    break
                if snap.hand_over:
                    await feed.ready()
                    continue
                if len(snap.history) == 1 and snap.view is not None and snap.view.moves:
                    now[0] = 61.0  # the minute is up in the middle of the second hand
                table = feed.table
                if table is not None and not table.ended and table.referee.turn == feed.me:
                    await feed.submit(bot.choose_move(table.views[feed.me], rng))
            nursery.cancel_scope.cancel()

    trio.run(main)
    snap = feed.snapshot()
    assert snap.match_over and snap.winner is not None and feed.match.time_is_up
    scores = list(snap.scores)
    tied_after = [list(r.setup.team_scores) for r in snap.history[2:]]
    assert len(snap.history) == 2 + len(tied_after)  # hands past the second only on a tie
    assert all(s.count(max(s)) > 1 for s in tied_after) and scores.count(max(scores)) == 1
    assert any("the time is up" in line.text for line in snap.chat)
