"""A table stopped at a chosen position of a bot-played practice match, for the real
full-screen client: the seat on turn is the player's, every other seat waits.

`eleven_melds()` is the first hand of preset `us`, seed 1, at move 192: seat 3's turn to
play, its side with eleven melds or more on the table and a card in hand (slot 61) that fits
meld 1 and meld 11 alike. Run as a program (`PYTHONPATH=. python tests/ui/position_helpers.py`)
it opens the client on that position in this terminal.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).parent))

from ui_helpers import positions

from buraco_p2p.engine import LocalTable, Match, Move
from buraco_p2p.rules import get_preset
from buraco_p2p.ui import Fairness, MoveRefused, PracticeTable, TableSnapshot
from buraco_p2p.ui.feed import SaveUnavailable

MOVE = 192
SLOT = 61


def eleven_melds() -> tuple[LocalTable, Match]:
    for table, match in positions(get_preset("us"), 1):
        if len(table.referee.moves) == MOVE:
            return table, match
    raise AssertionError("the position is gone: the bots or the deal changed")


class PositionFeed:
    """A `TableFeed` over a `LocalTable`: the player's moves are taken, nobody else moves."""

    def __init__(self, table: LocalTable, match: Match) -> None:
        self.table = table
        self.match = match
        self.me = table.referee.turn
        self._seats = PracticeTable(match.rules, 1, me=self.me).seats
        self._version = 0
        self._since = time.monotonic()
        self._changed = trio.Event()
        self._snap = self._build()

    def _build(self) -> TableSnapshot:
        self._version += 1
        return TableSnapshot(
            title="practice table", rules=self.match.rules, me=self.me, seats=self._seats,
            view=self.table.views[self.me].copy(), scores=tuple(self.match.scores),
            fairness=Fairness(checked=False), version=self._version, turn_since=self._since,
        )  # fmt: skip

    def snapshot(self) -> TableSnapshot:
        return self._snap

    async def next_snapshot(self, after: int) -> TableSnapshot:
        while self._snap.version <= after:
            await self._changed.wait()
        return self._snap

    async def submit(self, move: Move) -> None:
        problem = self.table.views[self.me].check(move)
        if problem is not None:
            raise MoveRefused(problem.message, problem.code.value)
        self.table.push(move)
        self._snap = self._build()
        self._changed.set()
        self._changed = trio.Event()
        await trio.lowlevel.checkpoint()

    async def say(self, text: str) -> None:
        await trio.lowlevel.checkpoint()

    async def ready(self) -> None:
        await trio.lowlevel.checkpoint()

    async def skip(self) -> None:
        await trio.lowlevel.checkpoint()

    async def save_log(self, path: Path) -> str:
        raise SaveUnavailable("a position keeps no log")

    async def agree(self, action: str) -> str:
        await trio.lowlevel.checkpoint()
        return "nothing to agree on"

    async def run(self) -> None:
        await trio.sleep_forever()


if __name__ == "__main__":
    from buraco_p2p.ui.app import run_client

    run_client(PositionFeed(*eleven_melds()))
