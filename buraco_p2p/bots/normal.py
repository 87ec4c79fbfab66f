"""The normal level: a partner that plays for its side.

It reads only what its seat's view knows: its own hand, the table, the discard pile, the
public move log and the cards it has seen go into the other hands (taken with the pile, shown
to justify a take, shown in a failed opening). Each call picks one move among
`legal_moves(view)`, by rules of thumb written as weights (`Style`), so the easy level can be
the same player with a human's habits:

- draw: take the pile only when its top card goes down this turn and the rest of it is worth
  holding (cards that join melds of the hand or of the side's table, against dead cards that
  cost points at the end); after a take, the top card is laid down in that turn. Heads up,
  where a pile left is the one opponent's to take, also a pile of three or more early in the
  hand when two of its cards are a card from a meld: they go down soon. Under fechado
  the take shows the justification that gives least away (no wild, fewest cards);
- play: every lay-down and addition is scored (card points onto the table, cards out of the
  hand, buraco bonuses, progress of clean melds toward seven, the cost of spending a wild,
  reaching the pot) and the best one is played while its score is positive. While the side's
  pot is still to take, every card shed is worth more, and more so as the stock runs down: a
  pot left to the stock costs 100. Going out is played when the side would be ahead after it,
  or when waiting is dangerous (the stock nearly out, an opponent able to go out); behind, the
  player keeps a card and builds instead;
- discard: the card least useful to the hand and the side's melds plus least useful to the
  next opponent: never a wild while another card will do, never a card that fits an opposing
  meld or joins cards the opponent is known to hold if avoidable, preferably one that
  opponent threw away before; late in the hand, the costly cards first.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

from buraco_p2p.bots.base import NoMoveError
from buraco_p2p.bots.shapes import (
    HandCounts,
    MeldShape,
    fits_any,
    is_wild,
    progress,
    shapes,
)
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
from buraco_p2p.rules import Meld

GO_OUT_VALUE: Final = 10_000  # going out, when it is wanted, beats any other move
PILE_DEBT: Final = 1_000  # laying down a card of the pile taken this turn, while none is yet
# A card of a hand nobody has seen, on average, in points (3..7 are 5, 8..K 10, aces 15).
UNSEEN_CARD_POINTS: Final = 8


@dataclass(frozen=True, slots=True)
class Style:
    """The weights of the normal level's rules of thumb (points on the preset's scale: a 7 is
    worth 5, a buraco 100-200)."""

    card_out: float = 8  # each card that leaves the hand
    card_out_pot: float = 8  # more per card while the side's pot is still to take
    pot_urgency: float = 30  # more per card again as the stock runs down, the pot still due
    wild_spent: float = 45  # giving up a wild's flexibility outside a buraco
    wild_spent_late: float = 5  # the same near the end of the hand
    late_rounds: float = 3.0  # rounds of the stock under which the hand is late
    take_pot_value: float = 150
    top_meld_bonus: float = 60  # laying down the pile's top card in the turn it was taken
    pile_meld_bonus: float = 30  # laying down other cards of it in that turn
    clean_progress: tuple[int, ...] = (0, 0, 0, 10, 25, 50, 85)
    dirty_progress: tuple[int, ...] = (0, 0, 0, 5, 10, 20, 35)
    # Going out: wanted when the side is ahead by this much after it (negative: even behind).
    go_out_margin: float = 0
    # Discard weights.
    keep_wild: float = 300
    keep_fits_own: float = 60
    keep_neighbour: float = 25
    keep_near: float = 10
    keep_same_rank: float = 12
    danger_fits_opp: float = 90
    danger_joins_known: float = 70
    danger_per_pile_card: float = 4
    safe_repeat: float = 15
    # Pile: a take is worth it when useful cards outweigh dead ones this much.
    pile_dead_ratio: float = 1.0
    pile_min_cards: int = 3  # a pile this big is worth taking for any card of it going down
    # Heads up, a pile this big is taken while the stock holds `heads_up_stock` cards, when
    # `heads_up_useful` of its cards are a card from a meld: left, it goes to the one opponent.
    heads_up_pile: int = 3
    heads_up_useful: int = 2
    heads_up_stock: int = 20


NORMAL: Final = Style()


class NormalBot:
    """Plays by the rules of thumb in the module doc with the given weights. Deterministic
    given the random source (used only to break exact ties)."""

    name = "normal"

    def __init__(self, style: Style = NORMAL) -> None:
        self.style = style

    def choose_move(self, view: HandState, rng: random.Random) -> Move:
        moves = legal_moves(view)
        if not moves:
            raise NoMoveError(f"player {view.turn} has no legal move (phase {view.phase.value})")
        if len(moves) == 1:
            return moves[0]
        if view.phase is Phase.DRAW:
            return self.draw(view, moves, rng)
        return self.play(view, moves, rng)

    # ------------------------------------------------------------------ draw

    def draw(self, view: HandState, moves: list[Move], rng: random.Random) -> Move:
        takes = [m for m in moves if isinstance(m, TakeDiscard)]
        stock = next((m for m in moves if isinstance(m, DrawStock)), None)
        if not takes:
            return moves[0]
        take = min(takes, key=lambda m: shown_cost(view, m))
        if stock is None or self.pile_pays(view, view.turn):
            return take
        return stock

    def pile_pays(self, view: HandState, seat: int) -> bool:
        """Whether the pile is worth taking: some of its cards go down this turn (its top
        card, or with a pile of `pile_min_cards` any of them) and its other cards are mostly
        of use (a hoard of dead cards costs points and the pot). Heads up, also a pile of
        `heads_up_pile` cards of which `heads_up_useful` are a card from a meld, while the
        stock is long: a pile refused there is the opponent's, who builds buracos with it."""
        st = self.style
        face = view.codes
        known = view.known
        pile = [face[known[s]] for s in view.pile]
        hand = [face[known[s]] for s in view.hands[seat]]
        team = view.seat_side[seat]
        own = shapes(view.melds[team])
        set_ranks = view.rules.set_ranks
        both = HandCounts(hand + pile)
        useful = 0
        dead_points = 0
        points = view.rules.face_points
        for c in pile:
            if is_wild(c):
                useful += 1
                continue
            near, far = both.run_links(c)
            if (
                near
                or fits_any(c, own)
                or (c % 13 + 1 in set_ranks and both.by_rank[c % 13 + 1] >= 2)
            ):
                useful += 1
            elif not far:
                dead_points += points[c]
        if (
            view.players == 2
            and len(pile) >= st.heads_up_pile
            and useful >= st.heads_up_useful
            and len(view.stock) >= st.heads_up_stock
        ):
            return True
        if _rounds_left(view) < st.late_rounds and dead_points > 10 * useful + 10:
            return False
        if useful * st.pile_dead_ratio < len(pile) - useful and len(pile) > 3:
            return False
        goes_down = pile_goes_down(view, seat)
        return goes_down == TOP or (goes_down == SOME and len(pile) >= st.pile_min_cards)

    # ------------------------------------------------------------------ play

    def play(self, view: HandState, moves: list[Move], rng: random.Random) -> Move:
        melds = self.meld_scores(view, moves, rng)
        best = max(melds, key=lambda x: x[0], default=None)
        if best is not None and best[0] > 0:
            return best[1]
        seat = view.turn
        turn_up = next((m for m in moves if isinstance(m, TurnUpFirst)), None)
        if turn_up is not None and self.turn_up_pays(view, seat):
            return turn_up
        discards = self.discard_costs(view, moves, rng)
        if not discards:
            return moves[0]
        return min(discards, key=lambda x: x[0])[1]

    def meld_scores(
        self, view: HandState, moves: list[Move], rng: random.Random
    ) -> list[tuple[float, Move]]:
        """Each lay-down and addition among `moves` with its score (worth playing when
        positive), exact ties broken by `rng`."""
        st = self.style
        seat = view.turn
        team = view.seat_side[seat]
        known = view.known
        hand = view.hands[seat]
        rounds = _rounds_left(view)
        late = rounds < st.late_rounds
        wild_cost = st.wild_spent_late if late else st.wild_spent
        card_out = st.card_out
        if pot_due(view, team):
            card_out += st.card_out_pot + st.pot_urgency / max(rounds, 1.0)
        top, owed = taken_top(view, seat)
        # The faces of the pile's cards in hand (public ones; a copy of the same face from the
        # hand melds as well, and the generator offers one slot per face)
        shown = {view.codes[known[s]] for s in hand if s in view.public} if top >= 0 else set()
        wants_out: bool | None = None
        table = view.melds[team]
        oracle = view.oracle
        out: list[tuple[float, Move]] = []
        for mv in moves:
            if isinstance(mv, LayDown):
                laid = _lay_down_gain(view, mv, wild_cost, card_out, st)
                if laid is None:  # pragma: no cover - the generator offers legal moves only
                    continue
                score, new_melds = laid
                used = sum(len(x) for x in mv.melds)
                after = [tm.meld for tm in table] + new_melds
                uses_top = top >= 0 and any(top in x for x in mv.melds)
                uses_pile = any(view.codes[known[s]] in shown for x in mv.melds for s in x)
            elif isinstance(mv, AddToMeld):
                codes = tuple(sorted(view.codes[known[s]] for s in mv.slots))
                old = table[mv.meld].meld
                added = oracle.try_extend(old, codes, mv.wild_end)
                if added is None:  # pragma: no cover - the generator offers legal moves only
                    continue
                score = _meld_gain(old, added, codes, wild_cost, card_out, st)
                used = len(mv.slots)
                after = [tm.meld for tm in table]
                after[mv.meld] = added
                uses_top = top in mv.slots
                uses_pile = any(view.codes[known[s]] in shown for s in mv.slots)
            else:
                continue
            if used >= len(hand) - 1:
                outcome = view.emptying_outcome(seat, after)
                if outcome == GO_OUT:
                    if wants_out is None:
                        wants_out = self.wants_out(view, seat, rng)
                    # emptied now, or by discarding the one card left
                    value = GO_OUT_VALUE if used == len(hand) else GO_OUT_VALUE / 2
                    score = value if wants_out else -value
                elif outcome == TAKE_POT and used == len(hand):
                    score += st.take_pot_value
            if uses_top or uses_pile:
                score += st.top_meld_bonus if uses_top else st.pile_meld_bonus
                if owed:
                    # A take is followed by a card of it laid down for good, always (even by
                    # going out behind): so the pile cannot pass back and forth for ever.
                    score = max(score, 0.0) + PILE_DEBT
            out.append((score + rng.random() * 1e-3, mv))
        return out

    def wants_out(self, view: HandState, seat: int, rng: random.Random) -> bool:
        """Go out now if it can be done? Yes when the side would be ahead in this hand after
        it, when the stock is nearly out, or when an opponent could go out first."""
        team = view.seat_side[seat]
        if _rounds_left(view) < 1.5:
            return True
        mine = _side_estimate(view, team, seat) + 100
        for t in range(len(view.sides)):
            if t == team:
                continue
            if view.team_pot[t] >= 0 and view.has_going_out_buraco(t):
                return True  # they could end it on their next turn
            if mine - _side_estimate(view, t, seat) < self.style.go_out_margin:
                return False
        return True

    def turn_up_pays(self, view: HandState, seat: int) -> bool:
        """Refuse the first card only when it does nothing for the hand and is no wild."""
        face = view.codes
        code = face[view.known[view.first_slot]]
        if is_wild(code):
            return False
        others = [face[view.known[s]] for s in view.hands[seat] if s != view.first_slot]
        near, far = HandCounts(others).run_links(code)
        return near == 0 and far == 0

    # ------------------------------------------------------------------ discard

    def discard_costs(
        self, view: HandState, moves: list[Move], rng: random.Random
    ) -> list[tuple[float, Discard]]:
        """Each discard among `moves` with what it costs (the cheapest is played), exact ties
        broken by `rng`."""
        discards = [m for m in moves if isinstance(m, Discard)]
        st = self.style
        seat = view.turn
        known = view.known
        face = view.codes
        hand_codes = [face[known[s]] for s in view.hands[seat]]
        if len(discards) <= 1:
            return [(0.0, m) for m in discards]
        counts = HandCounts(hand_codes)
        team = view.seat_side[seat]
        own = shapes(view.melds[team])
        opp: list[MeldShape] = []
        for t, melds in enumerate(view.melds):
            if t != team:
                opp.extend(shapes(melds))
        nxt = next_opponent(view, seat)
        public = view.public
        theirs = HandCounts(face[known[s]] for s in view.hands[nxt] if s in public)
        refused = {
            face[known[m.slot]]
            for m in view.moves
            if isinstance(m, Discard) and m.seat == nxt and known[m.slot] >= 0
        }
        set_ranks = view.rules.set_ranks
        points = view.rules.face_points
        pile_len = len(view.pile)
        late = _rounds_left(view) < st.late_rounds
        out: list[tuple[float, Discard]] = []
        for mv in discards:
            code = face[known[mv.slot]]
            r = code % 13 + 1
            if is_wild(code):
                cost = st.keep_wild
            else:
                near, far = counts.run_links(code)
                cost = st.keep_neighbour * near + st.keep_near * far
                if r in set_ranks:
                    cost += st.keep_same_rank * (counts.by_rank[r] - 1)
                if fits_any(code, own):
                    cost += st.keep_fits_own
                if hand_codes.count(code) > 1:
                    cost -= st.keep_neighbour * near / 2  # a second copy adds little to a run
                if late:
                    cost -= points[code] / 2
            if is_wild(code) or fits_any(code, opp):
                cost += st.danger_fits_opp + st.danger_per_pile_card * pile_len
            elif theirs.completes_meld(code, r in set_ranks):
                cost += st.danger_joins_known + st.danger_per_pile_card * pile_len
            if code in refused:
                cost -= st.safe_repeat
            out.append((cost + rng.random() * 1e-3, mv))
        return out


def shown_cost(view: HandState, take: TakeDiscard) -> tuple[int, int]:
    """Fechado: how much a justification gives away. Any justification guarantees a meld for
    the top card and the play step picks the best meld afterwards, so show as little as
    possible: no wild if avoidable, then the fewest cards."""
    wilds = sum(1 for s in take.justify if is_wild(view.codes[view.known[s]]))
    return wilds, len(take.justify)


# What of a pile goes down in the turn it is taken (`pile_goes_down`).
NONE: Final = 0
SOME: Final = 1
TOP: Final = 2


def pile_goes_down(view: HandState, seat: int) -> int:
    """Whether, after taking the pile, a legal lay-down or addition uses its top card (TOP),
    only other cards of it (SOME), or none (NONE).

    Additions of the top card alone are checked first, cheaply, where they leave two cards or
    more; then the generator's lay-downs and additions on a copy after the take.
    """
    top = view.pile[-1]
    team = view.seat_side[seat]
    after = view.preview_take(seat)
    if view.opened[team] and len(after.hands[seat]) >= 3:
        code = (view.codes[view.known[top]],)
        if any(view.oracle.try_extend(tm.meld, code) for tm in view.melds[team]):
            return TOP
    pile = set(view.pile)
    some = False
    for m in lay_downs(after, seat):
        for x in m.melds:
            if top in x:
                return TOP
            some = some or not pile.isdisjoint(x)
    for a in additions(after, seat):
        if top in a.slots:
            return TOP
        some = some or not pile.isdisjoint(a.slots)
    return SOME if some else NONE


def taken_top(view: HandState, seat: int) -> tuple[int, bool]:
    """The slot of the pile's top card if `seat` took the pile this turn (-1 otherwise): the
    card the take was for, to be laid down before the turn ends; and whether nothing has been
    laid down or added since the take (the take still owes the table a card)."""
    moves = view.moves
    i = len(moves) - 1
    while i >= 0 and moves[i].seat == seat and not isinstance(moves[i], TakeDiscard | Discard):
        i -= 1
    if i < 0 or not isinstance(moves[i], TakeDiscard) or moves[i].seat != seat:
        return -1, False
    owed = not any(isinstance(m, LayDown | AddToMeld) for m in moves[i + 1 :])
    top = -1
    for m in reversed(moves[:i]):
        if isinstance(m, Discard):
            top = m.slot
            break
    if top < 0:
        top = view.layout.face_up if view.layout.face_up is not None else view.first_slot
    return top, owed


def next_opponent(view: HandState, seat: int) -> int:
    """The next player in turn order on another side: whom a discard feeds first (after the
    three-player side change the next player may be a partner)."""
    team = view.seat_side[seat]
    nxt = view.next_seat[seat]
    while view.seat_side[nxt] == team and nxt != seat:
        nxt = view.next_seat[nxt]
    return nxt


def pot_due(view: HandState, team: int) -> bool:
    """The side has yet to take its pot, and one is left to take."""
    return view.team_pot[team] < 0 and view.next_pot() >= 0


def _rounds_left(view: HandState) -> float:
    """Rounds of the table before the stock runs out (each turn draws about one card)."""
    return len(view.stock) / view.players


def _side_estimate(view: HandState, team: int, seat: int) -> float:
    """What `team` would score if the hand ended now, as far as `seat` can tell: its melds
    and bonuses, less the cards its players hold (counted at face where seen, else at an
    average), less 100 for a pot it has not taken."""
    face = view.codes
    known = view.known
    points = view.rules.face_points
    public = view.public
    total = float(sum(tm.meld.card_points + tm.meld.bonus for tm in view.melds[team]))
    for s in view.sides[team]:
        if s == seat:
            continue  # the player going out holds nothing then
        for slot in view.hands[s]:
            total -= points[face[known[slot]]] if slot in public else UNSEEN_CARD_POINTS
    if view.team_pot[team] < 0:
        total -= 100
    return total


def _lay_down_gain(
    view: HandState, mv: LayDown, wild_cost: float, card_out: float, st: Style
) -> tuple[float, list[Meld]] | None:
    known = view.known
    score = 0.0
    melds: list[Meld] = []
    for i, slots in enumerate(mv.melds):
        codes = tuple(sorted(view.codes[known[s]] for s in slots))
        new = view.oracle.try_evaluate(codes, mv.end_of(i))
        if new is None:
            return None
        score += _meld_gain(None, new, codes, wild_cost, card_out, st)
        melds.append(new)
    return score, melds


def _meld_gain(
    old: Meld | None,
    new: Meld,
    codes: tuple[int, ...],
    wild_cost: float,
    card_out: float,
    st: Style,
) -> float:
    """What moving `codes` from the hand onto a meld (new if `old` is None) is worth."""
    cp, dp = st.clean_progress, st.dirty_progress
    gain = float(new.card_points + new.bonus + card_out * len(codes) + progress(new, cp, dp))
    if old is not None:
        gain -= old.card_points + old.bonus + progress(old, cp, dp)
    if any(is_wild(c) for c in codes) and not new.is_buraco and new.wild_index is not None:
        gain -= wild_cost
    return gain
