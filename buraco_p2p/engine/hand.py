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

import hashlib
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final, TypeVar

import msgpack

from buraco_p2p.cards import Card, face_codes, face_of
from buraco_p2p.engine.errors import IllegalMove, IllegalMoveCode, RevealError
from buraco_p2p.engine.layout import (
    DealLayout,
    deal_layout,
    play_order,
    pot_take_order,
    sides_at_deal,
)
from buraco_p2p.engine.moves import (
    AddToMeld,
    Discard,
    DrawStock,
    LayDown,
    Move,
    TakeDiscard,
    TurnUpFirst,
    check_shape,
)
from buraco_p2p.engine.oracle import MeldOracle
from buraco_p2p.engine.params import WILD_CODES, FirstDraw, Params
from buraco_p2p.engine.reveals import Reveal, RevealRequest, reveal_from_wire
from buraco_p2p.rules import Meld, MeldKind, RuleSet

__all__ = [
    "EMPTY",
    "GO_OUT",
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
    "reveal_from_wire",
    "team_of",
]

# Locations of a slot: 0..5 the hand of that seat, then these.
STOCK: Final = 8
PILE: Final = 9
TABLE: Final = 10  # 10..12: the melds of side 0..2
POT: Final = 16  # 16..18: the pots

T = TypeVar("T")

POT_UNTAKEN: Final = -1
POT_IS_STOCK: Final = -2

# What emptying a hand does.
TAKE_POT: Final = 0
GO_OUT: Final = 1
EMPTY: Final = 2  # only where the rules let a hand run empty without going out


class Phase(Enum):
    DRAW = "draw"  # the player to move must draw from the stock or take the pile
    FIRST_CHOICE = "first_choice"  # first card drawn (us, playingcards): keep it or turn it up
    PLAY = "play"  # meld, add, discard
    ENDED = "ended"


class EndReason(Enum):
    WENT_OUT = "went_out"
    STOCK_EXHAUSTED = "stock_exhausted"


@dataclass(frozen=True, slots=True)
class HandSetup:
    """Everything a hand depends on besides the shuffle: agreed by all peers before the deal.

    `team_scores` are the match totals before this hand, one per match side (per team at four
    and six, per player at two and three; empty: all zero); they set the initial-meld minimum.
    `cut` is the size of the cut from joint randomness (None where the preset has no cut).
    """

    rules: RuleSet
    dealer: int
    team_scores: tuple[int, ...] = ()
    cut: int | None = None
    hand_number: int = 0

    def __post_init__(self) -> None:
        if self.team_scores == () and isinstance(self.rules, RuleSet):
            object.__setattr__(self, "team_scores", (0,) * match_sides(self.rules))


@dataclass(frozen=True, slots=True)
class SideChange:
    """At three players: `solo` took the first pot and plays alone from `turn` (the count of
    turns played when it happened); `partners` are one side from then on."""

    solo: int
    partners: tuple[int, int]
    turn: int


def match_sides(rules: RuleSet) -> int:
    """How many scores a match keeps: one per player at two and three, one per team at four
    and six. Seat `s` scores in match side `s % match_sides(rules)`."""
    return rules.players if rules.players in (2, 3) else rules.teams


@dataclass(frozen=True, slots=True)
class TableMeld:
    """A meld on a team's table: the rules' `Meld` value and the slots it is made of."""

    meld: Meld
    slots: tuple[int, ...]


def team_of(seat: int) -> int:
    """The team of a seat at a four-player table; other counts ask `view.side_of(seat)`."""
    return seat & 1


class HandState:
    """The state of one hand as seen by one viewer (`viewer` is a seat, or None: referee)."""

    def __init__(
        self, setup: HandSetup, viewer: int | None, permutation: Sequence[int] | None
    ) -> None:
        self.setup = setup
        self.rules = setup.rules
        # A cache of this view's own (see `MeldOracle`): copies share it, other views never do.
        self.oracle: MeldOracle = MeldOracle(setup.rules)
        p: Params = self.oracle.params
        self.params = p
        players = setup.rules.players
        self.players = players
        if type(setup.dealer) is not int or not 0 <= setup.dealer < players:
            raise ValueError(f"dealer must be a seat 0..{players - 1}, not {setup.dealer!r}")
        scores = match_sides(setup.rules)
        if len(setup.team_scores) != scores or any(type(x) is not int for x in setup.team_scores):
            raise ValueError(f"team scores must be {scores} integers, not {setup.team_scores!r}")
        if setup.cut is not None and (
            type(setup.cut) is not int or not 0 < setup.cut < setup.rules.deck_size
        ):
            raise ValueError(f"impossible cut: {setup.cut!r}")
        if type(setup.hand_number) is not int or setup.hand_number < 0:
            raise ValueError(f"bad hand number: {setup.hand_number!r}")
        if viewer is not None and (type(viewer) is not int or not 0 <= viewer < players):
            raise ValueError(f"viewer must be a seat 0..{players - 1} or None, not {viewer}")
        self.viewer = viewer
        n = p.deck_size
        self.n = n
        self.codes: tuple[int, ...] = face_codes(n)
        self.layout: DealLayout = deal_layout(setup.rules)
        self.pot_order: tuple[int, ...] = pot_take_order(setup.rules)
        self.sides: tuple[tuple[int, ...], ...] = sides_at_deal(setup.rules)
        self.seat_side: list[int] = [s % len(self.sides) for s in range(players)]
        self.score_index: tuple[int, ...] = tuple(s % scores for s in range(players))
        self.side_change: SideChange | None = None
        self._pot_index: dict[int, int] = {
            s: i for i, pot in enumerate(self.layout.pots) for s in pot
        }
        self.order = play_order(setup.dealer, p.clockwise, players)
        nxt = [0] * players
        for i, s in enumerate(self.order):
            nxt[s] = self.order[(i + 1) % players]
        self.next_seat: tuple[int, ...] = tuple(nxt)

        self.where: list[int] = [STOCK] * n
        self.hands: list[list[int]] = [[] for _ in range(players)]
        for k, seat in enumerate(self.order):
            self.hands[seat] = list(self.layout.hands[k])
            for s in self.layout.hands[k]:
                self.where[s] = seat
        for i, pot in enumerate(self.layout.pots):
            for s in pot:
                self.where[s] = POT + i
        self.pile: list[int] = []
        if self.layout.face_up is not None:
            self.pile.append(self.layout.face_up)
            self.where[self.layout.face_up] = PILE
        # Top of the stock is the end of the list.
        self.stock: list[int] = list(reversed(self.layout.stock))
        self.pot_owner: list[int] = [POT_UNTAKEN] * len(self.layout.pots)
        k = len(self.sides)
        self.team_pot: list[int] = [-1] * k
        self.pot_taker: list[int] = [-1] * k
        self.pot_played: list[bool] = [False] * k
        self.melds: list[list[TableMeld]] = [[] for _ in range(k)]
        self.set_ranks: list[set[int]] = [set() for _ in range(k)]
        self.opened: list[bool] = [False] * k
        self.failed: list[int] = [0] * k
        # The melds shown this turn by a team that has not opened, under its minimum so far.
        self.opening: list[TableMeld] = []
        self.turn: int = self.order[0]
        self.turns_played: int = 0
        self.phase: Phase = Phase.DRAW
        self.first_slot: int = -1
        self.taken_single: int = -1
        self.must_meld: int = -1
        self.justified: tuple[int, ...] = ()
        self.last_turn: bool = False
        self.end_reason: EndReason | None = None
        self.went_out: int = -1
        self.moves: list[Move] = []

        self.known: list[int] = [-1] * n
        self.slot_of: dict[int, int] = {}
        self.public: set[int] = set()
        if permutation is not None:
            perm = list(permutation)
            if sorted(perm) != list(range(n)):
                raise ValueError(f"a permutation must hold each card id 0..{n - 1} once")
            self.known = perm
            self.slot_of = {c: s for s, c in enumerate(perm)}
        # Slots that must be public before the first move (the face-up card).
        self.awaiting_public: set[int] = set()
        if self.layout.face_up is not None:
            if permutation is not None:
                self.public.add(self.layout.face_up)
            else:
                self.awaiting_public.add(self.layout.face_up)

    # ------------------------------------------------------------------ queries

    @property
    def ended(self) -> bool:
        return self.phase is Phase.ENDED

    def initial_minimum(self, team: int, seat: int | None = None) -> int:
        """Points the side must lay down at once to open (0: no minimum), when `seat` (by
        default its first player) lays down: the minimum follows that player's match score."""
        who = self.sides[team][0] if seat is None else seat
        score = self.setup.team_scores[self.score_index[who]]
        return self.rules.initial_meld_minimum(score, self.failed[team])

    def side_of(self, seat: int) -> int:
        """The side (index into `sides` and the per-side arrays) `seat` plays on now."""
        return self.seat_side[seat]

    def partners(self, seat: int) -> tuple[int, ...]:
        """The other players on `seat`'s side now (none where each player is a side)."""
        return tuple(s for s in self.sides[self.seat_side[seat]] if s != seat)

    def card(self, slot: int) -> int | None:
        """The card id in `slot` if this view knows it."""
        c = self.known[slot]
        return None if c < 0 else c

    def face(self, slot: int) -> Card | None:
        c = self.known[slot]
        return None if c < 0 else face_of(c, self.n)

    def hand(self, seat: int) -> tuple[int, ...]:
        return tuple(self.hands[seat])

    def deal_reveals(self) -> tuple[RevealRequest, ...]:
        """The reveals the deal needs: each hand privately to its owner, the face-up card to all."""
        out = [
            RevealRequest(s, seat)
            for k, seat in enumerate(self.order)
            for s in self.layout.hands[k]
        ]
        if self.layout.face_up is not None:
            out.append(RevealRequest(self.layout.face_up, None))
        return tuple(out)

    def end_reveals(self) -> tuple[RevealRequest, ...]:
        """Slots to reveal publicly for the end-of-hand count (empty while the hand runs).

        Every card left in a hand is shown, an unplayed pot included: the preset decides
        whether it counts, and showing it lets every peer check the count.
        """
        if not self.ended:
            return ()
        return tuple(RevealRequest(s, None) for hand in self.hands for s in hand)

    def lone_take_stalls(self, seat: int) -> bool:
        """Whether taking the pile now would leave `seat` holding only its one card, which
        they may not discard (`may_discard_lone_taken_card` off): possible only with a hand
        emptied where that does not end the hand. They could not end their turn, so such a
        take is refused; the stock is never empty at a draw."""
        return (
            len(self.pile) == 1 and self.params.no_discard_single_taken and not self.hands[seat]
        )

    def opening_slots(self) -> set[int]:
        """The hand slots of this turn's opening melds so far (see `opening`)."""
        return {s for tm in self.opening for s in tm.slots}

    def opening_points(self) -> int:
        """The card points of this turn's opening melds so far."""
        return sum(tm.meld.card_points for tm in self.opening)

    def pot_unplayed(self, team: int) -> bool:
        """The team took a pot and none of its cards has left the taker's hand."""
        return self.team_pot[team] >= 0 and not self.pot_played[team]

    def has_going_out_buraco(self, team: int) -> bool:
        return self.oracle.going_out_ok(tm.meld for tm in self.melds[team])

    def copy(self) -> HandState:
        """An independent copy (for simulations): same view, same knowledge."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.where = list(self.where)
        new.hands = [list(h) for h in self.hands]
        new.pile = list(self.pile)
        new.stock = list(self.stock)
        new.pot_owner = list(self.pot_owner)
        new.team_pot = list(self.team_pot)
        new.pot_taker = list(self.pot_taker)
        new.pot_played = list(self.pot_played)
        new.melds = [list(t) for t in self.melds]
        new.set_ranks = [set(r) for r in self.set_ranks]
        new.opened = list(self.opened)
        new.failed = list(self.failed)
        new.seat_side = list(self.seat_side)
        new.opening = list(self.opening)
        new.moves = list(self.moves)
        new.known = list(self.known)
        new.slot_of = dict(self.slot_of)
        new.public = set(self.public)
        new.awaiting_public = set(self.awaiting_public)
        return new

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

    def _check_distinct_held(self, slots: tuple[int, ...], twice: str) -> None:
        """Refuse slots named twice (`twice` says so) or not in the hand of the player to move."""
        if len(set(slots)) != len(slots):
            raise self._fail(IllegalMoveCode.DUPLICATE_SLOT, twice)
        where = self.where
        seat = self.turn
        n = self.n
        for s in slots:
            if not 0 <= s < n or where[s] != seat:
                raise self._fail(IllegalMoveCode.NOT_HELD, f"slot {s} is not in your hand")

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

    # ------------------------------------------------------------------ reveals

    def reveal(self, slot: int, card_id: int, public: bool = False) -> None:
        """Tell this view that `slot` holds `card_id` (privately to its viewer, or publicly)."""
        if type(slot) is not int or not 0 <= slot < self.n:
            raise RevealError(f"no slot {slot!r} in a {self.n}-card deck")
        if type(card_id) is not int or not 0 <= card_id < self.n:
            raise RevealError(f"no card id {card_id!r} in a {self.n}-card deck")
        if not public and self.viewer is not None and self.where[slot] != self.viewer:
            raise RevealError(f"slot {slot} is not in player {self.viewer}'s hand")
        have = self.known[slot]
        if have >= 0 and have != card_id:
            raise RevealError(f"slot {slot} already holds card {have}, not {card_id}")
        other = self.slot_of.get(card_id)
        if other is not None and other != slot:
            raise RevealError(f"card {card_id} is already in slot {other}")
        self.known[slot] = card_id
        self.slot_of[card_id] = slot
        if public:
            self.public.add(slot)
            self.awaiting_public.discard(slot)

    def apply(self, reveal: Reveal) -> None:
        """`reveal()` for a `Reveal` value."""
        self.reveal(reveal.slot, reveal.card_id, reveal.public)

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

    # ------------------------------------------------------------------ moves

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

    def _fail(self, code: IllegalMoveCode, message: str) -> IllegalMove:
        return IllegalMove(code, message, self.turn)

    def _need_phase(self, *phases: Phase) -> None:
        if self.phase not in phases:
            raise self._fail(
                IllegalMoveCode.WRONG_PHASE, f"not allowed now (phase {self.phase.value})"
            )

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

    def _take_discard(self, move: TakeDiscard) -> tuple[RevealRequest, ...]:
        self._need_phase(Phase.DRAW)
        if not self.pile:
            raise self._fail(IllegalMoveCode.EMPTY_PILE, "the discard pile is empty")
        shown = self._justify_kept_card(move.seat, move.justify)
        if shown and self.known[shown[0]] < 0:
            raise self._fail(IllegalMoveCode.UNKNOWN_CARD, f"slot {shown[0]} has not been revealed")
        problem = self.justification_problem(move, private=bool(shown))
        if problem is not None:
            raise problem
        self._apply_take(move.seat)
        self.public.update(move.justify)
        self.public.update(shown)
        self.justified = move.justify
        return ()

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
        for after in self._justified_tables(seat, key, why):
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
        self, seat: int, key: tuple[int, ...], why: list[str]
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
                meld = oracle.try_evaluate(key, end)
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
                grown = oracle.try_extend(old, key, end)
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

    def _check_held_known(self, slots: Iterable[int]) -> list[int]:
        """Face codes of the slots, all held by the player to move and known to this view."""
        seat = self.turn
        where = self.where
        known = self.known
        n = self.n
        for s in slots:
            if not 0 <= s < n or where[s] != seat:
                raise self._fail(IllegalMoveCode.NOT_HELD, f"slot {s} is not in your hand")
        codes: list[int] = []
        for s in slots:
            c = known[s]
            if c < 0:
                raise self._fail(IllegalMoveCode.UNKNOWN_CARD, f"slot {s} has not been revealed")
            codes.append(self.codes[c])
        return codes

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

    def next_pot(self) -> int:
        """The pot the next side to empty a hand takes (-1: none is left to take)."""
        owner = self.pot_owner
        for i in self.pot_order:
            if owner[i] == POT_UNTAKEN:
                return i
        return -1

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

    def _end(self, reason: EndReason) -> tuple[RevealRequest, ...]:
        self.phase = Phase.ENDED
        self.end_reason = reason
        self.turns_played += 1
        if self.viewer is None:
            # The referee knows every card: the end-of-hand count is public knowledge.
            self.public.update(s for hand in self.hands for s in hand)
        return self.end_reveals()

    # ------------------------------------------------------------------ hashing

    def public_state(self) -> list[object]:
        """The public part of the state as plain data (what `state_hash` hashes)."""
        s = self.setup
        pub = sorted(self.public)
        melds = [
            [[list(tm.slots), self.oracle.summary(tm.meld)] for tm in team]
            for team in self.melds
        ]
        return [
            1,
            self.oracle.rules_digest,
            [s.dealer, list(s.team_scores), -1 if s.cut is None else s.cut, s.hand_number],
            self.turn,
            self.phase.value,
            self.turns_played,
            [list(h) for h in self.hands],
            list(self.stock),
            list(self.pile),
            list(self.pot_owner),
            list(self.team_pot),
            list(self.pot_played),
            melds,
            list(self.opened),
            list(self.failed),
            [[p, self.known[p]] for p in pub],
            [self.first_slot, self.taken_single, self.must_meld, self.last_turn],
            [self.end_reason.value if self.end_reason else "", self.went_out],
            [[list(tm.slots), self.oracle.summary(tm.meld)] for tm in self.opening],
            [list(side) for side in self.sides],
            [] if (c := self.side_change) is None else [c.solo, list(c.partners), c.turn],
        ]

    def state_hash(self) -> bytes:
        """SHA-256 of the public state: equal on every view after the same moves and reveals."""
        data = msgpack.packb(self.public_state(), use_bin_type=True)
        return hashlib.sha256(data).digest()


class PlayerView(HandState):
    """One player's view: it knows the cards revealed to it (its own hand) and public cards."""

    def __init__(self, setup: HandSetup, seat: int) -> None:
        super().__init__(setup, seat, None)


class RefereeView(HandState):
    """A view that knows the whole permutation: `permutation[slot]` is that slot's card id."""

    def __init__(self, setup: HandSetup, permutation: Sequence[int]) -> None:
        super().__init__(setup, None, permutation)
