"""What can be said about a move before any of its cards is seen: `precheck` / `exposed_by`.

A session reveals the cards a move shows publicly before the move is pushed, so this is the
gate of "validate before you reveal": turn, phase, and that every named slot is the mover's,
judged on public information only, so that nothing is shown for a move that would be refused
and every view refuses the same moves. It also says which further card a move shows (the one
card a meld would leave where a wild may not go out) and why showing it gives nothing away.
Nothing here reads a card's face.
"""

from __future__ import annotations

from buraco_p2p.engine.errors import IllegalMove, IllegalMoveCode
from buraco_p2p.engine.moves import (
    AddToMeld,
    Discard,
    DrawStock,
    Move,
    TakeDiscard,
    TurnUpFirst,
    check_shape,
)
from buraco_p2p.engine.state import HandBase
from buraco_p2p.engine.values import (
    Phase,
)


class Prechecked(HandBase):
    """A hand that can say what a move shows and check it as far as the faces allow."""

    def exposed_by(self, move: Move) -> tuple[int, ...]:
        """Slots a move shows to everyone: the session reveals them publicly before pushing it.

        Besides the cards it melds, a meld that leaves its player one card shows that card too
        where going out by discarding a wild is forbidden (see `_kept_last_card`).

        The move is checked first as far as it can be before its cards are seen (`precheck`):
        a move that names a slot its sender does not hold, or comes out of turn or phase,
        raises `IllegalMove` here, so that no card is shown for it. What remains to check
        needs the shown faces (is it a meld, does it reach the minimum) and is `push`'s.
        """
        return self.precheck(move)

    def precheck(self, move: Move) -> tuple[int, ...]:
        """Check everything about `move` that does not depend on the faces it shows, and return
        the slots it shows (`exposed_by`). Raises the `IllegalMove` that `push` would raise.

        Judged on public information only (turn, phase, where each slot lies), so every view
        refuses the same moves with the same code; `push` runs it first too.
        """
        check_shape(move)
        if self.phase is Phase.ENDED:
            raise IllegalMove(IllegalMoveCode.HAND_OVER, "the hand is over", move.seat)
        if move.seat != self.turn:
            raise IllegalMove(
                IllegalMoveCode.WRONG_PLAYER,
                f"it is player {self.turn}'s turn, not player {move.seat}'s",
                move.seat,
            )
        if self.awaiting_public:
            raise IllegalMove(
                IllegalMoveCode.UNKNOWN_CARD,
                f"the face-up card (slot {min(self.awaiting_public)}) has not been revealed",
                move.seat,
            )
        seat = move.seat
        if isinstance(move, DrawStock):
            self._need_phase(Phase.DRAW)
            if not self.stock:
                raise self._fail(IllegalMoveCode.EMPTY_STOCK, "the stock is empty")
            return ()
        if isinstance(move, TakeDiscard):
            self._need_phase(Phase.DRAW)
            if not self.pile:
                raise self._fail(IllegalMoveCode.EMPTY_PILE, "the discard pile is empty")
            if self.lone_take_stalls(seat):
                raise self._fail(
                    IllegalMoveCode.DISCARD_TAKEN_CARD,
                    "with an empty hand you could neither discard nor keep the pile's only "
                    "card: draw from the stock",
                )
            just = move.justify
            if just and not self.params.must_meld_top:
                raise self._fail(
                    IllegalMoveCode.PILE_NOT_JUSTIFIED,
                    "at this table the pile is taken without showing cards",
                )
            self._check_distinct_held(just, "a justifying slot appears twice")
            return just + self._justify_kept_card(seat, just)
        if isinstance(move, TurnUpFirst):
            if self.phase is not Phase.FIRST_CHOICE:
                raise self._fail(
                    IllegalMoveCode.NO_FIRST_CARD,
                    "only the first card of the hand can be turned up",
                )
            return (self.first_slot,)
        self._need_phase(Phase.PLAY, Phase.FIRST_CHOICE)
        if isinstance(move, Discard):
            self._check_distinct_held((move.slot,), "")
            if move.slot == self.taken_single:
                raise self._fail(
                    IllegalMoveCode.DISCARD_TAKEN_CARD,
                    "you may not discard the only card you just took from the pile",
                )
            if self.must_meld >= 0:
                raise self._fail(
                    IllegalMoveCode.MUST_MELD_TOP,
                    "you must meld the top card of the pile you took before discarding",
                )
            return (move.slot,)
        if isinstance(move, AddToMeld):
            if not 0 <= move.meld < len(self.melds[self.seat_side[seat]]):
                raise self._fail(
                    IllegalMoveCode.NO_SUCH_MELD, f"your team has no meld number {move.meld}"
                )
            if not move.slots:
                raise self._fail(IllegalMoveCode.DUPLICATE_SLOT, "added slots must be distinct")
            self._check_distinct_held(move.slots, "added slots must be distinct")
            self._check_melds_top(move.slots)
            self._check_wild_end(move.wild_end)
            return move.slots + self._kept_last_card(seat, move.slots)
        if not move.melds:
            raise self._fail(IllegalMoveCode.ILLEGAL_MELD, "a lay-down needs at least one meld")
        melded = tuple(s for m in move.melds for s in m)
        self._check_melds_top(melded)
        if move.wild_ends and len(move.wild_ends) != len(move.melds):
            raise self._fail(IllegalMoveCode.BAD_WIRE, "one wild end per meld, or none")
        self._check_distinct_held(melded, "a slot appears twice")
        if self.opening and not set(melded).isdisjoint(self.opening_slots()):
            raise self._fail(
                IllegalMoveCode.DUPLICATE_SLOT, "a slot is already in this turn's opening melds"
            )
        for end in move.wild_ends:
            self._check_wild_end(end)
        return melded + self._kept_last_card(seat, melded)

    def _check_melds_top(self, slots: tuple[int, ...]) -> None:
        if self.must_meld >= 0 and self.must_meld not in slots:
            raise self._fail(
                IllegalMoveCode.MUST_MELD_TOP,
                f"meld the top card of the pile you took first (slot {self.must_meld})",
            )

    def _check_wild_end(self, end: int) -> None:
        if not 0 <= end <= 2:
            raise self._fail(IllegalMoveCode.BAD_WIRE, f"bad wild end {end}")

    def _justify_kept_card(self, seat: int, justify: tuple[int, ...]) -> tuple[int, ...]:
        """Fechado: the one hand card a justified take would leave once the top card is melded.

        Where a wild may not go out, it is shown with the justification for the reason
        `_kept_last_card` gives for melds: a player taking a one-card pile and showing all
        their hand but one card will be left with that card alone after the meld they showed.
        """
        if (
            self.params.wild_going_out
            or not self.params.must_meld_top
            or self.phase is not Phase.DRAW
            or seat != self.turn
            or len(self.pile) != 1
        ):
            return ()
        return self._lone_card_left(seat, justify)

    def _kept_last_card(self, seat: int, melded: tuple[int, ...]) -> tuple[int, ...]:
        """The one card a meld would leave in `seat`'s hand, where a wild may not go out.

        Validation sees only public cards, so it could not otherwise refuse a meld that keeps a
        lone wild the player may not discard, and a player left with such a card and no meld
        to put it in could never end their turn. Showing it gives nothing away: with one card
        left, the turn can only go on by discarding or melding it, and both show it. A lay-down
        that may be a failed attempt (the team has a minimum still to reach) keeps every card,
        so its other cards stay hidden.
        """
        if (
            self.params.wild_going_out
            or self.phase not in (Phase.PLAY, Phase.FIRST_CHOICE)
            or seat != self.turn
        ):
            return ()
        return self._lone_card_left(seat, melded)

    def _lone_card_left(self, seat: int, gone: tuple[int, ...]) -> tuple[int, ...]:
        """The one slot `seat` keeps once `gone` leaves the hand, if exactly one stays and the
        cards leaving cannot be a failed opening attempt (which keeps them all in hand)."""
        hand = self.hands[seat]
        leaving = set(gone)
        if not leaving <= set(hand):
            return ()
        left = [s for s in hand if s not in leaving]
        if len(left) != 1:
            return ()
        team = self.seat_side[seat]
        if not self.opened[team] and self.initial_minimum(team, seat) > 0:
            return ()
        return (left[0],)
