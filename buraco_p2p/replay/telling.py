"""One deal told again from one point of view: the hand after every move, and the feed's words.

A point of view is a seat (the table as that player saw it: their own cards, the cards shown
to everyone, a card they drew, a pot they took) or `FACE_UP` (every card face up, as a
referee sees it). The engine plays the deal's moves again on that view, fed the reveals the
session fed it at the table (docs/protocol.md 4.4: the deal to each seat, the shown cards
before a move, a drawn card to its drawer at once, a pot to its taker once the seat before
the taker has played, the count of every hand at the end), and the table's own narrator
(`buraco_p2p.text.narration`) tells each move from that view, so the words are those the
seat's feed gave at the table: `you` for the seat itself, its own drawn card named.

This needs every card of the deal, which the log gives only once the hand's keys are opened
at its end. A hand voided or cut short before that is told from the public record only (the
cards shown to everyone, when they were shown), from any point of view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from buraco_p2p.engine import (
    HandSetup,
    HandState,
    IllegalMove,
    Move,
    PlayerView,
    RefereeView,
    RevealRequest,
)
from buraco_p2p.replay.record import HandRecord
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.narration import Narrator, dealt_line, shuffle_line

__all__ = ["FACE_UP", "Told", "tell_hand"]

FACE_UP: Final = -1  # the point of view with every card face up

Names = Callable[[int], str]


class Told:
    """A deal from one point of view, told as far as it is asked: `state(k)` is the hand
    after its first k moves (`state(0)`: as dealt), `lines(k)` the feed's lines for move k
    (`lines(0)`: the deal's own, the shuffles verified and the deal), `movers[k]` the seat
    that made move k. `public_only`: the hand's keys were never opened, so no hidden card is
    known. Stepping on costs one move; the moves told are kept."""

    def __init__(self, rec: HandRecord, play: _Play, narrator: Narrator, first: tuple[str, ...]
                 ) -> None:  # fmt: skip
        assert rec.public is not None
        self.moves = rec.public.moves
        self.movers = (-1, *(m.seat for m in self.moves))
        self.public_only = not rec.opened
        self._play = play
        self._narrator = narrator
        narrator.follow(play.view)
        self._states = [play.view.copy()]
        self._lines = [first]

    def __len__(self) -> int:
        """The states there are: one per move, and the deal."""
        return len(self.moves) + 1

    def state(self, k: int) -> HandState:
        self._tell(k)
        return self._states[k]

    def lines(self, k: int) -> tuple[str, ...]:
        self._tell(k)
        return self._lines[k]

    def _tell(self, k: int) -> None:
        while len(self._states) <= k:
            n = len(self._states)
            move = self.moves[n - 1]
            self._play.push(n, move)
            steps = self._narrator.follow(self._play.view)
            self._lines.append(tuple(line for step in steps for line in step.lines))
            self._states.append(self._play.view.copy())


def names_for(nick: Names, seat: int) -> Names:
    """How the feed names a seat from a point of view: `you` for the viewer itself."""
    return lambda s: "you" if s == seat else nick(s)


def deal_lines(rec: HandRecord, n: int, nick: Names, name: Names) -> tuple[str, ...]:
    """What the feed said before a deal's first move: the notices carried over, each shuffle
    as its proof was verified (by the shuffler's nickname) and the deal (`you` for the
    viewer's own)."""
    out = list(rec.before)
    out.extend(shuffle_line(k, n, nick(seat)) for k, seat in enumerate(rec.shufflers, 1))
    if rec.setup is not None:
        out.append(dealt_line(rec.deal, name(rec.dealer), n))
    return tuple(out)


def tell_hand(rec: HandRecord, seat: int, nick: Names, glyphs: Glyphs) -> Told:
    """The deal `rec` told from `seat`'s point of view (`FACE_UP`: every card face up)."""
    setup = rec.setup
    if rec.public is None or setup is None:
        raise ValueError(f"deal {rec.deal} was never dealt")
    name = names_for(nick, seat)
    cards = rec.cards
    play: _Play = (
        _Opened(setup, cards, None if seat == FACE_UP else seat)
        if cards is not None
        else _Public(setup, rec)
    )
    first = deal_lines(rec, setup.rules.players, nick, name)
    return Told(rec, play, Narrator(name, glyphs), first)


class _Play:
    view: HandState

    def push(self, k: int, move: Move) -> None: ...


class _Opened(_Play):
    """A deal with every card known, on the view of one seat (or the referee's), fed the
    reveals the session fed that seat, when it fed them."""

    def __init__(self, setup: HandSetup, cards: Sequence[int], seat: int | None) -> None:
        self.ref = RefereeView(setup, cards)
        self.cards = cards
        self.seat = seat
        self.view: HandState = self.ref if seat is None else PlayerView(setup, seat)
        self.held: list[RevealRequest] = []  # a pot's private reveal, held back (4.4 step 5)
        self._deliver(self.ref.deal_reveals())

    def _deliver(self, requests: Sequence[RevealRequest]) -> None:
        if self.seat is None:
            return
        for r in requests:
            if r.seat is None or r.seat == self.seat:
                self.view.reveal(r.slot, self.cards[r.slot], public=r.seat is None)

    def push(self, k: int, move: Move) -> None:
        ref = self.ref
        shown = ref.exposed_by(move)
        requests = ref.push(move)
        if self.seat is not None:
            self._deliver([RevealRequest(s, None) for s in shown])
            self.view.push(move)
        if ref.ended:  # the count: every card left in a hand, face up
            self._deliver([RevealRequest(s, None) for h in ref.hands for s in h])
            return
        now = [r for r in requests if r.seat is None or r.seat == ref.turn]
        self.held.extend(r for r in requests if r.seat is not None and r.seat != ref.turn)
        due = [r for r in self.held if r.seat is not None and ref.next_seat[ref.turn] == r.seat]
        self.held = [r for r in self.held if r not in due]
        self._deliver(now + due)


class _Public(_Play):
    """A deal whose keys were never opened: the public record, each card from the move that
    showed it."""

    def __init__(self, setup: HandSetup, rec: HandRecord) -> None:
        assert rec.public is not None
        self.known = rec.public.known
        self.view = HandState(setup, None, None)
        self.by_move: dict[int, list[int]] = {}
        for slot, k in rec.public_from.items():
            self.by_move.setdefault(k, []).append(slot)
        self._show(self.by_move.pop(0, []))

    def _show(self, slots: Sequence[int]) -> None:
        for s in sorted(slots):
            if self.known[s] >= 0:
                self.view.reveal(s, self.known[s], public=True)

    def push(self, k: int, move: Move) -> None:
        due = self.by_move.pop(k, [])
        try:
            shown = set(self.view.exposed_by(move))
        except IllegalMove:
            shown = set(due)
        self._show([s for s in due if s in shown])
        self.view.push(move)
        self._show([s for s in due if s not in shown])
