"""A whole hand against three bots, played by keys only through prompt_toolkit's pipe input,
with the screen the window draws asserted along the way (hand, melds, scores)."""

from __future__ import annotations

import asyncio

from ui_helpers import ENTER, my_turn_or_end, play_turn, running, until

from buraco_p2p.rules import get_preset
from buraco_p2p.text.glyphs import Glyphs

G = Glyphs()


def hand_line(screen: str) -> str:
    return next(line for line in screen.splitlines() if line.startswith(" Hand "))


async def whole_hand() -> None:
    async with running(get_preset("classic"), seed=11) as r:
        c = r.app.client
        await until(lambda: c.my_turn(), "the first turn")
        screen = r.screen()
        lines = screen.splitlines()
        assert len(lines) == 24 and all(len(line) == 80 for line in lines)
        # The own hand, sorted and grouped by suit, every card on screen.
        view = c.view
        assert view is not None
        shown = hand_line(screen)
        for slot in view.hands[c.me]:
            assert G.card(view.known[slot]) in shown
        assert "Us 0" in lines[1] and "Them 0" in lines[1] and "/ 2000" in lines[1]
        assert "your turn" in lines[1]
        assert "practice: no cryptography" in lines[0]

        # An illegal attempt gets the engine's reason in words, and changes nothing.
        await r.press("x")
        assert "draw first" in r.screen()
        # Sorting by rank regroups the same cards.
        await r.press("s")
        assert sorted(hand_line(r.screen()).split()) == sorted(shown.split())
        await r.press("s")

        melds_seen = False
        turns = 0
        while not c.snap.hand_over:
            await my_turn_or_end(r)
            if c.snap.hand_over:
                break
            did = await play_turn(r)
            turns += 1
            assert turns < 200
            if did == "meld" and not melds_seen:
                melds_seen = True
                screen = r.screen()
                mine = c.snap.view.melds[0] if c.snap.view else []
                assert f"Us: {len(mine)} melds" in screen
                first = mine[0]
                assert f"{first.meld.card_points:>3} " in screen
        assert melds_seen, "the hints never offered the player a meld in this hand"
        await until(lambda: "is over" in r.screen(), "the hand-end panel")
        screen = r.screen()
        result = c.snap.history[-1]
        assert "hand total" in screen and "match total" in screen
        totals = result.totals
        total_line = next(line for line in screen.splitlines() if "hand total" in line)
        assert total_line.split()[-2:] == [str(totals[0]), str(totals[1])]
        assert c.snap.scores == (totals[0], totals[1])
        # Enter deals the next hand; the scores line carries the hand's points.
        await r.press(ENTER)
        await until(lambda: not c.snap.hand_over, "the next deal")
        assert f"Us {totals[0]}" in r.screen().splitlines()[1]
        await r.press("q")
        assert "Quit the match?" in r.screen()
        await r.press("y")
        await asyncio.wait_for(r.task, 10)


def test_a_whole_hand_by_keys_against_three_bots() -> None:
    asyncio.run(whole_hand())
