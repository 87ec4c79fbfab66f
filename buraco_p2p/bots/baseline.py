"""The frozen baseline: the rule-of-thumb player ("heuristic") as it stood before the levels.

Kept unchanged so that the levels can be measured against it (`benchmarks/bots.py` reports
`normal_vs_baseline_hand_win_rate`) and so that everything recorded with it (the protocol's
example logs, the engine benchmark's figures) plays the same moves again. New play belongs in
the levels (`normal`, `easy`, `strong`), never here. What it does:

It reads only what its seat's view knows: its own hand, the public table, the discard pile
and the public move log. Each call picks one move among `legal_moves(view)`:

- draw: take the pile when its top card can be melded at once (with two cards of the hand or
  on a team meld) and the pile is not mostly dead weight; otherwise draw from the stock. Taking
  only a pile whose top card goes down keeps the hand finite: every pile taken puts a card on
  the table for good. Under fechado, where the take shows the hand cards that meld the top
  card, it shows the justification that gives least away (no wild, fewest cards);
- play: a move that goes out by melding (where the preset allows it) is always played;
  otherwise every lay-down and addition is scored (card points moved to the table, cards out
  of the hand, buraco bonuses earned, progress of clean melds toward seven, the cost of
  spending a wild, reaching the pot) and the best one is played while its score is positive;
- discard: the card least useful to the hand plus least useful to the opponents (never a wild
  while another card will do, never a card that fits an opposing meld if avoidable, preferably
  one the next opponent discarded before).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from buraco_p2p.bots.base import NoMoveError
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandState,
    LayDown,
    Move,
    Phase,
    TakeDiscard,
    TurnUpFirst,
    legal_moves,
)
from buraco_p2p.engine.hand import GO_OUT, TAKE_POT
from buraco_p2p.engine.legal import additions, lay_downs
from buraco_p2p.rules import Meld, MeldKind

JOKER_CODE: Final = 52

# Weights of the play score (points on the preset's scale: a 7 is worth 5, a buraco 100-200).
CARD_OUT: Final = 8  # each card that leaves the hand
WILD_SPENT: Final = 45  # giving up a wild's flexibility outside a buraco
WILD_SPENT_LATE: Final = 5  # the same near the end of the hand, when cards in hand cost points
LATE_STOCK: Final = 12  # stock size under which the hand counts as "late"
GO_OUT_VALUE: Final = 10_000  # going out beats any other move
TAKE_POT_VALUE: Final = 150
# Progress toward a buraco by meld size, for clean and dirty melds below seven cards.
CLEAN_PROGRESS: Final = (0, 0, 0, 10, 25, 50, 85)
DIRTY_PROGRESS: Final = (0, 0, 0, 5, 10, 20, 35)

# Discard weights.
KEEP_WILD: Final = 300
KEEP_FITS_OWN: Final = 60
KEEP_NEIGHBOUR: Final = 25
KEEP_NEAR: Final = 10
KEEP_SAME_RANK: Final = 12
DANGER_FITS_OPP: Final = 90
DANGER_PER_PILE_CARD: Final = 4
SAFE_REPEAT: Final = 15


def _is_wild(code: int) -> bool:
    return code == JOKER_CODE or code % 13 == 1


class _Shape:
    """A table meld reduced to the ints a single-card fit check needs."""

    __slots__ = ("clean", "hi", "is_set", "lo", "rank", "size", "suit", "wild_pos")

    def __init__(self, m: Meld) -> None:
        self.is_set = m.kind is MeldKind.SET
        self.rank = m.rank or 0
        self.suit = -1 if m.suit is None else int(m.suit)
        self.size = len(m.faces)
        self.lo = m.start
        self.hi = m.start + self.size - 1
        self.wild_pos = -1 if m.wild_index is None else m.start + m.wild_index
        self.clean = m.wild_index is None

    def fits(self, code: int) -> bool:
        """Whether one card could be added (a close approximation of the rules, for scoring)."""
        if _is_wild(code):
            if self.is_set:
                return self.clean
            return self.clean and self.size < 14 and (self.lo > 1 or self.hi < 14)
        rank = code % 13 + 1
        if self.is_set:
            return rank == self.rank
        if code // 13 != self.suit:
            return False
        for p in (1, 14) if rank == 1 else (rank,):
            if p == self.lo - 1 or p == self.hi + 1 or p == self.wild_pos:
                return True
        return False


class _Hand:
    """Counts over the naturals of a set of cards, for run and set potential."""

    __slots__ = ("by_rank", "by_suit", "wilds")

    def __init__(self, codes: Sequence[int]) -> None:
        self.by_suit: list[set[int]] = [set(), set(), set(), set()]
        self.by_rank: list[int] = [0] * 14
        self.wilds = 0
        for c in codes:
            if _is_wild(c):
                self.wilds += 1
                continue
            r = c % 13 + 1
            s = self.by_suit[c // 13]
            s.add(r)
            if r == 1:
                s.add(14)
            self.by_rank[r] += 1

    def run_links(self, code: int) -> tuple[int, int]:
        """Distinct same-suit ranks at distance one and at distance two from `code`."""
        r = code % 13 + 1
        s = self.by_suit[code // 13]
        near = far = 0
        for p in (1, 14) if r == 1 else (r,):
            for d in (-1, 1):
                if 1 <= p + d <= 14 and (p + d) in s:
                    near += 1
                if 1 <= p + 2 * d <= 14 and (p + 2 * d) in s:
                    far += 1
        return near, far

    def completes_meld(self, code: int, set_ok: bool) -> bool:
        """Whether `code` with two cards counted here forms a legal-looking three-card meld."""
        if _is_wild(code):
            return any(len(s) >= 2 and self._has_pair_window(s) for s in self.by_suit)
        near, far = self.run_links(code)
        r = code % 13 + 1
        s = self.by_suit[code // 13]
        for p in (1, 14) if r == 1 else (r,):
            # Two naturals around p forming a window of three: (p-2,p-1), (p-1,p+1), (p+1,p+2).
            if (p - 1 in s and (p - 2 in s or p + 1 in s)) or (p + 1 in s and p + 2 in s):
                return True
        if self.wilds and (near or far):
            return True
        if set_ok and self.by_rank[r] >= 2:
            return True
        return set_ok and self.by_rank[r] >= 1 and self.wilds > 0

    @staticmethod
    def _has_pair_window(s: set[int]) -> bool:
        return any(p + 1 in s or p + 2 in s for p in s)


class HeuristicBot:
    """Plays by the rules of thumb in the module doc. Deterministic given the random source
    (used only to break exact ties)."""

    name = "heuristic"

    def choose_move(self, view: HandState, rng: random.Random) -> Move:
        moves = legal_moves(view)
        if not moves:
            raise NoMoveError(f"player {view.turn} has no legal move (phase {view.phase.value})")
        if len(moves) == 1:
            return moves[0]
        if view.phase is Phase.DRAW:
            return self._draw(view, moves)
        return self._play(view, moves, rng)

    # ------------------------------------------------------------------ draw

    def _draw(self, view: HandState, moves: list[Move]) -> Move:
        seat = view.turn
        takes = [m for m in moves if isinstance(m, TakeDiscard)]
        draw = next((m for m in moves if isinstance(m, DrawStock)), None)
        if not takes:
            return moves[0]
        take = min(takes, key=lambda m: _shown_cost(view, m))
        if draw is None or self._pile_pays(view, seat):
            return take
        return draw

    def _pile_pays(self, view: HandState, seat: int) -> bool:
        known = view.known
        face = view.codes
        pile = [face[known[s]] for s in view.pile]
        hand = [face[known[s]] for s in view.hands[seat]]
        team = view.seat_side[seat]
        shapes = [_Shape(tm.meld) for tm in view.melds[team]]
        set_ranks = view.rules.set_ranks
        taken_sets = {sh.rank for sh in shapes if sh.is_set}
        counts = _Hand(hand)
        top = pile[-1]
        r = top % 13 + 1
        set_ok = r in set_ranks and (r not in taken_sets or not view.rules.one_set_per_rank)
        opened = view.opened[team]
        hungry = view.players == 2 or (not opened and view.initial_minimum(team, seat) > 0)
        if hungry and len(pile) >= 3 and len(view.stock) >= LATE_STOCK:
            # Heads up, a pile left lies for the one opponent; a side still short of its
            # opening minimum needs cards. A pile of three or more cannot be passed round for
            # ever: the taker leaves one card, which the next player takes only if it goes
            # down at once, so two more turns draw from the stock before it is three again.
            return True
        if not (
            (opened and any(sh.fits(top) for sh in shapes)) or counts.completes_meld(top, set_ok)
        ):
            return False
        if _is_wild(top):
            return _top_goes_down(view, seat)
        both = _Hand(hand + pile)
        useful = 0
        dead_points = 0
        points = view.rules.face_points
        for c in pile:
            if _is_wild(c):
                useful += 1
                continue
            near, far = both.run_links(c)
            if (
                near
                or any(sh.fits(c) for sh in shapes)
                or (c % 13 + 1 in set_ranks and both.by_rank[c % 13 + 1] >= 2)
            ):
                useful += 1
            elif not far:
                dead_points += points[c]
        late = len(view.stock) < LATE_STOCK
        if late and dead_points > 10 * useful + 10:
            return False
        if not (useful * 2 >= len(pile) - useful or len(pile) <= 3):
            return False
        # Last, the exact test: a top card that cannot go down at once (under an opening
        # minimum, or where melding it would leave a last card that may not be discarded)
        # would be discarded again, and two players could pass it back and forth for ever.
        return _top_goes_down(view, seat)

    # ------------------------------------------------------------------ play

    def _play(self, view: HandState, moves: list[Move], rng: random.Random) -> Move:
        seat = view.turn
        team = view.seat_side[seat]
        known = view.known
        hand = view.hands[seat]
        late = len(view.stock) < LATE_STOCK
        wild_cost = WILD_SPENT_LATE if late else WILD_SPENT
        best: Move | None = None
        best_score = 0.0
        discards: list[Discard] = []
        turn_up: TurnUpFirst | None = None
        table = view.melds[team]
        oracle = view.oracle
        for mv in moves:
            if isinstance(mv, Discard):
                discards.append(mv)
                continue
            if isinstance(mv, TurnUpFirst):
                turn_up = mv
                continue
            if isinstance(mv, LayDown):
                laid = _lay_down_gain(view, mv, wild_cost)
                if laid is None:  # pragma: no cover - the generator offers legal moves only
                    continue
                score, new_melds = laid
                if sum(len(x) for x in mv.melds) == len(hand):
                    score += _emptying_value(view, seat, [tm.meld for tm in table] + new_melds)
            elif isinstance(mv, AddToMeld):
                codes = tuple(sorted(view.codes[known[s]] for s in mv.slots))
                old = table[mv.meld].meld
                added = oracle.try_extend(old, codes, mv.wild_end)
                if added is None:  # pragma: no cover - the generator offers legal moves only
                    continue
                score = _meld_gain(old, added, codes, wild_cost)
                if len(mv.slots) == len(hand):
                    after = [tm.meld for tm in table]
                    after[mv.meld] = added
                    score += _emptying_value(view, seat, after)
            else:
                continue
            score += rng.random() * 1e-3
            if score > best_score:
                best, best_score = mv, score
        if best is not None:
            return best
        if turn_up is not None and self._turn_up_pays(view, seat):
            return turn_up
        if not discards:
            return moves[0]
        return self._discard(view, seat, discards, rng)

    def _turn_up_pays(self, view: HandState, seat: int) -> bool:
        """Refuse the first card only when it does nothing for the hand and is no wild."""
        face = view.codes
        code = face[view.known[view.first_slot]]
        if _is_wild(code):
            return False
        others = [face[view.known[s]] for s in view.hands[seat] if s != view.first_slot]
        near, far = _Hand(others).run_links(code)
        return near == 0 and far == 0

    # ------------------------------------------------------------------ discard

    def _discard(
        self, view: HandState, seat: int, discards: list[Discard], rng: random.Random
    ) -> Discard:
        known = view.known
        face = view.codes
        hand_codes = [face[known[s]] for s in view.hands[seat]]
        if len(hand_codes) == 1:
            return discards[0]
        counts = _Hand(hand_codes)
        team = view.seat_side[seat]
        own = [_Shape(tm.meld) for tm in view.melds[team]]
        opp = [
            _Shape(tm.meld) for t, melds in enumerate(view.melds) if t != team for tm in melds
        ]
        nxt = _next_opponent(view, seat)
        refused = {
            face[known[m.slot]]
            for m in view.moves
            if isinstance(m, Discard) and m.seat == nxt and known[m.slot] >= 0
        }
        set_ranks = view.rules.set_ranks
        points = view.rules.face_points
        pile_len = len(view.pile)
        late = len(view.stock) < LATE_STOCK
        seen: dict[int, int] = {}
        best = discards[0]
        best_cost = float("inf")
        for mv in discards:
            code = face[known[mv.slot]]
            copies = seen.get(code, 0)
            seen[code] = copies + 1
            if _is_wild(code):
                cost = float(KEEP_WILD)
            else:
                near, far = counts.run_links(code)
                cost = KEEP_NEIGHBOUR * near + KEEP_NEAR * far
                r = code % 13 + 1
                if r in set_ranks:
                    cost += KEEP_SAME_RANK * (counts.by_rank[r] - 1)
                if any(sh.fits(code) for sh in own):
                    cost += KEEP_FITS_OWN
                if hand_codes.count(code) > 1:
                    cost -= KEEP_NEIGHBOUR * near / 2  # a second copy adds little to a run
                if late:
                    cost -= points[code] / 2
            if _is_wild(code) or any(sh.fits(code) for sh in opp):
                cost += DANGER_FITS_OPP + DANGER_PER_PILE_CARD * pile_len
            if code in refused:
                cost -= SAFE_REPEAT
            cost += rng.random() * 1e-3
            if cost < best_cost:
                best, best_cost = mv, cost
        return best


def _shown_cost(view: HandState, take: TakeDiscard) -> tuple[int, int]:
    """Fechado: how much a justification gives away. Any justification guarantees a meld for
    the top card and the play step picks the best meld afterwards, so show as little as
    possible: no wild if avoidable, then the fewest cards."""
    wilds = sum(1 for s in take.justify if _is_wild(view.codes[view.known[s]]))
    return wilds, len(take.justify)


def _top_goes_down(view: HandState, seat: int) -> bool:
    """Whether, after taking the pile, a legal lay-down or addition uses its top card.

    Additions of the top card alone are checked first, cheaply, where they leave two cards or
    more; then the generator's lay-downs on a copy after the take.
    """
    top = view.pile[-1]
    after = view.preview_take(seat)
    team = view.seat_side[seat]
    if view.opened[team] and len(after.hands[seat]) >= 3:
        code = (view.codes[view.known[top]],)
        if any(view.oracle.try_extend(tm.meld, code) for tm in view.melds[team]):
            return True
    if any(top in x for m in lay_downs(after, seat) for x in m.melds):
        return True
    return any(top in m.slots for m in additions(after, seat))


def _next_opponent(view: HandState, seat: int) -> int:
    """The next player in turn order on another side: whom a discard feeds first (after the
    three-player side change the next player may be a partner)."""
    team = view.seat_side[seat]
    nxt = view.next_seat[seat]
    while view.seat_side[nxt] == team and nxt != seat:
        nxt = view.next_seat[nxt]
    return nxt


def _emptying_value(view: HandState, seat: int, after: list[Meld]) -> int:
    outcome = view.emptying_outcome(seat, after)
    return GO_OUT_VALUE if outcome == GO_OUT else TAKE_POT_VALUE if outcome == TAKE_POT else 0


def _lay_down_gain(view: HandState, mv: LayDown, wild_cost: int) -> tuple[float, list[Meld]] | None:
    known = view.known
    score = 0.0
    melds: list[Meld] = []
    for i, slots in enumerate(mv.melds):
        codes = tuple(sorted(view.codes[known[s]] for s in slots))
        new = view.oracle.try_evaluate(codes, mv.end_of(i))
        if new is None:
            return None
        score += _meld_gain(None, new, codes, wild_cost)
        melds.append(new)
    return score, melds


def _meld_gain(old: Meld | None, new: Meld, codes: tuple[int, ...], wild_cost: int) -> float:
    """What moving `codes` from the hand onto a meld (new if `old` is None) is worth."""
    gain = float(new.card_points + new.bonus + CARD_OUT * len(codes) + _progress(new))
    if old is not None:
        gain -= old.card_points + old.bonus + _progress(old)
    if any(_is_wild(c) for c in codes) and not new.is_buraco and new.wild_index is not None:
        gain -= wild_cost
    return gain


def _progress(m: Meld) -> int:
    n = len(m.faces)
    if n >= 7:
        return 0
    return CLEAN_PROGRESS[n] if m.wild_index is None else DIRTY_PROGRESS[n]
