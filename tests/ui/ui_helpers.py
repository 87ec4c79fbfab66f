"""Helpers for the client tests: a fixed-size dummy terminal, condition waits, a running app."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from buraco_p2p.bots import HeuristicBot
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    HandResult,
    LayDown,
    LocalTable,
    Match,
    Move,
    Phase,
)
from buraco_p2p.rules import RuleSet
from buraco_p2p.ui import Fairness, PracticeTable, Progress, TableApp, TableSnapshot
from buraco_p2p.ui.canvas import Row

WAIT = 30.0
TAB, ENTER, ESC, RIGHT = "\t", "\r", "\x1b", "\x1b[C"


class SizedOutput(DummyOutput):
    """A terminal that draws nothing and says it is `cols` x `rows`."""

    def __init__(self, cols: int = 80, rows: int = 24) -> None:
        self.size = Size(rows=rows, columns=cols)

    def get_size(self) -> Size:
        return self.size


async def until(pred: Callable[[], bool], what: str, limit: float = WAIT) -> None:
    """Wait for a condition the app reaches by itself (bots move, the table answers)."""
    end = time.monotonic() + limit
    while not pred():
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.002)


@dataclass
class Running:
    app: TableApp
    feed: PracticeTable
    keys: PipeInput
    task: asyncio.Future[None]

    def screen(self) -> str:
        return self.app.screen_text()

    async def drawn(self) -> None:
        """Wait for the application to draw the screen again (mouse handlers are set then)."""
        renders = 0

        def count(_: object) -> None:
            nonlocal renders
            renders += 1

        self.app.app.after_render += count
        try:
            self.app.app.invalidate()
            await until(lambda: renders > 0, "a redraw")
        finally:
            self.app.app.after_render -= count

    async def press(self, *keys: str) -> None:
        """Type keys into the terminal input; returns once the app has read them all."""
        before = self.app.keys_seen
        self.keys.send_text("".join(keys))
        await until(lambda: self.app.keys_seen >= before + len(keys), f"keys {keys!r} read")


@asynccontextmanager
async def running(
    rules: RuleSet,
    seed: int,
    cols: int = 80,
    rows: int = 24,
    ascii: bool = False,
    feed: PracticeTable | None = None,
    log_dir: Path | None = None,
) -> AsyncIterator[Running]:
    with create_pipe_input() as keys:
        feed = feed or PracticeTable(rules, seed, bot_delay=0)
        app = TableApp(
            feed, input=keys, output=SizedOutput(cols, rows), ascii=ascii, log_dir=log_dir
        )
        task = asyncio.ensure_future(app.run())
        try:
            yield Running(app, feed, keys, task)
        finally:
            if not task.done():
                app.app.exit()
            await asyncio.wait_for(task, WAIT)


def positions(rules: RuleSet, seed: int, me: int = 0) -> Iterator[tuple[LocalTable, Match]]:
    """Every position of bot-played matches (seat `me`'s turn or not), move by move."""
    rng = random.Random(seed)
    bot = HeuristicBot()
    match = Match(rules, 0)
    while not match.over:
        table = LocalTable.shuffled(match.next_setup(), rng)
        while not table.ended:
            yield table, match
            seat = table.referee.turn
            table.push(bot.choose_move(table.views[seat], rng))
        yield table, match
        match.record(table.result())


def snapshot_of(
    table: LocalTable,
    match: Match,
    me: int = 0,
    *,
    fairness: Fairness | None = None,
    progress: Progress | None = None,
    history: tuple[HandResult, ...] = (),
) -> TableSnapshot:
    """The snapshot a practice table would show seat `me` in this position."""
    feed = PracticeTable(match.rules, 1, me=me)
    return TableSnapshot(
        title="practice table",
        rules=match.rules,
        me=me,
        seats=feed.seats,
        view=table.views[me].copy(),
        scores=tuple(match.scores),
        fairness=fairness or Fairness(checked=False),
        version=len(table.referee.moves) + 1,
        history=history,
        hand_over=table.ended,
        progress=progress,
    )


def find_position(
    rules: RuleSet, pred: Callable[[LocalTable], bool], seeds: range = range(1, 40)
) -> tuple[LocalTable, Match]:
    for seed in seeds:
        for table, match in positions(rules, seed):
            if pred(table):
                return table, match
    raise AssertionError("no position found")


def text_of(rows: list[Row]) -> str:
    return "\n".join("".join(f[1] for f in row) for row in rows)


class Sent:
    """Collects the moves a client sends."""

    def __init__(self) -> None:
        self.moves: list[Move] = []

    def __call__(self, move: Move) -> None:
        self.moves.append(move)


async def my_turn_or_end(r: Running) -> None:
    c = r.app.client
    await until(lambda: c.my_turn() or c.snap.hand_over, "the player's turn or the hand's end")


async def play_turn(r: Running) -> str:
    """One whole turn by keys: draw; lay down or add what the hints offer; discard.

    Returns what the turn did with melds ("meld", "add" or "") so the test can look for it."""
    c = r.app.client
    view = c.view
    assert view is not None
    if view.phase is Phase.DRAW:
        await r.press("d")
        await until(lambda: c.snap.view is not None and c.snap.view.phase is not Phase.DRAW,
                    "the draw")
    did = ""
    for _ in range(6):  # play at most a few melds per turn
        if not c.my_turn():
            return did
        await r.press(TAB)
        hinted = c.hints[c.hint_at] if c.hint_at >= 0 else None
        if not isinstance(hinted, LayDown | AddToMeld):
            break
        assert "hint 1/" in r.screen() and "(Enter: play it?)" in r.screen()
        await enter_and_wait(r, "the meld taken")
        did = "meld" if isinstance(hinted, LayDown) else "add"
    if not c.my_turn():
        return did
    await r.press(ESC)
    # Discard: cycle the hints to a discard and play it.
    for _ in range(len(c.hints) + 1):
        await r.press(TAB)
        if isinstance(c.hints[c.hint_at], Discard):
            break
    await enter_and_wait(r, "the discard taken")
    return did


async def enter_and_wait(r: Running, what: str) -> None:
    """Enter asks to play the hinted move, y plays it; wait until the table has taken it."""
    c = r.app.client
    version = c.snap.version
    await r.press(ENTER)
    await r.press("y")
    await until(lambda: c.snap.version > version and not c.pending, what)
