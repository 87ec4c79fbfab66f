"""Taking the discard pile, and under fechado its justification.

Where the top card must be melded (fechado), the player shows the hand cards that meld it,
and the take is checked on public cards: the top card with them must make a meld the side may
lay down, or extend one of its melds, and leave the player a legal hand, so that the melding
move the take obliges always exists. The move generator and the bots ask the same question
(`justification_problem`, `preview_take`), so it is answered in one place.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Self

from buraco_p2p.engine.ending import Ending
from buraco_p2p.engine.errors import IllegalMove, IllegalMoveCode
from buraco_p2p.engine.moves import (
    TakeDiscard,
)
from buraco_p2p.engine.params import WILD_CODES
from buraco_p2p.engine.reveals import RevealRequest
from buraco_p2p.engine.values import (
    GO_OUT,
    Phase,
)
from buraco_p2p.rules import Meld, MeldKind


class PileTakes(Ending):
    """A hand that can take the discard pile, justifying the take where the rules ask."""

    def _take_discard(self, move: TakeDiscard) -> tuple[RevealRequest, ...]:
        self._need_phase(Phase.DRAW)
        if not self.pile:
            raise self._fail(IllegalMoveCode.EMPTY_PILE, "the discard pile is empty")
        shown = self._justify_kept_card(move.seat, move.justify)
        if shown and self.known[shown[0]] < 0:
            raise self._fail(IllegalMoveCode.UNKNOWN_CARD, f"slot {shown[0]} has not been revealed")
        public = self.public.issuperset(move.justify)
        problem = self._justification_problem(move, bool(shown), public)
        if problem is not None:
            raise problem
        self._apply_take(move.seat)
        self.public.update(move.justify)
        self.public.update(shown)
        self.justified = move.justify
        return ()

    def _apply_take(self, seat: int) -> None:
        pile = self.pile
        if len(pile) == 1 and self.params.no_discard_single_taken:
            self.taken_single = pile[0]
        if self.params.must_meld_top:
            self.must_meld = pile[-1]
        for s in pile:
            self.where[s] = seat
        self.hands[seat].extend(pile)
        self.pile = []
        self.phase = Phase.PLAY

    def preview_take(self, seat: int) -> Self:
        """A copy of this view right after `seat` takes the pile, justification unchecked: for
        the move generator and bots, to look for the melds the pile's top card can make."""
        new = self.copy()
        new._apply_take(seat)
        return new

    def justification_problem(self, move: TakeDiscard, private: bool = False) -> IllegalMove | None:
        """Why `move` does not justify taking the pile now (None: it does; fechado only).

        The shown hand cards with the pile's top card must form a new meld the team may lay
        down (one set per rank, the initial minimum reached by that meld alone), or the top
        card with them must extend one of the team's melds; and that meld must leave the player
        a legal hand: at least two cards, one they could discard, or an empty hand where
        emptying it is allowed. Then the move that must follow, melding the top card, always
        exists. Judged on public cards only (`private=False`), as every view must; the
        generator passes `private=True` to judge a kept last card by what its player knows.
        """
        return self._justification_problem(move, private, public=False)

    def _justification_problem(
        self, move: TakeDiscard, private: bool, public: bool
    ) -> IllegalMove | None:
        """`justification_problem`; `public`: the shown cards are public (`push`), so their
        meld checks may go to the shared cache."""
        seat = move.seat
        just = move.justify
        if not self.params.must_meld_top:
            if just:
                return self._fail(
                    IllegalMoveCode.PILE_NOT_JUSTIFIED,
                    "at this table the pile is taken without showing cards",
                )
            return None
        if self.phase is not Phase.DRAW or not self.pile:
            return self._fail(IllegalMoveCode.WRONG_PHASE, "the pile can be taken only to draw")
        if len(set(just)) != len(just):
            return self._fail(IllegalMoveCode.DUPLICATE_SLOT, "a justifying slot appears twice")
        try:
            codes = self._check_held_known(just)
        except IllegalMove as e:
            return e
        top = self.pile[-1]
        top_id = self.known[top]
        if top_id < 0:
            return self._fail(IllegalMoveCode.UNKNOWN_CARD, f"slot {top} has not been revealed")
        key = tuple(sorted((*codes, self.codes[top_id])))
        hand = self.hands[seat]
        left = len(hand) + len(self.pile) - len(just) - 1
        last = -1
        if left == 1:
            gone = set(just)
            last = next((s for s in hand if s not in gone), self.pile[0])
        why = ["the top card with the cards you show makes no meld you may lay down"]
        first: IllegalMove | None = None
        for after in self._justified_tables(seat, key, why, public):
            if left >= 2:
                return None
            problem = self._left_by_justified_meld(seat, left, last, after, private)
            if problem is None:
                return None
            first = first or problem
        if first is not None:
            return first
        if not just:
            why[0] = "show the cards of your hand that meld the pile's top card"
        return self._fail(IllegalMoveCode.PILE_NOT_JUSTIFIED, why[0])

    def _justified_tables(
        self, seat: int, key: tuple[int, ...], why: list[str], public: bool = False
    ) -> Iterator[list[Meld]]:
        """The team's melds after each way the face codes `key` (the top card and the shown
        cards) can go down: as a new meld the team may lay down, or onto one of its melds.
        Why a new meld may not go down is left in `why[0]`."""
        oracle = self.oracle
        team = self.seat_side[seat]
        table = [tm.meld for tm in self.melds[team]]
        # Where a wild stands matters only when there is one.
        ends = (0, 1, 2) if any(c in WILD_CODES for c in key) else (0,)
        if len(key) >= 3:
            seen: list[Meld] = []
            for end in ends:
                meld = oracle.try_evaluate(key, end, public)
                if meld is None or meld in seen:
                    continue
                seen.append(meld)
                if self.params.one_set_per_rank and oracle.set_rank(meld) in self.set_ranks[team]:
                    why[0] = "your team already has a set of that rank"
                    continue
                if not self.opened[team] and meld.card_points < self.initial_minimum(team, seat):
                    why[0] = "that meld alone does not reach your team's initial minimum"
                    continue
                yield [*table, meld]
        naturals = [c for c in key if c not in WILD_CODES]
        for i, old in enumerate(table):
            # Cheap necessary condition first: naturals of the set's rank or the run's suit.
            if old.kind is MeldKind.SET:
                if any(c % 13 + 1 != old.rank for c in naturals):
                    continue
            elif any(c // 13 != old.suit for c in naturals):
                continue
            for end in ends if old.wild_index is None else (0, 1, 2):
                grown = oracle.try_extend(old, key, end, public)
                if grown is not None:
                    after = list(table)
                    after[i] = grown
                    yield after

    def _left_by_justified_meld(
        self, seat: int, left: int, last: int, after: list[Meld], private: bool
    ) -> IllegalMove | None:
        """Whether the meld a take justifies, leaving `left` cards (0 or 1: `last`) and the
        team's melds `after`, leaves a legal hand (None) or why not."""
        if left == 1:
            reason = self.last_card_problem(seat, last, after, private=private)
            if reason is None:
                return None
            return self._fail(IllegalMoveCode.CANNOT_EMPTY_HAND, "that meld: " + reason)
        outcome = self.emptying_outcome(seat, after)
        if outcome == GO_OUT and self.params.go_out_by_discard_only:
            return self._fail(
                IllegalMoveCode.GO_OUT_BY_DISCARD_ONLY,
                "that meld would empty your hand to go out, and you may go out only by discarding",
            )
        if outcome < 0:
            return self._fail(
                IllegalMoveCode.CANNOT_EMPTY_HAND,
                "that meld would empty your hand: " + self._why_not_empty(seat),
            )
        return None
