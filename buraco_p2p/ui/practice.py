"""The practice table: the engine's `LocalTable` in this process, heuristic bots in the
other seats, behind the same `TableFeed` a networked session offers.

There is no cryptography here (the referee deals from a seeded random source), so the client
says "practice table" and shows no fairness count. Everything random (first dealer, cuts,
shuffles, the bots' choices) comes from the seed, so a seed replays a practice match as long
as the human plays the same moves. Bots wait `bot_delay` seconds before each move so that a
person can follow the play; tests set it to zero.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import trio

from buraco_p2p.bots import Bot, HeuristicBot, StrongBot
from buraco_p2p.engine import (
    HandResult,
    HandState,
    IllegalMove,
    LocalTable,
    Match,
    Move,
    TakeDiscard,
)
from buraco_p2p.rules import RuleSet
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.narration import Narrator
from buraco_p2p.ui.feed import (
    Action,
    ChatLine,
    Fairness,
    MoveRefused,
    SaveUnavailable,
    SeatInfo,
    TableSnapshot,
)

BOT_NAMES = ("Ana", "Bia", "Caio", "Davi", "Edu")


def hand_side(view: HandState | None, seat: int, match_sides: int) -> int:
    """The side `seat` plays on now (the three-player side change included); before the
    first deal, its match side (a team at four and six, the player at two and three), which
    is the side every hand starts with."""
    return seat % match_sides if view is None else view.side_of(seat)


def sides_text(seats: tuple[SeatInfo, ...]) -> str:
    """Who plays with whom, after the sides changed (three players, the first pot taken)."""
    sides: dict[int, list[str]] = {}
    for s in seats:
        sides.setdefault(s.side, []).append(s.nick)
    parts = [" and ".join(names) + (" play together" if len(names) > 1 else " plays alone")
             for names in sides.values()]
    return "sides changed: " + "; ".join(parts)
MAX_ACTIONS = 12
MAX_CHAT = 500


class PracticeTable:
    """A `TableFeed` over an in-process referee, the human at seat `me`."""

    def __init__(
        self,
        rules: RuleSet,
        seed: int,
        *,
        me: int = 0,
        nick: str = "You",
        bot_delay: float = 0.6,
        bot: Bot | None = None,
        bot_level: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        players = rules.players
        if not 0 <= me < players:
            raise ValueError(f"seat {me} is not at a table of {players}")
        self.rules = rules
        self.seed = seed
        self.me = me
        self.bot_delay = bot_delay
        self._clock = clock
        self._rng = random.Random(f"buraco-p2p/practice/{seed}")
        self._bot = bot if bot is not None else HeuristicBot()
        self.bot_level = bot_level
        self._bot_rngs = [random.Random(self._rng.getrandbits(64)) for _ in range(players)]
        names = iter(BOT_NAMES)
        self.nicks = tuple(nick if s == me else next(names, f"Bot {s}") for s in range(players))
        self.match = Match(rules, self._rng.randrange(players))
        self.table: LocalTable | None = None
        self.seats = self._seats()
        self._results: list[HandResult] = []
        self._actions: list[Action] = []
        self._chat: list[ChatLine] = [ChatLine(None, "practice table: bots, no cryptography")]
        self._version = 0
        self._changed = trio.Event()
        self._my_move = trio.Event()
        self._ready = trio.Event()
        self._skip = trio.Event()
        self._narrator = Narrator(self._name, Glyphs(deck_size=rules.deck_size))
        self._hand_over = False
        self._turn_since = clock()
        self._started = clock()
        self._snapshot = self._build()

    # ------------------------------------------------------------------ the feed

    def snapshot(self) -> TableSnapshot:
        return self._snapshot

    async def next_snapshot(self, after: int) -> TableSnapshot:
        while self._snapshot.version <= after:
            await self._changed.wait()
        return self._snapshot

    async def submit(self, move: Move) -> None:
        table = self.table
        if table is None or self._hand_over or table.ended:
            raise MoveRefused("no hand is being played", "hand_over")
        if move.seat != self.me:
            raise MoveRefused("that move is not yours to make", "wrong_player")
        problem = table.views[self.me].check(move)
        if problem is not None:
            raise MoveRefused(problem.message, problem.code.value)
        try:
            self._push(move)
        except IllegalMove as e:  # the referee knows every card; the view judged the same
            raise MoveRefused(e.message, e.code.value) from None
        self._my_move.set()

    async def say(self, text: str) -> None:
        text = text.strip()
        if text:
            self._chat.append(ChatLine(self.me, text[:200]))
            del self._chat[:-MAX_CHAT]
            self._publish()

    async def ready(self) -> None:
        self._ready.set()

    async def skip(self) -> None:
        self._skip.set()
        await trio.lowlevel.checkpoint()

    async def agree(self, action: str) -> str:
        await trio.lowlevel.checkpoint()
        return "nobody is away at the practice table: nothing to agree on"

    async def save_log(self, path: Path) -> str:
        raise SaveUnavailable("a practice table deals without cryptography and keeps no signed log")

    async def run(self) -> None:
        """Deal and play hands until the match is over, then wait to be cancelled."""
        while not self.match.over:
            await self._play_hand()
        self._publish()
        await trio.sleep_forever()

    # ------------------------------------------------------------------ the play

    async def _play_hand(self) -> None:
        rules = self.rules
        cut = self._rng.randint(1, rules.deck_size - 1) if rules.cut_22_bonus else None
        setup = self.match.next_setup(cut=cut)
        self.table = table = LocalTable.shuffled(setup, self._rng)
        self.seats = self._seats()
        self._hand_over = False
        self._ready = trio.Event()
        self._actions.clear()
        dealer = self._name(setup.dealer)
        self._chat.append(ChatLine(None, f"hand {setup.hand_number + 1} dealt by {dealer}"))
        self._turn_since = self._clock()
        self._publish()
        while not table.ended:
            seat = table.referee.turn
            if seat == self.me:
                self._skip = trio.Event()
                self._my_move = trio.Event()
                await self._my_move.wait()
                continue
            if not self._skip.is_set():
                with trio.move_on_after(self.bot_delay):
                    await self._skip.wait()
            await trio.lowlevel.checkpoint()
            view, rng = table.views[seat], self._bot_rngs[seat]
            if isinstance(self._bot, StrongBot):
                # a search takes its budget: in a thread, so the screen stays live meanwhile
                move = await trio.to_thread.run_sync(self._bot.choose_move, view, rng)
            else:
                move = self._bot.choose_move(view, rng)
            self._push(move)
        result = table.result()
        self.match.record(result)
        if not self.match.time_is_up and self.match.check_time(self._clock() - self._started):
            more = "" if self.match.over else ": the lead is tied, the match plays on"
            self._chat.append(ChatLine(None, f"the time is up{more}"))
        self._results.append(result)
        self._hand_over = True
        self._publish()
        if not self.match.over:
            await self._ready.wait()

    def _name(self, seat: int) -> str:
        return "you" if seat == self.me else self.nicks[seat]

    def _seats(self) -> tuple[SeatInfo, ...]:
        view = None if self.table is None else self.table.referee
        match_sides = len(self.match.scores)
        return tuple(
            SeatInfo(s, name, hand_side(view, s, match_sides), s % match_sides, s != self.me)
            if s == self.me
            else SeatInfo(s, name, hand_side(view, s, match_sides), s % match_sides, True,
                          bot_level=self.bot_level)
            for s, name in enumerate(self.nicks)
        )

    def _push(self, move: Move) -> None:
        table = self.table
        assert table is not None
        ref = table.referee
        before = ref.turn
        shown = reversed(ref.pile) if isinstance(move, TakeDiscard) else ref.exposed_by(move)
        cards = tuple(ref.known[s] for s in shown)
        table.push(move)
        for step in self._narrator.follow(table.views[self.me]):
            self._chat.extend(ChatLine(None, text) for text in step.lines)
        del self._chat[:-MAX_CHAT]
        self._actions.append(Action(move.seat, move, cards))
        del self._actions[:-MAX_ACTIONS]
        if ref.turn != before or ref.ended:
            self._turn_since = self._clock()
        seats = self._seats()
        if seats != self.seats:
            self._chat.append(ChatLine(None, sides_text(seats)))
            self.seats = seats
        self._publish()

    # ------------------------------------------------------------------ snapshots

    def _publish(self) -> None:
        self._version += 1
        self._snapshot = self._build()
        self._changed.set()
        self._changed = trio.Event()

    def _build(self) -> TableSnapshot:
        table = self.table
        match = self.match
        return TableSnapshot(
            title="practice table",
            rules=self.rules,
            me=self.me,
            seats=self.seats,
            view=None if table is None else table.views[self.me].copy(),
            scores=tuple(match.scores),
            fairness=Fairness(checked=False),
            version=self._version,
            history=tuple(self._results),
            hand_over=self._hand_over,
            match_over=match.over,
            winner=match.winner,
            chat=tuple(self._chat),
            actions=tuple(self._actions),
            turn_since=self._turn_since,
            can_save_log=False,
            next_dealer=match.dealer,
            extra={"seed": str(self.seed)},
        )
