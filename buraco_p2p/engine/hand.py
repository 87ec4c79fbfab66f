"""One hand of Buraco, from the deal to the score, as a single state machine.

Every peer keeps one `HandState` per hand: a `PlayerView` (knows its own cards) or a
`RefereeView` (knows the whole permutation). All views apply the same moves; legality depends
only on public information plus the identities of the cards a move exposes, which the session
reveals publicly before the move. So every view accepts or rejects a move alike, and
`state_hash()` (the public part only) is equal on every view after the same log.

Slot locations are public from the start (the deal layout is fixed); card identities enter a
view only through `reveal()` (private: deal, stock draw, pot; public: meld, discard, the face-up
card, the end-of-hand count). `push()` returns the reveals the session owes the table after a
move (`RevealRequest`): who must privately learn which slot, or which slots must go public.

How the rules are played where the sources leave room (all presets):

- Initial meld (`RuleSet.initial_meld_counts`): under `turn` (us, classic: 000:149-150,
  001:133) the card points (not bonuses) of every meld the player lays down in the team's
  opening turn count together. A `LayDown` that leaves that sum under the minimum is shown to
  everyone (public) but its cards stay in the hand, as the turn's *opening* so far
  (`opening`); a later `LayDown` in the turn that brings the sum to the minimum puts them on
  the table with its own melds. A turn that ends under the minimum is a *failed attempt*: the
  cards stay in the hand and the team's minimum rises by the preset's step for the rest of
  the hand. Under `one_meld` (playingcards: "the first meld they put down", 002:54) one meld
  must reach the minimum alone, and a `LayDown` without such a meld is a failed attempt at
  once. `legal_moves` never offers a lay-down that stays under the minimum.
- A player who empties their hand before their team has a pot takes the next pot at once: its
  slots join the hand (private reveals to that player). After a melding move they keep playing
  with it ("in flight"); after a discard the turn passes and they play it on their next turn
  (a session may hold the private reveal back until then: the player cannot act before).
- Emptying a hand when the team has its pot is going out, and needs the preset's buraco; a team
  that may not go out may not empty a hand. So a meld or addition may not leave a player with a
  single card they could not discard (the only card just taken, a pile top still to be melded,
  a last card that would empty a hand that may not be emptied). Validation sees only public
  cards, so where going out by discarding a wild is forbidden, a meld that leaves one card
  shows that card too (`exposed_by`; revealed publicly before the move like the melded
  cards): the turn can only go on by discarding or melding it, which would show it anyway,
  and every view can then refuse keeping a lone wild. (A lay-down that may be a failed
  initial attempt shows only its own cards; the generator never offers one that keeps a
  lone wild.)
- Where the preset closes a hand only by a discard (italian, `go_out_by_discard_only`), a meld
  or addition that would empty the hand to go out is refused (`GO_OUT_BY_DISCARD_ONLY`): the
  player keeps a card to discard. Emptying a hand by a meld to take the pot is not going out
  and stays allowed (in flight, as in every preset).
- Fechado "justify": the player shows, as they take the pile, the hand cards that meld its
  top card (`TakeDiscard.justify`, revealed publicly before the move like melded cards; none
  when the top card alone fits a team meld). `push` checks on public cards that the top card
  with them forms a new meld the team may lay down (one set per rank; alone reaching an
  initial minimum still due) or extends a team meld, and that this meld would leave the
  player a legal hand: two cards or more, one they may discard, or an empty hand where
  emptying it is allowed (taking the pot; going out where that may be done by melding).
  Where a wild may not go out and that meld would leave one card of the hand, the take shows
  that card too. After the take, the next melding move must use the top card and no discard
  is allowed before; the shown meld is such a move, so a take never stalls the hand
  (`PILE_NOT_JUSTIFIED`, `CANNOT_EMPTY_HAND` or `GO_OUT_BY_DISCARD_ONLY` refuse one that
  could). Until the top card is melded, a lay-down under a team's initial minimum is refused
  (`NOT_OPENED`) rather than counted as a failed attempt, which would raise the minimum over
  the shown meld. Every other preset takes the pile without showing cards.
- When the last stock card is drawn, the next untaken pot becomes the stock at once (presets
  with that rule); with no pot left, or under italian, that turn is the last: the hand ends
  when it does (a player may still go out during it).
- Where a lone card taken from the pile may not be discarded that turn (italian), a player
  whose hand is empty (a preset changed to let a hand run empty without going out) may not
  take a one-card pile: they would hold only that card and could not end the turn.
- The cut bonus goes to the team of the dealer's right-hand opponent, who cuts.

Player counts (2, 3, 4, 6): a *side* is what a team is at four: it owns melds, a pot, an
initial meld minimum and a hand score (`view.sides`, `view.side_of(seat)`; arrays such as
`melds`, `opened` and `team_pot` are indexed by side). At two each player is a side; at six
the teams (`layout.sides_at_deal`). At three each player is a side until the first pot is
taken: the player who takes it (the 18-card pot) plays alone from then on and the other two
become one side, their melds joined (the lower seat's first), their sets of a rank and failed
opening attempts added up, opened if either had opened; the 11-card pot is theirs. That change
is part of the public state (`view.side_change`, covered by `state_hash`). The initial meld
minimum follows the match score of the player laying down (`setup.team_scores` holds one score
per match side: per player at two and three, per team at four and six).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from buraco_p2p.engine.ending import Ending
from buraco_p2p.engine.errors import IllegalMove, IllegalMoveCode
from buraco_p2p.engine.moves import (
    AddToMeld,
    Discard,
    DrawStock,
    LayDown,
    Move,
    TakeDiscard,
    TurnUpFirst,
)
from buraco_p2p.engine.params import WILD_CODES, FirstDraw
from buraco_p2p.engine.reveals import Reveal, RevealRequest, reveal_from_wire
from buraco_p2p.engine.values import (
    EMPTY,
    GO_OUT,
    PILE,
    POT,
    POT_IS_STOCK,
    POT_UNTAKEN,
    STOCK,
    TABLE,
    TAKE_POT,
    EndReason,
    HandSetup,
    Phase,
    SideChange,
    TableMeld,
    match_sides,
    team_of,
)
from buraco_p2p.rules import Meld, MeldKind

__all__ = [
    "EMPTY",
    "GO_OUT",
    "PILE",
    "POT",
    "POT_IS_STOCK",
    "POT_UNTAKEN",
    "STOCK",
    "TABLE",
    "TAKE_POT",
    "EndReason",
    "HandSetup",
    "HandState",
    "Phase",
    "PlayerView",
    "RefereeView",
    "Reveal",
    "RevealRequest",
    "SideChange",
    "TableMeld",
    "match_sides",
    "reveal_from_wire",
    "team_of",
]


class HandState(Ending):
    """The state of one hand as seen by one viewer (`viewer` is a seat, or None: referee)."""

    def _take_discard(self, move: TakeDiscard) -> tuple[RevealRequest, ...]:
        self._need_phase(Phase.DRAW)
        if not self.pile:
            raise self._fail(IllegalMoveCode.EMPTY_PILE, "the discard pile is empty")
        shown = self._justify_kept_card(move.seat, move.justify)
        if shown and self.known[shown[0]] < 0:
            raise self._fail(IllegalMoveCode.UNKNOWN_CARD, f"slot {shown[0]} has not been revealed")
        problem = self._justification_problem(move, bool(shown), public=True)
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

    def preview_take(self, seat: int) -> HandState:
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
            meld = oracle.evaluate(tuple(codes), end, self._fail)
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
        meld = self.oracle.extend(old.meld, tuple(codes), move.wild_end, self._fail)
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

    def push(self, move: Move) -> tuple[RevealRequest, ...]:
        """Validate and apply a move. Illegal: raise `IllegalMove`, leave the state unchanged."""
        self.precheck(move)
        if isinstance(move, DrawStock):
            out = self._draw_stock(move)
        elif isinstance(move, Discard):
            out = self._discard(move)
        elif isinstance(move, LayDown):
            out = self._lay_down(move)
        elif isinstance(move, AddToMeld):
            out = self._add(move)
        elif isinstance(move, TakeDiscard):
            out = self._take_discard(move)
        elif isinstance(move, TurnUpFirst):
            out = self._turn_up_first(move)
        else:  # pragma: no cover - the Move union is closed
            raise IllegalMove(IllegalMoveCode.BAD_WIRE, f"not a move: {move!r}")
        self.moves.append(move)
        return out

    def check(self, move: Move) -> IllegalMove | None:
        """The error `push(move)` would raise now (None: legal), leaving this view untouched."""
        try:
            self.copy().push(move)
        except IllegalMove as e:
            return e
        return None

    def is_legal(self, move: Move) -> bool:
        return self.check(move) is None

    def sample_referee(self, rng: random.Random) -> RefereeView:
        """A referee view consistent with all this view knows, the cards it has not seen dealt
        at random (from `rng`) to the slots it cannot see: for a bot's simulations."""
        new = self.copy()
        unseen = [c for c in range(self.n) if c not in self.slot_of]
        rng.shuffle(unseen)
        fill = iter(unseen)
        known = [c if c >= 0 else next(fill) for c in self.known]
        new.known = known
        new.slot_of = {c: s for s, c in enumerate(known)}
        new.viewer = None
        new.__class__ = RefereeView
        assert isinstance(new, RefereeView)
        return new


class PlayerView(HandState):
    """One player's view: it knows the cards revealed to it (its own hand) and public cards."""

    def __init__(self, setup: HandSetup, seat: int) -> None:
        super().__init__(setup, seat, None)


class RefereeView(HandState):
    """A view that knows the whole permutation: `permutation[slot]` is that slot's card id."""

    def __init__(self, setup: HandSetup, permutation: Sequence[int]) -> None:
        super().__init__(setup, None, permutation)
