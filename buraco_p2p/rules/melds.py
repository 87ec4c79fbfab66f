"""Meld validation: which faces form a run or a set under a preset, and how they lie.

A run is described by positions 1..14 of one suit: 1 is the low ace, 2..13 the ranks, 14 the
high ace. Every natural card has exactly one position (an ace one of two), so a meld is legal
when its naturals fill a window of positions with at most one gap, which the single wild fills;
otherwise the wild stands at one end. Deuces and jokers are wild, except a deuce of the run's
suit standing at position 2, which is natural. Faces may be given in any order: the layout is
chosen deterministically (a natural deuce whenever possible, the wild at the high end unless the
player asks for the low one), so every peer computes the same meld.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from buraco_p2p.cards import ACE, DEUCE, FACES, JOKER_RANK, Card, Suit
from buraco_p2p.rules.choices import AceMode, BuracoShape, End, GoingOut, MeldKind, WildEnd
from buraco_p2p.rules.ruleset import RuleSet

LOW_ACE: Final = 1
HIGH_ACE: Final = 14
RANK_NAMES: Final = ("JK", "A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K")


class IllegalMeld(ValueError):
    """Cards that do not form a legal meld under the rules in force.

    `code` is a short stable identifier for programs (see `MELD_ERROR_CODES`); the message is
    the human reason.
    """

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason

    def __reduce__(self) -> tuple[type[IllegalMeld], tuple[str, str]]:
        # The default rebuilds an exception from `args` (the reason alone); copy, deepcopy and
        # pickle of a cached verdict, or of a state holding one, need both arguments back.
        return type(self), (self.code, self.reason)


MELD_ERROR_CODES: Final = (
    "not_a_card",  # an element is not a Card
    "not_in_deck",  # a joker under a preset whose deck has none
    "too_short",  # fewer than 3 cards
    "too_long",  # more cards than positions A..A, or no room left for the wild
    "too_many_wilds",  # more wildcards than the preset allows (one)
    "no_natural",  # a set without a natural card
    "mixed_suits",  # a run with naturals of two suits
    "mixed_ranks",  # a set with naturals of two ranks
    "duplicate_rank",  # a run with the same rank twice (other than A..A)
    "ace_twice",  # two aces in a run when the preset lets aces be only low or only high
    "not_consecutive",  # a run with more gaps than wilds
    "sets_not_allowed",  # a set under a preset without sets
    "set_rank_not_allowed",  # a set of a rank the preset does not allow
    "repeated_suit",  # a set with two naturals of one suit where suits must differ
    "wild_must_take_high_end",  # Italian: a wild at an end stands at the high end
    "wild_end_unavailable",  # the asked-for end is past an ace
    "nothing_added",  # extend_meld with no cards
    "meld_changed",  # extending would move a card already on the table
    "duplicate_set",  # a second set of one rank for a team
)


@dataclass(frozen=True, slots=True)
class Meld:
    """A legal meld as it lies on the table.

    `faces` is the laid-out order: a run from its low end to its high end, a set's naturals
    by suit then its wild. `start` is the run position (1..14) of `faces[0]` (0 for a set).
    `wild_index` is where the wild lies in `faces` (None for a clean meld). `bonus` is the
    buraco bonus this meld earns as it lies, under the rules it was checked with.
    """

    kind: MeldKind
    faces: tuple[Card, ...]
    suit: Suit | None
    rank: int | None
    start: int
    wild_index: int | None
    clean: bool
    card_points: int
    bonus: int
    is_buraco: bool

    @property
    def size(self) -> int:
        return len(self.faces)

    @property
    def end(self) -> int:
        """Run position of the last card (0 for a set)."""
        return self.start + len(self.faces) - 1 if self.kind is MeldKind.RUN else 0

    @property
    def wild(self) -> Card | None:
        return None if self.wild_index is None else self.faces[self.wild_index]

    @property
    def wild_rank(self) -> int | None:
        """The rank the wild stands for (1 for an ace at either end of a run)."""
        if self.wild_index is None:
            return None
        if self.kind is MeldKind.SET:
            return self.rank
        return _rank_of(self.start + self.wild_index)

    @property
    def wild_stands_for(self) -> Card | None:
        """The face the wild replaces in a run; for a set, a face of the set's rank (spades)."""
        rank = self.wild_rank
        if rank is None:
            return None
        suit = self.suit if self.suit is not None else Suit.S
        return FACES[int(suit) * 13 + rank - 1]

    def describe(self) -> str:
        """`3S 4S JK=5S`: the faces in order, the wild followed by what it stands for."""
        parts = []
        for i, face in enumerate(self.faces):
            if i == self.wild_index:
                stands = (
                    RANK_NAMES[self.rank or 0]
                    if self.kind is MeldKind.SET
                    else str(self.wild_stands_for)
                )
                parts.append(f"{face}={stands}")
            else:
                parts.append(str(face))
        return " ".join(parts)

    def __str__(self) -> str:
        return self.describe()


def _rank_of(position: int) -> int:
    return ACE if position == HIGH_ACE else position


def _check_faces(faces: Iterable[Card], rules: RuleSet) -> tuple[Card, ...]:
    out = tuple(faces)
    if len(out) > HIGH_ACE:  # before looking at each element of a long untrusted list
        raise IllegalMeld("too_long", f"a meld has at most 14 cards, not {len(out)}")
    for face in out:
        if not isinstance(face, Card):
            raise IllegalMeld("not_a_card", f"not a card: {face!r}")
        if face.rank == JOKER_RANK and not rules.jokers:
            raise IllegalMeld(
                "not_in_deck", f"the {rules.name} rules play {rules.deck_size} cards, no jokers"
            )
    return out


def _end(wild_end: End | str | None) -> End | None:
    if wild_end is None or isinstance(wild_end, End):
        return wild_end
    try:
        return End(wild_end)
    except ValueError:
        raise IllegalMeld(
            "wild_end_unavailable", f"a wildcard stands at the low or high end, not {wild_end!r}"
        ) from None


def _finish(
    rules: RuleSet,
    kind: MeldKind,
    laid: tuple[Card, ...],
    suit: Suit | None,
    rank: int | None,
    start: int,
    wild_index: int | None,
) -> Meld:
    points_table = rules.face_points
    points = sum(points_table[c.code] for c in laid)
    clean = wild_index is None
    bonus = rules.buraco_bonus(kind, len(laid), clean)
    is_buraco = len(laid) >= rules.buraco_length and (
        kind is MeldKind.RUN or rules.buraco_shape is BuracoShape.RUN_OR_SET
    )
    return Meld(kind, laid, suit, rank, start, wild_index, clean, points, bonus, is_buraco)


def evaluate_meld(
    faces: Iterable[Card], rules: RuleSet, *, wild_end: End | str | None = None
) -> Meld:
    """Check that faces form a legal new meld and lay them out.

    `wild_end` lets a player put a run's wild at the low end where the preset allows the
    choice; by default it goes to the high end when there is room.
    """
    cards = _check_faces(faces, rules)
    wild_end = _end(wild_end)
    n = len(cards)
    if n < 3:
        raise IllegalMeld("too_short", f"a meld needs at least 3 cards, not {n}")
    if n > HIGH_ACE:
        raise IllegalMeld("too_long", f"a meld has at most 14 cards, not {n}")
    naturals = [c for c in cards if c.rank != JOKER_RANK and c.rank != DEUCE]
    if len(naturals) >= 2 and all(c.rank == naturals[0].rank for c in naturals):
        return _evaluate_set(cards, naturals, rules)
    return _evaluate_run(cards, naturals, rules, wild_end, None, None, True)


def _evaluate_set(cards: tuple[Card, ...], naturals: list[Card], rules: RuleSet) -> Meld:
    if not naturals:
        raise IllegalMeld("no_natural", "a set needs natural cards, not only wildcards")
    rank = naturals[0].rank
    for c in naturals:
        if c.rank != rank:
            raise IllegalMeld("mixed_ranks", f"{c} does not belong in a set of {RANK_NAMES[rank]}")
    if not rules.set_ranks:
        raise IllegalMeld("sets_not_allowed", f"the {rules.name} rules have runs only, no sets")
    if rank not in rules.set_ranks:
        allowed = ", ".join(RANK_NAMES[r] for r in sorted(rules.set_ranks))
        raise IllegalMeld(
            "set_rank_not_allowed",
            f"a set of {RANK_NAMES[rank]} is not allowed (the {rules.name} rules allow sets "
            f"of {allowed})",
        )
    if rules.set_suits_differ and len({c.suit for c in naturals}) != len(naturals):
        raise IllegalMeld(
            "repeated_suit",
            f"the cards of a set must be of different suits ({' '.join(map(str, naturals))})",
        )
    wilds = [c for c in cards if c.rank == JOKER_RANK or c.rank == DEUCE]
    if len(wilds) > rules.max_wilds:
        raise IllegalMeld(
            "too_many_wilds",
            f"a meld may hold {_at_most(rules)}, this one has "
            f"{len(wilds)} ({' '.join(map(str, wilds))})",
        )
    laid = tuple(sorted(naturals, key=lambda c: c.code)) + tuple(wilds)
    wild_index = len(naturals) if wilds else None
    return _finish(rules, MeldKind.SET, laid, None, rank, 0, wild_index)


def _evaluate_run(
    cards: tuple[Card, ...],
    naturals: list[Card],
    rules: RuleSet,
    wild_end: End | None,
    keep_wild_at: int | None,
    fixed: dict[int, Card] | None,
    natural_deuce_allowed: bool,
) -> Meld:
    """Lay out a run; `keep_wild_at`/`fixed` carry the table layout when extending a meld."""
    if not naturals:
        raise IllegalMeld(
            "too_many_wilds",
            "deuces and jokers alone make no meld: there are no sets of wildcards, and a run "
            "needs natural cards besides at most one natural deuce and one wildcard",
        )
    suit = naturals[0].suit
    assert suit is not None
    for c in naturals:
        if c.suit is not suit:
            raise IllegalMeld("mixed_suits", f"{c} does not belong in a run of {suit.name}")
    aces = 0
    positions: list[int] = []
    seen = 0
    for c in naturals:
        if c.rank == ACE:
            aces += 1
            continue
        bit = 1 << c.rank
        if seen & bit:
            raise IllegalMeld("duplicate_rank", f"a run cannot hold {c} twice")
        seen |= bit
        positions.append(c.rank)
    if aces > 2:
        raise IllegalMeld("duplicate_rank", f"a run holds at most two aces, not {aces}")
    ace_options: Sequence[tuple[int, ...]]
    if aces == 2:
        if rules.ace is not AceMode.LOW_OR_HIGH:
            raise IllegalMeld(
                "ace_twice", f"aces are {rules.ace.value.replace('_', ' ')}: only one per run"
            )
        ace_options = [(LOW_ACE, HIGH_ACE)]
    elif aces == 1:
        ace_options = _ONE_ACE[rules.ace]
    else:
        ace_options = [()]
    natural_deuce = FACES[int(suit) * 13 + 1]
    deuces_of_suit = sum(1 for c in cards if c is natural_deuce or c == natural_deuce)
    deuce_options = [True, False] if deuces_of_suit and natural_deuce_allowed else [False]
    n = len(cards)
    errors: list[IllegalMeld] = []
    for use_deuce in deuce_options:
        wild_count = n - len(naturals) - (1 if use_deuce else 0)
        if wild_count > rules.max_wilds:
            errors.append(_too_many_wilds(cards, rules, wild_count))
            continue
        for ace_pos in ace_options:
            try:
                return _lay_run(
                    cards,
                    rules,
                    suit,
                    positions,
                    ace_pos,
                    use_deuce,
                    wild_count,
                    wild_end,
                    keep_wild_at,
                    fixed,
                    natural_deuce,
                )
            except IllegalMeld as exc:
                errors.append(exc)
    # Report the reading that came closest: a misplaced wild before a wild too many,
    # and that before a gap.
    raise min(errors, key=lambda e: _ERROR_RANK.get(e.code, 0))


_ERROR_RANK: Final = {"too_many_wilds": 1, "not_consecutive": 2}
# Where a run's single ace may stand, low ace tried first.
_ONE_ACE: Final[dict[AceMode, Sequence[tuple[int, ...]]]] = {
    AceMode.LOW_OR_HIGH: ((LOW_ACE,), (HIGH_ACE,)),
    AceMode.LOW_ONLY: ((LOW_ACE,),),
    AceMode.HIGH_ONLY: ((HIGH_ACE,),),
}


def _at_most(rules: RuleSet) -> str:
    return "no wildcard" if rules.max_wilds == 0 else f"at most {rules.max_wilds} wildcard"


def _too_many_wilds(cards: tuple[Card, ...], rules: RuleSet, count: int) -> IllegalMeld:
    return IllegalMeld(
        "too_many_wilds",
        f"a meld may hold {_at_most(rules)}, {' '.join(map(str, cards))} "
        f"needs {count} (a deuce is natural only at the 2 of its own suit's run)",
    )


def _lay_run(
    cards: tuple[Card, ...],
    rules: RuleSet,
    suit: Suit,
    positions: list[int],
    ace_pos: tuple[int, ...],
    use_deuce: bool,
    wild_count: int,
    wild_end: End | None,
    keep_wild_at: int | None,
    fixed: dict[int, Card] | None,
    natural_deuce: Card,
) -> Meld:
    occupied = [*positions, *ace_pos]
    if use_deuce:
        occupied.append(DEUCE)
    occupied.sort()
    lo, hi = occupied[0], occupied[-1]
    gaps = hi - lo + 1 - len(occupied)
    if len(set(occupied)) != len(occupied):  # pragma: no cover - ranks were deduplicated
        raise IllegalMeld("duplicate_rank", "a run cannot hold a rank twice")
    wild_pos: int | None = None
    if gaps > wild_count:
        missing = sorted(set(range(lo, hi + 1)) - set(occupied))
        need = " ".join(str(FACES[int(suit) * 13 + _rank_of(p) - 1]) for p in missing)
        if wild_count == 0:
            more = " (one wildcard can fill one gap)" if gaps == 1 and rules.max_wilds else ""
        else:
            more = f", more than its {wild_count} wildcard can fill"
        raise IllegalMeld(
            "not_consecutive", f"not a run: {' '.join(map(str, cards))} is missing {need}{more}"
        )
    if gaps == 1:
        wild_pos = next(p for p in range(lo, hi + 1) if p not in occupied)
        if wild_end is not None:
            raise IllegalMeld(
                "wild_end_unavailable", "the wildcard fills a gap, it cannot stand at an end"
            )
    elif wild_count == 1:
        wild_pos = _wild_end_position(lo, hi, rules, wild_end, keep_wild_at)
    start = lo if wild_pos is None else min(lo, wild_pos)
    end = hi if wild_pos is None else max(hi, wild_pos)
    layout: list[Card | None] = [None] * (end - start + 1)
    wild_card: Card | None = None
    deuce_left = use_deuce
    for c in cards:
        r = c.rank
        if r in (JOKER_RANK, DEUCE):
            if r == DEUCE and deuce_left and c == natural_deuce:
                layout[DEUCE - start] = c
                deuce_left = False
            else:
                wild_card = c
        elif r == ACE:
            if layout[ace_pos[0] - start] is None:
                layout[ace_pos[0] - start] = c
            else:
                layout[ace_pos[-1] - start] = c
        else:
            layout[r - start] = c
    wild_index = None
    if wild_pos is not None:
        assert wild_card is not None
        wild_index = wild_pos - start
        layout[wild_index] = wild_card
    laid = tuple(c for c in layout if c is not None)
    assert len(laid) == len(cards)
    if fixed is not None:
        for pos, face in fixed.items():
            if not start <= pos <= end or pos == wild_pos or laid[pos - start] != face:
                raise IllegalMeld("meld_changed", f"{face} already on the table would have to move")
    return _finish(rules, MeldKind.RUN, laid, suit, None, start, wild_index)


def _wild_end_position(
    lo: int, hi: int, rules: RuleSet, wild_end: End | None, keep_wild_at: int | None
) -> int:
    can_low, can_high = lo > LOW_ACE, hi < HIGH_ACE
    if not (can_low or can_high):
        raise IllegalMeld("too_long", "no room for the wildcard: the run already spans A to A")
    if rules.wild_end is WildEnd.HIGH:
        if can_high:
            if wild_end is End.LOW:
                raise IllegalMeld(
                    "wild_must_take_high_end",
                    "a wildcard at the end of a run takes the high end (7-8-W is 7-8-9)",
                )
            return hi + 1
        if wild_end is End.HIGH:
            raise IllegalMeld("wild_end_unavailable", "the run already ends in an ace at the top")
        return lo - 1
    if wild_end is End.LOW:
        if not can_low:
            raise IllegalMeld("wild_end_unavailable", "the run already starts with a low ace")
        return lo - 1
    if wild_end is End.HIGH:
        if not can_high:
            raise IllegalMeld("wild_end_unavailable", "the run already ends in an ace at the top")
        return hi + 1
    if keep_wild_at is not None and (
        (keep_wild_at == lo - 1 and can_low) or (keep_wild_at == hi + 1 and can_high)
    ):
        return keep_wild_at
    return hi + 1 if can_high else lo - 1


def extend_meld(
    meld: Meld, added: Iterable[Card], rules: RuleSet, *, wild_end: End | str | None = None
) -> Meld:
    """Add cards from a hand to a meld on the table.

    Cards on the table keep their places; only the wild may move. A natural card may take the
    wild's place, and the wild then goes to an end (the high one unless the player asks
    otherwise or the preset rules it). A wild deuce of the run's suit that can stand at its own
    place (next to a 3 at the low end) goes there and the meld is clean again, where
    `rules.wild_deuce_settles_natural` (every preset) allows it.
    """
    new = _check_faces(added, rules)
    wild_end = _end(wild_end)
    if not new:
        raise IllegalMeld("nothing_added", "no cards to add to the meld")
    union = meld.faces + new
    if len(union) > HIGH_ACE:
        raise IllegalMeld("too_long", f"a meld has at most 14 cards, not {len(union)}")
    naturals = [c for c in union if c.rank != JOKER_RANK and c.rank != DEUCE]
    if meld.kind is MeldKind.SET:
        return _evaluate_set(union, naturals, rules)
    assert meld.suit is not None
    fixed = {meld.start + i: c for i, c in enumerate(meld.faces) if i != meld.wild_index}
    keep = None if meld.wild_index is None else meld.start + meld.wild_index
    natural_deuce = FACES[int(meld.suit) * 13 + 1]
    old_wild = meld.wild
    deuce_ok = (
        rules.wild_deuce_settles_natural
        or old_wild != natural_deuce
        or DEUCE in fixed
        or natural_deuce in new
    )
    for c in naturals:
        if c.suit is not meld.suit:
            raise IllegalMeld("mixed_suits", f"{c} does not belong in a run of {meld.suit.name}")
    return _evaluate_run(union, naturals, rules, wild_end, keep, fixed, deuce_ok)


def check_new_meld(meld: Meld, team_melds: Sequence[Meld], rules: RuleSet) -> None:
    """Rules that depend on the team's table: one set per rank per team where the preset says so."""
    if meld.kind is MeldKind.SET and rules.one_set_per_rank:
        for other in team_melds:
            if other.kind is MeldKind.SET and other.rank == meld.rank:
                raise IllegalMeld(
                    "duplicate_set",
                    f"the team already has a set of {RANK_NAMES[meld.rank or 0]}: "
                    "add the cards to it",
                )


def is_wildcard_face(face: Card) -> bool:
    """A deuce or a joker: what "discarding a wild" means (a deuce in hand has no place yet)."""
    return face.rank == DEUCE or face.rank == JOKER_RANK


def has_going_out_buraco(team_melds: Iterable[Meld], rules: RuleSet) -> bool:
    """Whether the team's table holds the buraco the preset asks for before going out."""
    need_clean = rules.going_out is GoingOut.CLEAN_BURACO
    return any(m.is_buraco and (m.clean or not need_clean) for m in team_melds)
