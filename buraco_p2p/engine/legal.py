"""Legal-move generation for the player to move, from a view that knows that player's hand.

Every move returned is legal (pushing it succeeds). Draws, pile takes, first-card turn-ups and
discards are complete. Melds cannot be enumerated completely (the number of subsets of a hand
is exponential), so the generator returns a useful set:

- new runs, per suit: every window of consecutive naturals of length >= 3 (so every maximal
  run and every sub-run), every window of >= 2 naturals with one wild at the high end (and at
  the low end too where the preset lets the player choose), and every window with exactly one
  inner gap filled by a wild; wild candidates are one deuce and one joker from the hand;
- new sets (where the preset has them and the team has no set of that rank yet): the first
  3..k naturals of each rank, and 2..k naturals plus one wild;
- a team that has not opened yet gets each candidate meld that reaches its minimum alone, and,
  where the melds of the opening turn count together, pairs of disjoint candidates that reach
  it together (capped) and single melds that reach it with the turn's opening so far; never
  a lay-down that stays under the minimum;
- additions, per team meld: every distinct single card from the hand that fits, and chains of
  cards grown one card at a time while each step still fits (capped per meld);
- with the fechado "justify" rule, the pile is offered once per distinct justification: the
  hand cards of each generated meld or addition that would use its top card after the take
  (none when the top card alone fits a team meld), each checked by `justification_problem`;
  until the top card is melded only moves using it are offered, the one the take showed
  always among them;
- no move that would leave the player with one card they could not discard, and no meld or
  addition that empties the hand to go out where the preset closes only by a discard.

Addition slot tuples are sorted, so equal moves compare equal whatever path found them.
"""

from __future__ import annotations

from collections.abc import Iterator

from buraco_p2p.engine.hand import (
    GO_OUT,
    HandState,
    Phase,
)
from buraco_p2p.engine.moves import (
    AddToMeld,
    Discard,
    DrawStock,
    LayDown,
    Move,
    TakeDiscard,
    TurnUpFirst,
)
from buraco_p2p.engine.params import WILD_CODES
from buraco_p2p.rules import Meld, MeldKind, WildEnd

MAX_PAIRS = 64
MAX_CHAINS_PER_MELD = 48


def legal_moves(view: HandState) -> list[Move]:
    """Legal moves of the player to move (see the module doc for what melds are generated).

    The view must know that player's hand: their own `PlayerView` or a `RefereeView`.
    """
    if view.phase is Phase.ENDED:
        return []
    seat = view.turn
    if view.viewer is not None and view.viewer != seat:
        raise ValueError(f"player {view.viewer}'s view does not know player {seat}'s hand")
    if view.awaiting_public:
        return []
    if view.phase is Phase.DRAW:
        out: list[Move] = []
        if view.stock:
            out.append(DrawStock(seat))
        if view.pile and not view.lone_take_stalls(seat):
            if view.params.must_meld_top:
                out.extend(_justified_takes(view, seat))
            else:
                out.append(TakeDiscard(seat))
        return out
    out = []
    if view.phase is Phase.FIRST_CHOICE and view.known[view.first_slot] >= 0:
        out.append(TurnUpFirst(seat))
    hand = view.hands[seat]
    if any(view.known[s] < 0 for s in hand):
        return out
    top = view.must_meld
    if top >= 0:
        out.extend(m for m in _lay_downs(view, seat) if any(top in x for x in m.melds))
        out.extend(m for m in _additions(view, seat) if top in m.slots)
        want = {*view.justified, top}
        if not any(
            (set(m.slots) if isinstance(m, AddToMeld) else {s for x in m.melds for s in x})
            == want
            for m in out
            if isinstance(m, LayDown | AddToMeld)
        ):
            shown = _shown_meld(view, seat, top)
            if shown is not None:
                out.append(shown)
        return out
    out.extend(_lay_downs(view, seat))
    out.extend(_additions(view, seat))
    out.extend(_discards(view, seat))
    return out


def _discards(view: HandState, seat: int) -> Iterator[Discard]:
    if view.must_meld >= 0:
        return
    hand = view.hands[seat]
    if len(hand) == 1:
        s = hand[0]
        outcome = view.emptying_outcome(seat, None)
        if outcome < 0 or s == view.taken_single:
            return
        if (
            outcome == GO_OUT
            and not view.params.wild_going_out
            and view.codes[view.known[s]] in WILD_CODES
        ):
            return
        yield Discard(seat, s)
        return
    for s in hand:
        if s != view.taken_single:
            yield Discard(seat, s)


def _wild_options(codes: dict[int, int], used: set[int]) -> list[int]:
    """One deuce and one joker slot from `codes` (slot -> face code), not in `used`."""
    deuce = joker = -1
    for s, c in codes.items():
        if s in used:
            continue
        if c == 52:
            if joker < 0:
                joker = s
        elif c % 13 == 1 and deuce < 0:
            deuce = s
    return [w for w in (deuce, joker) if w >= 0]


def _candidate_slots(
    codes: dict[int, int], set_ranks: frozenset[int], skip_set_ranks: set[int]
) -> Iterator[tuple[int, ...]]:
    """Candidate new melds (slot tuples) from cards `codes` (slot -> face code)."""
    by_code: dict[int, list[int]] = {}
    for s, c in codes.items():
        by_code.setdefault(c, []).append(s)
    for suit in range(4):
        base = suit * 13
        # pos -> slot for positions 1..14 (1 low ace, 2 this suit's deuce, 14 high ace)
        pos: dict[int, int] = {}
        for r in range(1, 14):
            slots = by_code.get(base + r - 1)
            if slots:
                pos[r] = slots[0]
        aces = by_code.get(base, [])
        if aces:
            pos[14] = aces[1] if len(aces) > 1 else aces[0]
        if len(pos) < 2:
            continue
        for lo in range(1, 14):
            if lo not in pos:
                continue
            gap = False
            naturals: list[int] = []
            for hi in range(lo, 15):
                present = hi in pos and not (hi == 14 and lo == 1 and pos[14] == pos[1])
                if not present:
                    if gap:
                        break
                    gap = True
                    continue
                naturals.append(pos[hi])
                if not gap:
                    if len(naturals) >= 3:
                        yield tuple(naturals)
                    if len(naturals) >= 2:
                        for w in _wild_options(codes, set(naturals)):
                            yield (*naturals, w)
                elif len(naturals) >= 2:
                    for w in _wild_options(codes, set(naturals)):
                        yield (*naturals, w)
    for rank in sorted(set_ranks):
        if rank in skip_set_ranks:
            continue
        nat = [s for suit in range(4) for s in by_code.get(suit * 13 + rank - 1, [])]
        for k in range(3, len(nat) + 1):
            yield tuple(nat[:k])
        if len(nat) >= 2:
            for w in _wild_options(codes, set(nat)):
                for k in range(2, len(nat) + 1):
                    yield (*nat[:k], w)


LOW_END = 1


def _evaluated(
    view: HandState, codes: dict[int, int], skip_set_ranks: set[int], low_end: set[int]
) -> list[tuple[tuple[int, ...], Meld]]:
    """Candidate melds that the rules accept; ids of low-end variants go into `low_end`."""
    oracle = view.oracle
    low_ok = view.rules.wild_end is WildEnd.EITHER
    out = []
    seen: set[tuple[int, ...]] = set()
    for slots in _candidate_slots(codes, view.rules.set_ranks, skip_set_ranks):
        key = tuple(sorted(codes[s] for s in slots))
        if key in seen:
            continue
        seen.add(key)
        meld = oracle.try_evaluate(key)
        if meld is not None:
            out.append((slots, meld))
            if low_ok and meld.wild_index == len(meld.faces) - 1 and meld.kind is MeldKind.RUN:
                # The same run with its wild at the low end, where the player may choose.
                low = oracle.try_evaluate(key, LOW_END)
                if low is not None and low.start != meld.start:
                    out.append((slots, low))
                    low_end.add(id(low))
    return out


def _lay_downs(view: HandState, seat: int) -> Iterator[LayDown]:
    team = view.seat_side[seat]
    # The melds shown earlier in this turn's opening stay in the hand and go down with it.
    shown = view.opening_slots()
    face = view.codes
    codes = {s: face[view.known[s]] for s in view.hands[seat] if s not in shown}
    skip = view.set_ranks[team] if view.params.one_set_per_rank else set()
    if view.params.one_set_per_rank and view.opening:
        skip = skip | {r for tm in view.opening if (r := view.oracle.set_rank(tm.meld)) is not None}
    low_end: set[int] = set()
    cands = _evaluated(view, codes, skip, low_end)
    table = [tm.meld for tm in view.melds[team]] + [tm.meld for tm in view.opening]

    def lay(*melds: tuple[tuple[int, ...], Meld]) -> LayDown:
        ends = tuple(LOW_END if id(m) in low_end else 0 for _, m in melds)
        return LayDown(seat, tuple(s for s, _ in melds), ends if any(ends) else ())

    def ok(melds: list[tuple[tuple[int, ...], Meld]]) -> bool:
        used = {s for slots, _ in melds for s in slots} | shown
        return _leaves_ok(view, seat, used, table + [m for _, m in melds])

    if view.opened[team]:
        for slots, meld in cands:
            if ok([(slots, meld)]):
                yield lay((slots, meld))
        return
    need = view.initial_minimum(team, seat) - view.opening_points()
    small = []
    for slots, meld in cands:
        if meld.card_points >= need:
            if ok([(slots, meld)]):
                yield lay((slots, meld))
        else:
            small.append((slots, meld))
    if not view.params.opening_by_turn:
        return  # one meld must reach the minimum alone
    pairs = 0
    for i, (s1, m1) in enumerate(small):
        for s2, m2 in small[i + 1 :]:
            if m1.card_points + m2.card_points < need or set(s1) & set(s2):
                continue
            if m1.rank is not None and m1.rank == m2.rank:
                continue
            if not ok([(s1, m1), (s2, m2)]):
                continue
            yield lay((s1, m1), (s2, m2))
            pairs += 1
            if pairs >= MAX_PAIRS:
                return


def _may_take(meld: Meld, code: int) -> bool:
    """A necessary condition for one card to fit a meld: cheap integer tests that spare most
    of the rules layer's work (which stays the judge)."""
    rank = 0 if code == 52 else code % 13 + 1
    if meld.kind is MeldKind.SET:
        return rank == meld.rank or (rank <= 2 and meld.wild_index is None)
    suit = code // 13
    if rank <= 2:
        if meld.wild_index is None or suit == meld.suit:
            return True
        # The run's own deuce standing as its wild may settle at its place for a new wild.
        wild = meld.faces[meld.wild_index]
        return wild.rank == 2 and wild.suit == meld.suit
    if suit != meld.suit:
        return False
    start = meld.start
    end = start + len(meld.faces) - 1
    if meld.wild_index is None:
        lo, hi, wpos = start - 1, end + 1, -9
    else:
        # A wild standing at an end may move to fill the gap the new card leaves.
        lo, hi, wpos = start - 2, end + 2, start + meld.wild_index
    for pos in (1, 14) if rank == 1 else (rank,):
        if lo <= pos < start or end < pos <= hi or pos == wpos:
            return True
    return False


def _may_join(meld: Meld, code: int) -> bool:
    """A necessary condition for a card to be part of a several-card addition."""
    if code == 52:
        return True
    rank = code % 13 + 1
    if rank == 2:
        return True
    if meld.kind is MeldKind.SET:
        return rank == meld.rank
    return code // 13 == meld.suit


def _additions(view: HandState, seat: int) -> Iterator[AddToMeld]:
    team = view.seat_side[seat]
    table = view.melds[team]
    if not table:
        return
    hand = view.hands[seat]
    n = len(hand)
    known = view.known
    face = view.codes
    hand_codes = [(s, face[known[s]]) for s in hand]
    one_per_code: dict[int, int] = {}
    for s, c in hand_codes:
        one_per_code.setdefault(c, s)
    oracle = view.oracle
    for i, tm in enumerate(table):
        base = tm.meld
        grown: list[tuple[tuple[int, ...], tuple[int, ...], Meld]] = []
        seen: set[tuple[int, ...]] = set()
        for c, s in one_per_code.items():
            if not _may_take(base, c):
                continue
            m = oracle.try_extend(base, (c,))
            if m is None:
                continue
            grown.append(((s,), (c,), m))
            seen.add((c,))
        frontier = list(grown)
        while frontier and len(grown) < MAX_CHAINS_PER_MELD:
            nxt: list[tuple[tuple[int, ...], tuple[int, ...], Meld]] = []
            for slots, codes, _ in frontier:
                for s, c in hand_codes:
                    if s in slots or not _may_join(base, c):
                        continue
                    key = tuple(sorted((*codes, c)))
                    if key in seen:
                        continue
                    seen.add(key)
                    m = oracle.try_extend(base, key)
                    if m is not None:
                        nxt.append(((*slots, s), key, m))
            grown.extend(nxt)
            frontier = nxt
        for slots, _, m in grown[:MAX_CHAINS_PER_MELD]:
            if len(slots) >= n - 1:
                after = [x.meld for x in table]
                after[i] = m
                if not _leaves_ok(view, seat, set(slots), after):
                    continue
            yield AddToMeld(seat, i, tuple(sorted(slots)))


def _leaves_ok(view: HandState, seat: int, used: set[int], after: list[Meld]) -> bool:
    """Whether taking `used` out of the hand leaves a legal hand (empty or discardable)."""
    hand = view.hands[seat]
    left = len(hand) - len(used)
    if left >= 2:
        return True
    if left == 0:
        return view.meld_emptying_outcome(seat, after) >= 0
    last = next(s for s in hand if s not in used)
    return view.last_card_problem(seat, last, after) is None


def _justified_takes(view: HandState, seat: int) -> list[TakeDiscard]:
    """Fechado: one `TakeDiscard` per distinct justification found, each one legal.

    The candidates are the hand cards of the generated melds and additions that use the top
    card on a copy where the pile has been taken, so the player is never left holding a top
    card they cannot meld.
    """
    if any(view.known[s] < 0 for s in view.pile) or any(
        view.known[s] < 0 for s in view.hands[seat]
    ):
        return []
    top = view.pile[-1]
    if not _top_may_go_down(view, seat, view.codes[view.known[top]]):
        return []
    own = set(view.hands[seat])
    sim = view.preview_take(seat)
    # The generator keeps one card per face; put the top card first so that it is that one.
    sim.hands[seat].remove(top)
    sim.hands[seat].insert(0, top)
    found: dict[tuple[int, ...], None] = {}
    for lay in _lay_downs(sim, seat):
        for meld in lay.melds:
            if top in meld:
                just = tuple(sorted(s for s in meld if s != top))
                if own.issuperset(just):
                    found.setdefault(just, None)
    for add in _additions(sim, seat):
        if top in add.slots:
            just = tuple(sorted(s for s in add.slots if s != top))
            if own.issuperset(just):
                found.setdefault(just, None)
    out = []
    for just in found:
        move = TakeDiscard(seat, just)
        if view.justification_problem(move, private=True) is None:
            out.append(move)
    return out


def _top_may_go_down(view: HandState, seat: int, top: int) -> bool:
    """A cheap necessary condition for the top card (face code `top`) to be melded with cards
    of the hand or onto a team meld: it spares the full search on most draws."""
    if top in WILD_CODES:
        return True
    rank = top % 13 + 1
    suit = top // 13
    spots = (1, 14) if rank == 1 else (rank,)
    set_ok = rank in view.rules.set_ranks
    for s in view.hands[seat]:
        c = view.codes[view.known[s]]
        if c in WILD_CODES:
            return True
        r = c % 13 + 1
        if set_ok and r == rank:
            return True
        if c // 13 == suit and any(
            0 < abs(p - q) <= 2 for p in spots for q in ((1, 14) if r == 1 else (r,))
        ):
            return True
    return any(_may_take(tm.meld, top) for tm in view.melds[view.seat_side[seat]])


def _shown_meld(view: HandState, seat: int, top: int) -> Move | None:
    """The meld a justified take showed (the top card with the shown cards), when legal now.

    The generator may not find every meld a player can show, so it offers this one too: the
    justification guarantees it (or another use of the top card) exists.
    """
    just = view.justified
    if any(s not in view.hands[seat] for s in just):
        return None
    slots = (*just, top)
    ends = (0, 1, 2)
    for end in ends:
        lay = LayDown(seat, (slots,), (end,) if end else ())
        if view.is_legal(lay):
            return lay
    for i in range(len(view.melds[view.seat_side[seat]])):
        for end in ends:
            add = AddToMeld(seat, i, tuple(sorted(slots)), end)
            if view.is_legal(add):
                return add
    return None


def lay_downs(view: HandState, seat: int) -> Iterator[LayDown]:
    """The lay-downs `legal_moves` would offer `seat` in a play phase, lazily: for a caller
    (a bot) that only asks whether one with some card exists."""
    return _lay_downs(view, seat)


def additions(view: HandState, seat: int) -> Iterator[AddToMeld]:
    """The additions `legal_moves` would offer `seat` in a play phase, lazily."""
    return _additions(view, seat)
