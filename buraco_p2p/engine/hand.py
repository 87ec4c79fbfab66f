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

The hand is written in layers, one module each, every layer a subclass adding one concern:
`values` (the setup and the small values), `state` (the state, the deal and the queries),
`public` (the public state and its hash), `precheck` (what a move shows, before any face is
seen), `ending` (emptying a hand, pots, going out, the end), `pile` (pile takes and the
fechado justification), `melding` (lay-downs, the opening, additions), `turn` (draws and
discards); `HandState`, here, dispatches `push` to them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

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
from buraco_p2p.engine.reveals import Reveal, RevealRequest, reveal_from_wire
from buraco_p2p.engine.turn import Turn
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


class HandState(Turn):
    """The state of one hand as seen by one viewer (`viewer` is a seat, or None: referee)."""

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
