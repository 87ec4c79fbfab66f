"""The turn flow: drawing from the stock (and what happens when it runs out), turning up the
first card where the preset lets the first player peek, and the discard that ends a turn or
empties a hand. `HandState.push` dispatches every move to these handlers or to those of
`melding` and `pile`.
"""

from __future__ import annotations

from buraco_p2p.engine.errors import IllegalMoveCode
from buraco_p2p.engine.melding import Melding
from buraco_p2p.engine.moves import (
    Discard,
    DrawStock,
    TurnUpFirst,
)
from buraco_p2p.engine.params import WILD_CODES, FirstDraw
from buraco_p2p.engine.reveals import RevealRequest
from buraco_p2p.engine.values import (
    GO_OUT,
    PILE,
    POT_IS_STOCK,
    POT_UNTAKEN,
    STOCK,
    Phase,
)


class Turn(Melding):
    """A hand that can take draws, the first card turned up and discards."""

    def _pop_stock(self, seat: int) -> int:
        slot = self.stock.pop()
        self.where[slot] = seat
        self.hands[seat].append(slot)
        if not self.stock:
            self._stock_ran_out()
        return slot

    def _stock_ran_out(self) -> None:
        if self.params.stock_out_uses_pot:
            for i in range(len(self.pot_owner)):
                if self.pot_owner[i] == POT_UNTAKEN:
                    self.pot_owner[i] = POT_IS_STOCK
                    pot = self.layout.pots[i]
                    for s in pot:
                        self.where[s] = STOCK
                    self.stock = list(reversed(pot))
                    return
        self.last_turn = True

    def _draw_stock(self, move: DrawStock) -> tuple[RevealRequest, ...]:
        self._need_phase(Phase.DRAW)
        if not self.stock:
            raise self._fail(IllegalMoveCode.EMPTY_STOCK, "the stock is empty")
        seat = move.seat
        slot = self._pop_stock(seat)
        if self.params.first_draw is FirstDraw.PEEK and self.turns_played == 0:
            self.phase = Phase.FIRST_CHOICE
            self.first_slot = slot
        else:
            self.phase = Phase.PLAY
        return (RevealRequest(slot, seat),)

    def _turn_up_first(self, move: TurnUpFirst) -> tuple[RevealRequest, ...]:
        if self.phase is not Phase.FIRST_CHOICE:
            raise self._fail(
                IllegalMoveCode.NO_FIRST_CARD, "only the first card of the hand can be turned up"
            )
        slot = self.first_slot
        if self.known[slot] < 0:
            raise self._fail(IllegalMoveCode.UNKNOWN_CARD, f"slot {slot} has not been revealed")
        seat = move.seat
        self.hands[seat].remove(slot)
        self.where[slot] = PILE
        self.pile.append(slot)
        self.public.add(slot)
        new = self._pop_stock(seat)
        self.phase = Phase.PLAY
        self.first_slot = -1
        return (RevealRequest(new, seat),)

    def _discard(self, move: Discard) -> tuple[RevealRequest, ...]:
        self._need_phase(Phase.PLAY, Phase.FIRST_CHOICE)
        seat = move.seat
        slot = move.slot
        codes = self._check_held_known((slot,))
        if slot == self.taken_single:
            raise self._fail(
                IllegalMoveCode.DISCARD_TAKEN_CARD,
                "you may not discard the only card you just took from the pile",
            )
        if self.must_meld >= 0:
            raise self._fail(
                IllegalMoveCode.MUST_MELD_TOP,
                "you must meld the top card of the pile you took before discarding",
            )
        emptying = len(self.hands[seat]) == 1
        outcome = -1
        if emptying:
            outcome = self._check_emptying(seat, None)
            if outcome == GO_OUT and not self.params.wild_going_out and codes[0] in WILD_CODES:
                raise self._fail(
                    IllegalMoveCode.WILD_GOING_OUT, "you may not go out by discarding a wild card"
                )
        self._remove_from_hand(seat, (slot,), PILE)
        self.pile.append(slot)
        if emptying:
            return self._hand_emptied(seat, outcome, discarded=True)
        return self._end_turn()
