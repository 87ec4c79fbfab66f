"""Shuffle progress on the table screen, read from a real session table as entries arrive.

Four in-memory session peers (every proof made and checked) deal a hand one delivered entry
at a time; at each step of the shuffle phase one peer's table is read by
`shuffle_count`, and the screen drawn from that count names the seat shuffling and how many
shuffles are verified.
"""

from __future__ import annotations

from buraco_p2p.engine import match_sides
from buraco_p2p.session import Phase
from buraco_p2p.ui import Client, Fairness, SeatInfo, TableSnapshot, render
from buraco_p2p.ui.driver_feed import shuffle_count
from tests.session.session_helpers import run_until, table
from tests.ui.ui_helpers import text_of


def _screen(nicks: list[str], rules_players: int, t: object) -> str:
    from buraco_p2p.session import Table

    assert isinstance(t, Table)
    count = shuffle_count(t)
    sides = match_sides(t.rules)
    seats = tuple(SeatInfo(s, nicks[s], s % sides, s % sides) for s in range(rules_players))
    snap = TableSnapshot(
        title="network table", rules=t.rules, me=0, seats=seats, view=None,
        scores=(0,) * sides,
        fairness=Fairness(True, count.shuffles, count.seats),
        progress=count.progress,
    )  # fmt: skip
    return text_of(render(Client(snap, lambda m: None), 80, 24, 0.0))


def test_the_screen_follows_each_shuffle_then_the_deal() -> None:
    router = table("us", seed=3)
    router.start()
    t = router.peers[0].table
    run_until(router, lambda: t.phase is Phase.SHUFFLE)
    nicks = [t.terms.nicknames[p] for p in t.seating]
    seen: list[int] = []
    for _ in range(10_000):
        if t.phase is not Phase.SHUFFLE:
            break
        count = shuffle_count(t)
        if not seen or seen[-1] != count.shuffles:
            seen.append(count.shuffles)
            screen = _screen(nicks, 4, t)
            who = nicks[count.shuffles]
            assert f"shuffling: {who} (seat {count.shuffles})" in screen, screen
            assert f" {count.shuffles}/4" in screen
            assert f"{count.shuffles}/4 shuffles verified" in screen
        router.run(1)
    # A peer shuffles as soon as its turn comes, in the same step: its own count is never
    # seen waiting; every other seat's is.
    assert seen == [k for k in range(4) if k != t.my_seat]
    assert t.phase is Phase.DEAL
    count = shuffle_count(t)
    # Its own deal entry is made at once; the others' are counted as they are verified.
    assert count.shuffles == 4 and 1 <= count.deals < 4
    screen = _screen(nicks, 4, t)
    assert "dealing: shares verified" in screen and f" {count.deals}/4" in screen
    assert "4/4 shuffles verified" in screen
    run_until(router, lambda: t.phase is not Phase.DEAL)
    count = shuffle_count(t)
    assert (count.hand, count.shuffles, count.deals, count.progress) == (0, 4, 4, None)
    assert "shuffling" not in _screen(nicks, 4, t)
