"""Melding: laying melds down, with the initial meld and a turn's opening under it, and adding
cards to a side's meld.

The opening is the intricate part: under `turn` counting, lay-downs below the minimum are
shown and kept in the hand as the turn's opening until one reaches the minimum and puts them
all down; under `one_meld` a lay-down below it is a failed attempt at once (see
`buraco_p2p.engine.hand` for the rules as played).
"""

from __future__ import annotations

from buraco_p2p.engine.errors import IllegalMoveCode
from buraco_p2p.engine.moves import (
    AddToMeld,
    LayDown,
)
from buraco_p2p.engine.pile import PileTakes
from buraco_p2p.engine.reveals import RevealRequest
from buraco_p2p.engine.values import (
    TABLE,
    Phase,
    TableMeld,
)
from buraco_p2p.rules import Meld


class Melding(PileTakes):
    """A hand that can take lay-downs and additions."""

    def _lay_down(self, move: LayDown) -> tuple[RevealRequest, ...]:
        self._need_phase(Phase.PLAY, Phase.FIRST_CHOICE)
        seat = move.seat
        team = self.seat_side[seat]
        if not move.melds:
            raise self._fail(IllegalMoveCode.ILLEGAL_MELD, "a lay-down needs at least one meld")
        seen: set[int] = set()
        new: list[Meld] = []
        oracle = self.oracle
        # Sets shown earlier in this turn's opening count for the one set per rank.
        ranks = {r for tm in self.opening if (r := oracle.set_rank(tm.meld)) is not None}
        total = 0
        if self.must_meld >= 0 and not any(self.must_meld in m for m in move.melds):
            raise self._fail(
                IllegalMoveCode.MUST_MELD_TOP,
                f"meld the top card of the pile you took first (slot {self.must_meld})",
            )
        if move.wild_ends and len(move.wild_ends) != len(move.melds):
            raise self._fail(IllegalMoveCode.BAD_WIRE, "one wild end per meld, or none")
        for i, slots in enumerate(move.melds):
            if seen.intersection(slots) or len(set(slots)) != len(slots):
                raise self._fail(IllegalMoveCode.DUPLICATE_SLOT, "a slot appears twice")
            seen.update(slots)
            codes = self._check_held_known(slots)
            codes.sort()
            end = move.end_of(i)
            if not 0 <= end <= 2:
                raise self._fail(IllegalMoveCode.BAD_WIRE, f"bad wild end {end}")
            # Shown to the table before the move (a session's public reveal): the shared cache.
            seen_by_all = self.public.issuperset(slots)
            meld = oracle.evaluate(tuple(codes), end, self._fail, seen_by_all)
            rank = oracle.set_rank(meld)
            if rank is not None and self.params.one_set_per_rank:
                if rank in self.set_ranks[team] or rank in ranks:
                    raise self._fail(
                        IllegalMoveCode.DUPLICATE_SET,
                        "your team already has a set of that rank: add to it instead",
                    )
                ranks.add(rank)
            total += meld.card_points
            new.append(meld)
        laid = [(tuple(slots), meld) for slots, meld in zip(move.melds, new, strict=True)]
        if not self.opened[team]:
            need = self.initial_minimum(team, seat)
            by_turn = self.params.opening_by_turn
            if by_turn:
                reach = total + sum(tm.meld.card_points for tm in self.opening)
            else:
                reach = max(m.card_points for m in new)
            if reach < need and self.must_meld >= 0:
                # A failed attempt would raise the minimum over the meld the take showed and
                # could leave the top card with no meld at all.
                raise self._fail(
                    IllegalMoveCode.NOT_OPENED,
                    f"the meld with the pile's top card must reach your team's minimum ({need})",
                )
            if reach < need:
                # Shown to everyone, and kept in the hand: part of this turn's opening (a
                # failed attempt if the turn ends under the minimum), or at once a failed
                # attempt where one meld must reach the minimum alone.
                if by_turn:
                    self.opening.extend(TableMeld(meld, slots) for slots, meld in laid)
                else:
                    self.failed[team] += 1
                self.public.update(seen)
                if self.phase is Phase.FIRST_CHOICE:
                    self.phase = Phase.PLAY
                    self.first_slot = -1
                return ()
            if self.opening:
                # The opening reaches the minimum: the melds shown before go down too.
                laid = [(tm.slots, tm.meld) for tm in self.opening] + laid
                seen.update(self.opening_slots())
                new = [tm.meld for tm in self.opening] + new
                self.opening = []
        hand = self.hands[seat]
        emptying = len(hand) == len(seen)
        outcome = -1
        shown = -1
        after = [tm.meld for tm in self.melds[team]] + new
        if emptying:
            outcome = self._check_emptying(seat, after, melding=True)
        else:
            shown = self._check_last_card(seat, seen, after)
        self._remove_from_hand(seat, seen, TABLE + team)
        if shown >= 0:
            self.public.add(shown)
        for slots, meld in laid:
            self.melds[team].append(TableMeld(meld, slots))
        self.set_ranks[team].update(ranks)
        self.opened[team] = True
        if emptying:
            return self._hand_emptied(seat, outcome, discarded=False)
        return ()

    def _add(self, move: AddToMeld) -> tuple[RevealRequest, ...]:
        self._need_phase(Phase.PLAY, Phase.FIRST_CHOICE)
        seat = move.seat
        team = self.seat_side[seat]
        table = self.melds[team]
        if not 0 <= move.meld < len(table):
            raise self._fail(
                IllegalMoveCode.NO_SUCH_MELD, f"your team has no meld number {move.meld}"
            )
        if not move.slots or len(set(move.slots)) != len(move.slots):
            raise self._fail(IllegalMoveCode.DUPLICATE_SLOT, "added slots must be distinct")
        if self.must_meld >= 0 and self.must_meld not in move.slots:
            raise self._fail(
                IllegalMoveCode.MUST_MELD_TOP,
                f"meld the top card of the pile you took first (slot {self.must_meld})",
            )
        if not 0 <= move.wild_end <= 2:
            raise self._fail(IllegalMoveCode.BAD_WIRE, f"bad wild end {move.wild_end}")
        codes = self._check_held_known(move.slots)
        codes.sort()
        old = table[move.meld]
        seen_by_all = self.public.issuperset(move.slots)
        meld = self.oracle.extend(
            old.meld, tuple(codes), move.wild_end, self._fail, seen_by_all
        )
        hand = self.hands[seat]
        emptying = len(hand) == len(move.slots)
        outcome = -1
        after = [tm.meld for tm in table]
        after[move.meld] = meld
        shown = -1
        if emptying:
            outcome = self._check_emptying(seat, after, melding=True)
        else:
            shown = self._check_last_card(seat, set(move.slots), after)
        self._remove_from_hand(seat, move.slots, TABLE + team)
        if shown >= 0:
            self.public.add(shown)
        table[move.meld] = TableMeld(meld, old.slots + tuple(move.slots))
        if emptying:
            return self._hand_emptied(seat, outcome, discarded=False)
        return ()
