"""The running application through its terminal input: mouse selection, chat, the turn
timer, and a whole short match to its end screen, quitting cleanly."""

from __future__ import annotations

import asyncio

from ui_helpers import (
    ENTER,
    Sent,
    find_position,
    my_turn_or_end,
    play_turn,
    running,
    snapshot_of,
    text_of,
    until,
)

from buraco_p2p.engine import Phase
from buraco_p2p.rules import get_preset
from buraco_p2p.ui import Client, render

CLASSIC = get_preset("classic")


def click(x: int, y: int) -> str:
    """A left click at column x, row y (0-based), as an SGR mouse report."""
    return f"\x1b[<0;{x + 1};{y + 1}M\x1b[<0;{x + 1};{y + 1}m"


async def mouse_selects_a_card() -> None:
    async with running(CLASSIC, seed=4) as r:
        c = r.app.client
        await until(lambda: c.my_turn(), "the first turn")
        await r.drawn()
        lines = r.screen().splitlines()
        y = next(i for i, line in enumerate(lines) if line.startswith(" Hand "))
        suits = [i for i, ch in enumerate(lines[y]) if ch in "♠♥♦♣"]
        x = suits[2] - 1  # the rank of the third card
        third = c.hand()[2]
        r.keys.send_text(click(x, y))
        await until(lambda: third in c.selected, "the clicked card selected")
        assert c.cursor == 2
        mark_row = r.screen().splitlines()[y + 1]
        assert mark_row[x : x + 2] in ("▲^", "^▲", "▲▲")
        await r.drawn()
        r.keys.send_text(click(x, y))
        await until(lambda: third not in c.selected, "the clicked card unselected")


def test_a_click_on_a_card_selects_it_and_a_second_click_unselects_it() -> None:
    asyncio.run(mouse_selects_a_card())


async def chat_line() -> None:
    async with running(CLASSIC, seed=4) as r:
        c = r.app.client
        await until(lambda: c.view is not None, "the deal")
        await r.press("c")
        assert "say: _" in r.screen()
        await r.press(*"bom jogo")
        assert "say: bom jogo_" in r.screen()
        await r.press(ENTER)
        await until(lambda: any(x.text == "bom jogo" for x in c.snap.chat), "the line at the table")
        assert "You: bom jogo" in r.screen()
        await r.press("C")
        assert "Chat" in r.screen() and "practice table: bots, no cryptography" in r.screen()


def test_a_chat_line_typed_reaches_the_table_and_comes_back() -> None:
    asyncio.run(chat_line())


def test_the_turn_timer_counts_from_the_start_of_the_turn() -> None:
    table, match = find_position(
        CLASSIC, lambda t: t.referee.turn == 1 and t.referee.phase is Phase.DRAW
    )
    snap = snapshot_of(table, match)
    c = Client(snap, Sent())
    text = text_of(render(c, 80, 24, now=snap.turn_since + 67.5))
    assert "Ana's turn 1:07" in text.splitlines()[1]


async def short_match() -> None:
    rules = CLASSIC.with_overrides({"target_score": 50})
    async with running(rules, seed=21) as r:
        c = r.app.client
        hands = 0
        while not c.snap.match_over:
            await my_turn_or_end(r)
            if c.snap.hand_over:
                hands += 1
                assert hands < 10
                await until(lambda: "is over" in r.screen(), "the hand-end panel")
                if not c.snap.match_over:
                    await r.press(ENTER)
                    await until(lambda: not c.snap.hand_over, "the next deal")
                continue
            await play_turn(r)
        text = r.screen()
        assert "The match is over." in text
        assert ("You win" in text) or ("Them win" in text)
        assert "nothing to save or audit" in text
        await r.press("h")
        assert "Match history" in r.screen()
        await r.press("q")  # the match is over: no question
        await asyncio.wait_for(r.task, 10)


def test_a_short_match_ends_on_the_result_and_quits_without_asking() -> None:
    asyncio.run(short_match())

