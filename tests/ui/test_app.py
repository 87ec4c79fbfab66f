"""The running application through its terminal input: mouse selection, chat, the turn
timer, and a whole short match to its end screen, quitting cleanly."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from pathlib import Path

import pytest
import trio
from prompt_toolkit.data_structures import Point
from prompt_toolkit.input import DummyInput
from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType
from ui_helpers import (
    ENTER,
    Sent,
    SizedOutput,
    find_position,
    my_turn_or_end,
    play_turn,
    running,
    snapshot_of,
    text_of,
    until,
)

from buraco_p2p.bots import HeuristicBot
from buraco_p2p.engine import (
    AddToMeld,
    DrawStock,
    HandState,
    LocalTable,
    Move,
    Phase,
    legal_moves,
)
from buraco_p2p.rules import get_preset
from buraco_p2p.ui import (
    Client,
    MoveRefused,
    PracticeTable,
    TableApp,
    TableSnapshot,
    render,
)

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


class SavingTable(PracticeTable):
    """A practice table that keeps a log, as a networked session does: the client's save
    flow (s at the end of the match, the audit command shown) runs against it."""

    def _build(self) -> TableSnapshot:
        return dataclasses.replace(super()._build(), can_save_log=True)

    async def save_log(self, path: Path) -> str:
        lines = [f"hand {i + 1}: {r.totals}" for i, r in enumerate(self._results)]
        path.write_text("\n".join(lines) + "\n")
        return f"buraco-p2p verify {path}"


async def short_match(log_dir: Path) -> None:
    rules = CLASSIC.with_overrides({"target_score": 50})
    feed = SavingTable(rules, 21, bot_delay=0)
    async with running(rules, seed=21, feed=feed, log_dir=log_dir) as r:
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
        assert "s saves the match log" in text
        await r.press("s")
        await until(lambda: c.saved is not None, "the log saved")
        saved = list(log_dir.iterdir())
        assert len(saved) == 1 and saved[0].read_text().startswith("hand 1:")
        assert c.saved == [
            "The match log is saved in", str(saved[0]), "Audit it with:",
            f"buraco-p2p verify {saved[0]}",
        ]
        rows = [line.strip() for line in r.screen().splitlines()]
        command = f"buraco-p2p verify {saved[0]}"
        # A command is never split over rows (a copied piece would not run): whole on its
        # own row, or, wider than the screen, said to be printed whole on quitting.
        assert command in rows or (
            "(wider than this screen: printed whole when you quit)" in rows
            and not any(row and row in command for row in rows if "/" in row)
        ), rows
        await r.press("h")
        assert "Match history" in r.screen()
        await r.press("q")  # the match is over: no question
        await asyncio.wait_for(r.task, 10)


def test_a_short_match_ends_on_the_result_saves_the_log_and_quits_without_asking(
    tmp_path: Path,
) -> None:
    asyncio.run(short_match(tmp_path))


class FailingBot(HeuristicBot):
    name = "failing"

    def choose_move(self, view: HandState, rng: random.Random) -> Move:
        raise RuntimeError("the bot broke")


async def failing_table() -> None:
    feed = PracticeTable(CLASSIC, 2, bot_delay=0, bot=FailingBot())
    async with running(CLASSIC, seed=2, feed=feed) as r:
        await asyncio.wait_for(asyncio.shield(r.task), 20)


def test_a_failure_on_the_table_side_ends_the_app_and_is_raised() -> None:
    with pytest.raises(ExceptionGroup) as info:
        asyncio.run(failing_table())
    assert info.group_contains(RuntimeError, match="the bot broke")



def test_a_click_on_an_own_meld_adds_the_selected_cards_to_it() -> None:
    def addable(t: LocalTable) -> bool:
        return (
            t.referee.turn == 0
            and t.referee.phase is Phase.PLAY
            and any(isinstance(m, AddToMeld) for m in legal_moves(t.views[0]))
        )

    table, match = find_position(CLASSIC, addable)
    add = next(m for m in legal_moves(table.views[0]) if isinstance(m, AddToMeld))
    app = TableApp(PracticeTable(CLASSIC, 1), input=DummyInput(), output=SizedOutput())
    sent = Sent()
    app.client = Client(snapshot_of(table, match), sent)
    app.client.selected = list(add.slots)
    rows = render(app.client, 132, 43, 0.0, app._click)
    label = f"{add.meld + 1:>2} "
    frag = next(f for r in rows for f in r if len(f) > 2 and f[1] == label)
    up = MouseEvent(Point(0, 0), MouseEventType.MOUSE_UP, MouseButton.LEFT, frozenset())
    frag[2](up)
    assert len(sent.moves) == 1 and isinstance(sent.moves[0], AddToMeld)
    assert sent.moves[0].meld == add.meld and set(sent.moves[0].slots) == set(add.slots)


def test_the_practice_table_refuses_a_move_out_of_turn_in_words() -> None:
    async def main() -> None:
        feed = PracticeTable(CLASSIC, 3, bot_delay=0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(feed.run)
            snap = feed.snapshot()
            while snap.view is None or snap.view.turn == 0:
                snap = await feed.next_snapshot(snap.version)
            with pytest.raises(MoveRefused) as info:
                await feed.submit(DrawStock(0))
            assert info.value.code == "wrong_player" and "turn" in info.value.reason
            with pytest.raises(MoveRefused):
                await feed.submit(DrawStock(1))  # not this seat's to make
            nursery.cancel_scope.cancel()

    trio.run(main)
