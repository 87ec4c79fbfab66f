"""The state of one hand as one view sees it, and the questions asked of it.

`HandBase` holds everything a hand is: the deal (where every slot lies at the start, from the
fixed layout), the sides, the piles, the melds and pots, what this view knows of each card,
and the turn and phase. It answers questions (the initial minimum, a seat's side, a view's
cards, which pot comes next), takes reveals, and copies itself. The modules above it add the
move handling one concern at a time, each a subclass adding methods and no state of its own:
`precheck` (what a move shows, checked before any face is seen), `ending` (emptying a hand,
the pot, going out, the end of a turn and of the hand), `pile` (taking the discard pile and
the fechado justification), `melding` (lay-downs, the opening, additions), `turn` (drawing,
turning up, discarding); `hand.HandState` dispatches `push` to them. So every piece of state
is declared here, and a copy made here is a copy of the whole hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Self

import buraco_p2p.engine.public as public_part
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
    Move,
)
from buraco_p2p.engine.oracle import MeldOracle
from buraco_p2p.engine.params import Params
from buraco_p2p.engine.reveals import Reveal, RevealRequest
from buraco_p2p.engine.values import (
    PILE,
    POT,
    POT_UNTAKEN,
    STOCK,
    EndReason,
    HandSetup,
    Phase,
    SideChange,
    TableMeld,
    match_sides,
)


class HandBase:
    """The state of one hand as seen by one viewer (`viewer` is a seat, or None: referee)."""

    def __init__(
        self, setup: HandSetup, viewer: int | None, permutation: Sequence[int] | None
    ) -> None:
        self.setup = setup
        self.rules = setup.rules
        # Memoised meld checks: a private cache of this view's own (copies share it, other
        # views never do) and the public one every view shares (see `MeldOracle`).
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
        return len(self.pile) == 1 and self.params.no_discard_single_taken and not self.hands[seat]

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

    def next_pot(self) -> int:
        """The pot the next side to empty a hand takes (-1: none is left to take)."""
        owner = self.pot_owner
        for i in self.pot_order:
            if owner[i] == POT_UNTAKEN:
                return i
        return -1

    def copy(self) -> Self:
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

    def _fail(self, code: IllegalMoveCode, message: str) -> IllegalMove:
        return IllegalMove(code, message, self.turn)

    def _need_phase(self, *phases: Phase) -> None:
        if self.phase not in phases:
            raise self._fail(
                IllegalMoveCode.WRONG_PHASE, f"not allowed now (phase {self.phase.value})"
            )

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

    def public_state(self) -> list[object]:
        """The public part of the state as plain data (what `state_hash` hashes)."""
        return public_part.public_state(self)

    def state_hash(self) -> bytes:
        """SHA-256 of the public state: equal on every view after the same moves and reveals."""
        return public_part.state_hash(self)
