"""The table told as it happens: one set of words for the full screen, line mode and practice.

A `Narrator` follows one seat's engine view of the hand. Each time it is shown the view again
it replays the moves it has not told yet on a shadow copy of the hand, move by move, so that
it can compare the table before and after each move: who drew (from the stock: how many, and
the card if it is ours; the first card turned up: which), who took the pile and how many cards,
every meld laid down or extended with its cards, every discard, an opening shown under its
minimum or failed, a pot taken, a buraco completed (clean or dirty), the stock running low and
out, a pot becoming the stock, the sides changing at three, who went out. Everything it says
is public state (plus the viewer's own cards); it never guesses. Each told move comes back as
a `Step`: the lines and the state of the hand right after that move, so that a screen can show
the moves one at a time (`driver_feed` paces a bot's moves with it).

`tell_event` says the session's own news (a deal, the end of a hand, timeouts, agreements to
void, end or replace, faults) in the same voice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from buraco_p2p.cards import RANK_LETTERS
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    EndReason,
    HandResult,
    HandState,
    IllegalMove,
    LayDown,
    Move,
    TableMeld,
    TakeDiscard,
    TurnUpFirst,
)
from buraco_p2p.engine.values import POT_IS_STOCK
from buraco_p2p.rules import MeldKind
from buraco_p2p.session.events import Abandoned
from buraco_p2p.text.glyphs import Glyphs

__all__ = [
    "LOW_STOCK", "TIME_UP", "Narrator", "Step", "abandoned_text", "count", "dealt_line",
    "hand_over_line", "meld_points", "shuffle_line", "tell_move", "voided_line",
]

LOW_STOCK = 10  # the stock is said to run low once, when it first holds this many cards or fewer

Names = Callable[[int], str]


@dataclass(frozen=True, slots=True)
class Step:
    """One move told: `seat` made it, `lines` say it, `state` is the hand right after it."""

    seat: int
    lines: tuple[str, ...]
    state: HandState


def count(n: int, what: str) -> str:
    """`1 card`, `3 cards`: a number with its noun in the right number."""
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def possessive(who: str) -> str:
    """`your` for `you`, else `Bia's`."""
    return "your" if who == "you" else f"{who}'s"


def meld_points(view: HandState, side: int) -> int:
    """What a side has on the table this hand, as it lies: its melds' card points and buraco
    bonuses (the pot and the cards in hand count only at the end)."""
    if side >= len(view.melds):
        return 0
    return sum(tm.meld.card_points + tm.meld.bonus for tm in view.melds[side])


def _cards(view: HandState, slots: Sequence[int], g: Glyphs) -> str:
    return " ".join("??" if view.known[s] < 0 else g.card(view.known[s]) for s in slots)


LONG_MELD = 6  # a meld longer than this is told by its ends and its length


def _meld(tm: TableMeld, g: Glyphs) -> str:
    faces = tm.meld.faces
    if len(faces) <= LONG_MELD:
        return g.faces(faces)
    if tm.meld.kind is MeldKind.RUN:
        return f"the run {g.face(faces[0])} to {g.face(faces[-1])} ({len(faces)} cards)"
    rank = tm.meld.rank
    letter = RANK_LETTERS[rank - 1] if rank is not None else "?"
    return f"the set of {letter} ({len(faces)} cards)"


def _buraco(tm: TableMeld) -> str:
    return "clean" if tm.meld.clean else "dirty"


def tell_move(
    before: HandState, move: Move, after: HandState, name: Names, g: Glyphs
) -> list[str]:
    """The lines one move makes, from the hand before and after it (`name(seat)` names a
    seat: `you` for the viewer)."""
    seat = move.seat
    who = name(seat)
    out: list[str] = []
    if isinstance(move, DrawStock):
        drawn = [s for s in after.hands[seat] if s not in before.hands[seat]]
        card = ""
        if drawn and after.viewer == seat and all(after.known[s] >= 0 for s in drawn):
            card = ": " + _cards(after, drawn, g)
        out.append(f"{who} drew {count(len(drawn) or 1, 'card')} from the stock{card}")
    elif isinstance(move, TurnUpFirst):
        first = before.first_slot
        shown = _cards(after, (first,), g) if first >= 0 else "the card"
        out.append(f"{who} turned up {shown} and drew the next card")
    elif isinstance(move, TakeDiscard):
        n = len(before.pile)
        top = _cards(before, (before.pile[-1],), g) if before.pile else ""
        shown = f", showing {_cards(before, move.justify, g)}" if move.justify else ""
        out.append(f"{who} took the pile ({count(n, 'card')}, top {top}){shown}")
    elif isinstance(move, Discard):
        out.append(f"{who} discarded {_cards(before, (move.slot,), g)}")
    elif isinstance(move, LayDown):
        out.extend(_laid_down(before, move, after, who, g))
    elif isinstance(move, AddToMeld):
        side = after.side_of(seat)
        melds = after.melds[side] if side < len(after.melds) else []
        into = f" to {_meld(melds[move.meld], g)}" if move.meld < len(melds) else ""
        out.append(f"{who} added {_cards(before, move.slots, g)}{into}")
    out.extend(_consequences(before, move, after, name, g))
    return out


def _laid_down(before: HandState, move: LayDown, after: HandState, who: str, g: Glyphs
               ) -> list[str]:  # fmt: skip
    side_before = before.side_of(move.seat)
    side = after.side_of(move.seat)
    new = after.melds[side][len(before.melds[side_before]) :] if side == side_before else []
    groups = " and ".join(_cards(before, m, g) for m in move.melds)
    if new:
        shown = " and ".join(g.faces(tm.meld.faces) for tm in new)
        if before.opened[side_before]:
            return [f"{who} laid down {shown}"]
        return [f"{who} opened with {shown} ({after.opening_points() or _points(new)} points)"]
    if after.failed[side] > before.failed[side_before]:
        need = after.initial_minimum(side)
        return [f"{who} showed {groups}: under the opening minimum, a failed attempt; "
                f"the cards go back to the hand and the minimum is now {need}"]  # fmt: skip
    if after.opening:
        need = after.initial_minimum(side, move.seat)
        return [f"{who} showed {groups} to open: {after.opening_points()} of {need} so far"]
    return [f"{who} laid down {groups}"]


def _points(melds: Sequence[TableMeld]) -> int:
    return sum(tm.meld.card_points for tm in melds)


def _consequences(
    before: HandState, move: Move, after: HandState, name: Names, g: Glyphs
) -> list[str]:
    """What a move set off besides itself: buracos, pots, the stock, the sides, the end."""
    out: list[str] = []
    seat = move.seat
    side_b, side_a = before.side_of(seat), after.side_of(seat)
    if side_a < len(after.melds) and side_b == side_a:
        old = before.melds[side_b]
        for i, tm in enumerate(after.melds[side_a]):
            was = old[i].meld.is_buraco if i < len(old) else False
            if tm.meld.is_buraco and not was:
                out.append(f"buraco! {name(seat)} completed a {_buraco(tm)} buraco")
    for side in range(min(len(after.team_pot), len(before.team_pot))):
        if after.team_pot[side] >= 0 > before.team_pot[side]:
            taker = after.pot_taker[side] if after.pot_taker[side] >= 0 else seat
            size = len(after.layout.pots[after.team_pot[side]])
            out.append(f"{name(taker)} took a pot ({count(size, 'card')})")
    if not isinstance(move, LayDown) and side_a == side_b and side_a < len(after.failed) and (
        after.failed[side_a] > before.failed[side_b]
    ):  # the turn ended under the opening minimum
        need = after.initial_minimum(side_a)
        whose = possessive(name(seat))
        out.append(f"{whose} opening fell short: the cards go back to the hand and the "
                   f"minimum to open is now {need}")  # fmt: skip
    if after.side_change is not None and before.side_change is None:
        ch = after.side_change
        out.append(f"sides change: {name(ch.solo)} plays alone, "
                   f"{name(ch.partners[0])} and {name(ch.partners[1])} together")  # fmt: skip
    became = [i for i, o in enumerate(after.pot_owner)
              if o != before.pot_owner[i] and o == POT_IS_STOCK]  # fmt: skip
    if became:
        stock = count(len(after.stock), "card")
        out.append(f"the stock ran out: a pot becomes the stock ({stock})")
    elif len(after.stock) < len(before.stock):
        left = len(after.stock)
        if left == 0:
            out.append("the stock ran out: this is the last turn")
        elif left <= LOW_STOCK < len(before.stock):
            out.append(f"the stock is running low: {count(left, 'card')} left")
    if after.ended and not before.ended:
        out.append(hand_over_line(after, name))
    return out


def hand_over_line(view: HandState, name: Names) -> str:
    """How the hand ended, in one line."""
    if view.end_reason is EndReason.WENT_OUT and view.went_out >= 0:
        return f"{name(view.went_out)} went out: the hand is over"
    return "the stock is out: the hand is over"


class Narrator:
    """Tells the moves of one seat's view of the hand, each once, as they are applied."""

    def __init__(self, name: Names, glyphs: Glyphs) -> None:
        self.name = name
        self.glyphs = glyphs
        self.shadow: HandState | None = None

    def follow(self, view: HandState | None) -> list[Step]:
        """The moves `view` has applied since the last call, told one by one.

        A view of a new hand starts a new shadow from that hand's deal. Should the shadow ever
        refuse a move the view took (it cannot: both apply the same moves to the same public
        state), it is replaced by a copy of the view and the moves are told without details.
        """
        if view is None:
            return []
        shadow = self.shadow
        done = len(shadow.moves) if shadow is not None else 0
        if (
            shadow is None
            or shadow.setup != view.setup
            or done > len(view.moves)
            or (done and view.moves[done - 1] != shadow.moves[-1])
        ):  # a new hand, or the same deal dealt again after a void
            shadow = HandState(view.setup, view.viewer, None)
            self.shadow = shadow
        steps: list[Step] = []
        moves = view.moves[len(shadow.moves) :]
        if moves and self._card_on_its_way(shadow, moves[-1], view):
            moves = moves[:-1]  # told with its card once the card is ours to see
        for move in moves:
            # Every card known now was known when the move was made or is ours: the move's own
            # cards were shown before it, and our own cards are ours to see.
            shadow.known = list(view.known)
            shadow.slot_of = dict(view.slot_of)
            shadow.public = set(view.public)
            shadow.awaiting_public = set()
            before = shadow.copy()
            try:
                shadow.push(move)
            except IllegalMove:  # never let telling the table stop the table
                self.shadow = view.copy()
                return [*steps, Step(move.seat, (f"{self.name(move.seat)} moved",), view.copy())]
            lines = tell_move(before, move, shadow, self.name, self.glyphs)
            steps.append(Step(move.seat, tuple(lines), shadow.copy()))
        return steps

    @staticmethod
    def _card_on_its_way(shadow: HandState, move: Move, view: HandState) -> bool:
        """Whether `move` is the viewer's own draw whose card has not been revealed yet."""
        if view.viewer is None or move.seat != view.viewer or view.ended:
            return False
        if not isinstance(move, DrawStock | TurnUpFirst):
            return False
        drawn = [s for s in view.hands[move.seat] if s not in shadow.hands[move.seat]]
        return any(view.known[s] < 0 for s in drawn)


def abandoned_text(ev: Abandoned, nick: Callable[[int], str]) -> str:
    """A hand walked out of, as the agreement the log proves it (`nick` names a party)."""
    who = " and ".join(nick(p) for p in ev.parties)
    return (f"{who} walked out of hand {ev.hand + 1}: the hand is void and "
            f"{'each side of theirs is' if len(ev.sides) > 1 else 'their side is'} charged "
            f"{ev.points} points")


def result_line(r: HandResult, names: Sequence[str]) -> str:
    """The hand's totals per side, in one line (`names` by side)."""
    return "hand over: " + ", ".join(
        f"{names[k] if k < len(names) else f'side {k + 1}'} {t:+d}" for k, t in enumerate(r.totals)
    )


# The table's own news between the moves, in the feed's words.

TIME_UP = "the time is up (a tied lead plays on)"

VOIDED = {
    "void": "the hand was voided by agreement: it is dealt again",
    "end": "the match was ended by agreement",
    "replace": "the missing players' seats pass to new players: the hand is dealt again",
}


def shuffle_line(k: int, n: int, nick: str) -> str:
    """The k-th of the hand's n shuffles, its proof verified (`nick`: the shuffler)."""
    return f"shuffle {k}/{n} verified ({nick})"


def dealt_line(hand: int, dealer: str, n: int) -> str:
    """Deal `hand` (counted from 0) done, every shuffle and deal share of its n seats checked."""
    return f"hand {hand + 1} dealt by {dealer}: {n}/{n} shuffles and {n}/{n} deals verified"


def voided_line(action: str, missing: Sequence[str]) -> str:
    """A void agreement applied: what it did, and the players it was made without."""
    text = VOIDED.get(action, f"agreed by the table: {action}")
    who = ", ".join(missing)
    return f"{text} (missing: {who})" if who else text
