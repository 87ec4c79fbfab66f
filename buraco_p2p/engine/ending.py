"""How turns and hands end: emptying a hand (taking a pot, going out, or running empty where a
preset allows it), the one card a meld may leave, the three-player side change when the first
pot is taken, the end of a turn (a failed opening attempt counted) and the end of the hand.

Melding, discarding and the fechado justification of a pile take all ask the same questions
(may this hand be emptied now, and what would that do; may this card be the last one), so
the answers are written once, here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from buraco_p2p.engine.errors import IllegalMoveCode
from buraco_p2p.engine.params import WILD_CODES
from buraco_p2p.engine.precheck import Prechecked
from buraco_p2p.engine.reveals import RevealRequest
from buraco_p2p.engine.values import (
    EMPTY,
    GO_OUT,
    PILE,
    TAKE_POT,
    EndReason,
    Phase,
    SideChange,
)
from buraco_p2p.rules import Meld

T = TypeVar("T")


class Ending(Prechecked):
    """A hand that knows how hands are emptied, turns end and the hand ends."""

    def emptying_outcome(self, seat: int, melds_after: list[Meld] | None) -> int:
        """What emptying `seat`'s hand would do now: TAKE_POT, GO_OUT, EMPTY, or -1 (illegal).

        `melds_after` is the team's melds after the move (None: as they are now).
        """
        team = self.seat_side[seat]
        p = self.params
        if self.team_pot[team] < 0 and self.next_pot() >= 0:
            return TAKE_POT
        melds = melds_after if melds_after is not None else [tm.meld for tm in self.melds[team]]
        has_pot = self.team_pot[team] >= 0 or not p.going_out_needs_pot or not self.pot_owner
        if has_pot and self.oracle.going_out_ok(melds):
            return GO_OUT
        if not p.empty_hand_needs_going_out:
            return EMPTY
        return -1

    def meld_emptying_outcome(self, seat: int, melds_after: list[Meld] | None) -> int:
        """`emptying_outcome` for a hand emptied by a meld or addition: going out that way is
        -1 (not allowed) where the preset closes a hand only by a discard."""
        outcome = self.emptying_outcome(seat, melds_after)
        if outcome == GO_OUT and self.params.go_out_by_discard_only:
            return -1
        return outcome

    def last_card_problem(
        self, seat: int, slot: int, melds_after: list[Meld], private: bool = True
    ) -> str | None:
        """Why the player could not discard `slot` as their last card (None: they could).

        A meld or addition may not leave a player holding one card they could not discard,
        since a turn ends only with a discard (or by emptying the hand where that is allowed).
        Whether that card is a wild is hidden from the other players unless it is public, so
        move validation (`private=False`) looks at it only then: every view must judge a move
        alike. The generator (`private=True`, on the player's own view) looks at it always.
        """
        if slot == self.taken_single:
            return "your last card would be the one you just took from the pile"
        if slot == self.must_meld:
            return "your last card would be the pile's top card, which you must meld"
        outcome = self.emptying_outcome(seat, melds_after)
        if outcome < 0:
            return "you must keep a card you may discard: " + self._why_not_empty(seat)
        c = self.known[slot]
        if (
            outcome == GO_OUT
            and not self.params.wild_going_out
            and c >= 0
            and (private or slot in self.public)
            and self.codes[c] in WILD_CODES
        ):
            return "your last card would be a wild, and you may not go out by discarding it"
        return None

    def _check_last_card(self, seat: int, removed: set[int], melds_after: list[Meld]) -> int:
        """Refuse a meld that leaves one card its player could not discard.

        Returns the slot of that last card where the move shows it (`exposed_by`), else -1.
        """
        hand = self.hands[seat]
        if len(hand) - len(removed) != 1:
            return -1
        last = next(s for s in hand if s not in removed)
        shown = bool(self._kept_last_card(seat, tuple(removed)))
        if shown and self.known[last] < 0:
            raise self._fail(IllegalMoveCode.UNKNOWN_CARD, f"slot {last} has not been revealed")
        why = self.last_card_problem(seat, last, melds_after, private=shown)
        if why is not None:
            raise self._fail(IllegalMoveCode.CANNOT_EMPTY_HAND, why)
        return last if shown else -1

    def _check_emptying(
        self, seat: int, melds_after: list[Meld] | None, melding: bool = False
    ) -> int:
        """The player is about to empty their hand: allowed? Returns TAKE_POT, GO_OUT or EMPTY.

        `melds_after` is the team's melds after the move (None: unchanged); `melding`: the
        hand empties by a meld or addition, not a discard.
        """
        outcome = self.emptying_outcome(seat, melds_after)
        if outcome == GO_OUT and melding and self.params.go_out_by_discard_only:
            raise self._fail(
                IllegalMoveCode.GO_OUT_BY_DISCARD_ONLY,
                "you may go out only by discarding your last card: keep one to discard",
            )
        if outcome >= 0:
            return outcome
        raise self._fail(IllegalMoveCode.CANNOT_EMPTY_HAND, self._why_not_empty(seat))

    def _why_not_empty(self, seat: int) -> str:
        p = self.params
        if self.team_pot[self.seat_side[seat]] < 0 and p.going_out_needs_pot and self.pot_owner:
            return "no pot is left for your team, so you may not empty your hand"
        kind = "clean buraco" if p.need_clean_buraco else "buraco"
        return f"your team needs a {kind} before you may empty your hand"

    def _remove_from_hand(self, seat: int, slots: Iterable[int], dest: int) -> None:
        hand = self.hands[seat]
        team = self.seat_side[seat]
        pot_i = self.team_pot[team]
        # Whether a pot card leaving the hand this way plays the pot (a discard does only
        # where `pot_played_by_discard`; fechado wants it in a meld, 004:34, 004:73).
        plays = dest != PILE or self.params.pot_played_by_discard
        for s in slots:
            hand.remove(s)
            self.where[s] = dest
            self.public.add(s)
            if plays and pot_i >= 0 and self._pot_index.get(s) == pot_i:
                self.pot_played[team] = True
            if s == self.must_meld:
                self.must_meld = -1
                self.justified = ()
        if self.phase is Phase.FIRST_CHOICE:
            self.phase = Phase.PLAY
            self.first_slot = -1

    def _hand_emptied(self, seat: int, outcome: int, discarded: bool) -> tuple[RevealRequest, ...]:
        if outcome == GO_OUT:
            self.went_out = seat
            return self._end(EndReason.WENT_OUT)
        if outcome == EMPTY:
            return self._end_turn()
        team = self.seat_side[seat]
        pot_i = self.next_pot()
        self.pot_owner[pot_i] = team
        self.team_pot[team] = pot_i
        self.pot_taker[team] = seat
        pot = self.layout.pots[pot_i]
        for s in pot:
            self.where[s] = seat
        self.hands[seat].extend(pot)
        out = tuple(RevealRequest(s, seat) for s in pot)
        if self.players == 3 and self.side_change is None:
            self._play_alone(seat)
        if discarded or not self.params.pot_in_flight:
            return out + self._end_turn()
        return out

    def _play_alone(self, solo: int) -> None:
        """Three players: `solo` has just taken the first pot and plays alone; the other two
        become one side, their sides' melds and state joined (lower seat first)."""
        y, z = (s for s in range(3) if s != solo)
        old = self.seat_side
        a, b = old[y], old[z]
        mine = old[solo]
        partners = (y, z)
        sides = sorted([(solo,), partners])
        new_of = {mine: sides.index((solo,)), a: sides.index(partners), b: sides.index(partners)}
        alone = new_of[mine]

        def regroup(values: list[T], joined: T) -> list[T]:
            out = [joined, joined]
            out[alone] = values[mine]
            return out

        self.melds = regroup(self.melds, self.melds[a] + self.melds[b])
        self.set_ranks = regroup(self.set_ranks, self.set_ranks[a] | self.set_ranks[b])
        self.opened = regroup(self.opened, self.opened[a] or self.opened[b])
        self.failed = regroup(self.failed, self.failed[a] + self.failed[b])
        self.team_pot = regroup(self.team_pot, -1)
        self.pot_taker = regroup(self.pot_taker, -1)
        self.pot_played = regroup(self.pot_played, False)
        self.pot_owner = [new_of.get(o, o) if o >= 0 else o for o in self.pot_owner]
        self.sides = tuple(sides)
        self.seat_side = [new_of[old[s]] for s in range(3)]
        self.side_change = SideChange(solo, partners, self.turns_played)

    def _end_turn(self) -> tuple[RevealRequest, ...]:
        if self.opening:
            # The turn ends under the minimum: a failed attempt; the cards stay in the hand.
            self.failed[self.seat_side[self.turn]] += 1
            self.opening = []
        if self.last_turn:
            return self._end(EndReason.STOCK_EXHAUSTED)
        self.turn = self.next_seat[self.turn]
        self.turns_played += 1
        self.phase = Phase.DRAW
        self.taken_single = -1
        self.must_meld = -1
        self.justified = ()
        self.first_slot = -1
        return ()

    def _end(self, reason: EndReason) -> tuple[RevealRequest, ...]:
        self.phase = Phase.ENDED
        self.end_reason = reason
        self.turns_played += 1
        if self.viewer is None:
            # The referee knows every card: the end-of-hand count is public knowledge.
            self.public.update(s for hand in self.hands for s in hand)
        return self.end_reveals()
