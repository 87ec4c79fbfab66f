"""Helpers for the client tests: a fixed-size dummy terminal, condition waits, a running app."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from buraco_p2p.rules import RuleSet
from buraco_p2p.ui import PracticeTable, TableApp

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
