"""A table brought back (`resume`) is told from the deal of the hand in play: the screen's
feed has the "hand N dealt by" line and every move since, your own draw included, told at
once. While its log loads, no preset's name or target is shown (the rules are not read
yet); and once the screen is gone the client says how to come back, or where the finished
match's log is with the commands that audit and replay it, each on a line of its own.

Four in-memory session peers (every proof made and checked) play part of a hand; a real
`DriverFeed` is then attached to one party's `Driver`, as `resume` attaches it.
"""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing

from buraco_p2p.engine import DrawStock
from buraco_p2p.ui import Client, render
from buraco_p2p.ui.driver_feed import DriverFeed
from tests.session.session_helpers import run_until, table
from tests.ui.agreement_helpers import ME, seen_by
from tests.ui.ui_helpers import text_of


def test_a_resumed_table_tells_the_hand_in_play_from_its_deal(tmp_path: Path) -> None:
    r = table("us", seed=5)
    r.start()
    me = r.peers[ME]

    def drew() -> bool:  # our party has drawn at least once
        view = me.table.view
        seat = me.table.my_seat
        return view is not None and any(
            isinstance(m, DrawStock) and m.seat == seat for m in view.moves
        ) and len(view.moves) > 12

    run_until(r, drew)
    view = me.table.view
    assert view is not None and not view.ended
    loading = DriverFeed(None, "network table (resumed)")
    text = text_of(render(Client(loading.snapshot(), lambda m: None), 80, 24, 0.0))
    assert "classic" not in text and "3000" not in text and "/ " not in text.splitlines()[1]

    async def main() -> list[str]:
        async with trio.open_nursery() as nursery:
            _, feed = seen_by(r, nursery, tmp_path, DriverFeed(None, "network table"))
            nursery.start_soon(feed.follow)
            await trio.testing.wait_all_tasks_blocked()
            lines = [c.text for c in feed.snapshot().chat]
            snap = feed.snapshot()
            assert snap.view is not None and len(snap.view.moves) == len(view.moves)
            feed.dir_options = "--data-dir /d"
            assert feed.farewell()[-1].endswith(f" resume {me.table.terms.table_id.hex()} "
                                                "--data-dir /d")  # fmt: skip
            nursery.cancel_scope.cancel()
        return lines

    lines = trio.run(main)
    dealer = view.setup.dealer
    assert lines[0].startswith(f"hand 1 dealt by {'you' if dealer == me.table.my_seat else ''}")
    assert any(line.startswith("you drew 1 card from the stock: ") for line in lines), lines
    assert sum(1 for line in lines if " discarded " in line) == sum(
        1 for m in view.moves if type(m).__name__ == "Discard")
