"""Helpers for the client tests: a fixed-size dummy terminal, condition waits, a running app."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from buraco_p2p.bots import HeuristicBot
from buraco_p2p.engine import HandResult, LocalTable, Match, Move
from buraco_p2p.rules import RuleSet
from buraco_p2p.ui import Fairness, PracticeTable, Progress, TableApp, TableSnapshot
from buraco_p2p.ui.canvas import Row

WAIT = 30.0


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

    async def press(self, *keys: str) -> None:
        """Type keys into the terminal input; returns once the app has read them all."""
        before = self.app.keys_seen
        self.keys.send_text("".join(keys))
        await until(lambda: self.app.keys_seen >= before + len(keys), f"keys {keys!r} read")


@asynccontextmanager
async def running(
    rules: RuleSet, seed: int, cols: int = 80, rows: int = 24, ascii: bool = False
) -> AsyncIterator[Running]:
    with create_pipe_input() as keys:
        feed = PracticeTable(rules, seed, bot_delay=0)
        app = TableApp(feed, input=keys, output=SizedOutput(cols, rows), ascii=ascii)
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
