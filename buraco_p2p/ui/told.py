"""The screen's one clock: a networked table as it has been told so far.

The session runs ahead of the screen: a bot plays in milliseconds, a hand's result is signed
while its last moves are still being shown, the next hand is shuffled behind the panel that
holds the last one. If the header read the session's scores, the panel its results and the
feed its news each at their own time, a person would see the new totals before the move that
made them, "match over" while cards are still being played, and the next deal announced in
the middle of this hand's end. So everything the screen says about where the match stands
follows one timeline, in the log's order:

- a `Beat` is one thing told: a move (its lines and the hand right after it), a line of the
  table's own news (a shuffle verified, a deal, a timeout, an agreement), or a hand's result
  and the match after it (`Standing`);
- the `Teller` tells the beats one at a time: it pauses after another seat's move (`pace`
  seconds, on this screen only), a little longer after the move that ends a hand, and holds a
  hand's result on screen (`hand_over`) until the player has seen it (`ready`);
- the screen draws only what has been told: the hand (`view`), the scores, the history and
  whether the match is over (`standing`), the turn clock (`turn_since`, started when the turn
  is shown, not when the session reached it). What is about the present (who the table waits
  for, a link down, a proposal to answer) is read live.

`skip` tells what is queued without pausing, until the queue is empty.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import trio

from buraco_p2p.engine import HandResult, HandState, Match

__all__ = ["Beat", "Standing", "Teller", "standing_of"]

PACE_S = 0.6  # on screen, after another seat's move, while more are waiting
END_PACES = 2  # after the move that ends a hand: that many paces before its result


@dataclass(frozen=True, slots=True)
class Standing:
    """The match as told: scores by match side, the finished hands' results, whether it is
    over (and who won), and the seat that deals next."""

    scores: tuple[int, ...]
    history: tuple[HandResult, ...] = ()
    over: bool = False
    winner: int | None = None
    next_dealer: int = -1


def standing_of(match: Match | None, sides: int, result: HandResult | None = None) -> Standing:
    """The standing of `match` as it is, or right after `result` (one of its results: a
    batch of entries caught up at once can hold several hands, each told in turn)."""
    if match is None:
        return Standing((0,) * sides)
    results = tuple(match.results)
    k = len(results)
    if result is not None:
        k = next((i + 1 for i, r in enumerate(results) if r is result), k)
    later = results[k:]
    if not later:
        return Standing(tuple(match.scores), results, match.over, match.winner, match.dealer)
    scores = list(match.scores)
    for r in later:
        for i, points in enumerate(r.match_points):
            scores[i] -= points
    return Standing(tuple(scores), results[:k], False, None, later[0].setup.dealer)


@dataclass(frozen=True, slots=True)
class Beat:
    """One thing told. `seat` made the move (None: the table's own news); `view` is the hand
    right after it (a move, or a new deal); `standing` the match after a result."""

    lines: tuple[str, ...] = ()
    seat: int | None = None
    view: HandState | None = None
    standing: Standing | None = None


class Teller:
    """Tells beats one at a time; `view`, `standing`, `hand_over` and `turn_since` are what
    the screen shows. `tell_lines(lines)` puts told lines in the feed; `publish()` asks for a
    new snapshot; `me()` is this player's seat (its own moves are not paused after)."""

    def __init__(
        self,
        standing: Standing,
        tell_lines: Callable[[tuple[str, ...]], None],
        publish: Callable[[], None],
        me: Callable[[], int],
    ) -> None:
        self.standing = standing
        self.view: HandState | None = None
        self.hand_over = False
        self.turn_since = time.monotonic()
        self.pace = PACE_S
        self._tell_lines = tell_lines
        self._publish = publish
        self._me = me
        self._beats: deque[Beat] = deque()
        self._added = trio.Event()
        self._skip = trio.Event()
        self._readied = trio.Event()

    # -- what the feed hands in -----------------------------------------------------------

    def add(self, beat: Beat) -> None:
        self._beats.append(beat)
        self._added.set()

    def start(self, view: HandState | None, standing: Standing) -> None:
        """Show the table as it is (a table attached or resumed): nothing queued is lost,
        and a hand whose result is in is held until `ready`."""
        self.view = view
        self.standing = standing
        self.turn_since = time.monotonic()
        if view is not None and view.ended and standing.history and (
            standing.history[-1].setup == view.setup
        ):
            self._hold()

    @property
    def behind(self) -> bool:
        """Whether something is still to be told."""
        return bool(self._beats) or self.hand_over

    def ready(self) -> None:
        """The player has seen the end of the hand: the next deal may be shown."""
        if self.hand_over:
            self.hand_over = False
            if not self.standing.over:
                self.view = None  # nothing of the next hand has been told yet
        self._readied.set()

    def skip(self) -> None:
        """Tell what is queued now, without pausing, until the queue is empty."""
        self._skip.set()

    # -- the clock ------------------------------------------------------------------------

    async def run(self) -> None:
        """Tell the beats, in order, until cancelled."""
        while True:
            while self.hand_over:
                await self._readied.wait()
            if not self._beats:
                self._skip = trio.Event()
                self._added = trio.Event()
                self._publish()
                await self._added.wait()
                continue
            beat = self._beats.popleft()
            self._tell(beat)
            self._publish()
            await self._pause(beat)

    def _tell(self, beat: Beat) -> None:
        if beat.lines:
            self._tell_lines(beat.lines)
        if beat.view is not None:
            old = self.view
            self.view = beat.view
            if old is None or old.setup != beat.view.setup or old.turn != beat.view.turn:
                self.turn_since = time.monotonic()
        st = beat.standing
        if st is not None:
            ended = len(st.history) > len(self.standing.history) or (
                st.over and not self.standing.over
            )
            self.standing = st
            if ended:
                self._hold()

    def _hold(self) -> None:
        self.hand_over = True
        self._readied = trio.Event()

    async def _pause(self, beat: Beat) -> None:
        if self.hand_over or self._skip.is_set() or beat.seat is None:
            return
        if beat.view is not None and beat.view.ended:
            pause = END_PACES * self.pace  # the last move stays in sight before the result
        elif beat.seat != self._me():
            pause = self.pace  # the next move (usually on its way) does not replace it at once
        else:
            return
        with trio.move_on_after(pause):
            await self._skip.wait()
