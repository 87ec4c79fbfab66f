"""Meld rules checked against an independent brute-force reading, exhaustively and by hypothesis.

The reference tries every window of run positions in every suit and matches cards to it
(a deuce of the suit at position 2 is natural like any other card there); whatever is left
over must be wildcards, one at most. It shares no code with `buraco_p2p.rules.melds`.
"""

from collections import Counter
from collections.abc import Sequence
from itertools import combinations_with_replacement

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.cards import FACES, JOKER, Card, Suit
from buraco_p2p.rules import (
    PRESETS,
    IllegalMeld,
    Meld,
    MeldKind,
    RuleSet,
    WildEnd,
    evaluate_meld,
    extend_meld,
    get_preset,
    parse_cards,
)

ALL = list(PRESETS.values())
WITH_JOKERS = [r for r in ALL if r.jokers]


def face(rank: int, suit: Suit) -> Card:
    return FACES[int(suit) * 13 + rank - 1]


def run_face(position: int, suit: Suit) -> Card:
    return face(1 if position == 14 else position, suit)


def is_wildcard(card: Card) -> bool:
    return card.rank in (0, 2)


def reference(cards: Sequence[Card], rules: RuleSet) -> tuple[bool, bool]:
    """(legal, can be clean) by brute force."""
    n = len(cards)
    if n < 3 or (JOKER in cards and not rules.jokers):
        return False, False
    legal = clean = False
    for suit in Suit:
        for start in range(1, 15 - n + 1):
            left = Counter(cards)
            missing = 0
            for pos in range(start, start + n):
                f = run_face(pos, suit)
                if left[f]:
                    left[f] -= 1
                else:
                    missing += 1
            rest = list(left.elements())
            if missing <= rules.max_wilds and all(is_wildcard(c) for c in rest):
                legal = True
                clean = clean or missing == 0
    naturals = [c for c in cards if not is_wildcard(c)]
    wilds = n - len(naturals)
    if (
        naturals
        and len({c.rank for c in naturals}) == 1
        and naturals[0].rank in rules.set_ranks
        and wilds <= rules.max_wilds
        and (not rules.set_suits_differ or len({c.suit for c in naturals}) == len(naturals))
    ):
        legal = True
        clean = clean or wilds == 0
    return legal, clean


def check_layout(m: Meld, cards: Sequence[Card], rules: RuleSet) -> None:
    """The laid-out meld is exactly the cards, every natural at its own place."""
    assert Counter(m.faces) == Counter(cards)
    assert m.size == len(cards)
    assert m.card_points == sum(rules.face_points[c.code] for c in cards)
    assert m.clean == (m.wild_index is None)
    assert m.bonus == rules.buraco_bonus(m.kind, m.size, m.clean)
    if m.kind is MeldKind.SET:
        assert m.rank in rules.set_ranks
        for i, c in enumerate(m.faces):
            assert (i == m.wild_index) or c.rank == m.rank
        return
    assert m.suit is not None and m.start >= 1 and m.end <= 14
    for i, c in enumerate(m.faces):
        if i != m.wild_index:
            assert c == run_face(m.start + i, m.suit)
    if m.wild_index is not None and rules.wild_end is WildEnd.HIGH:
        at_low_end = m.wild_index == 0 and m.size > 1
        if at_low_end:
            assert m.end == 14, "Italian: a wild at the low end only under a top ace"


POOL = parse_cards("AS 2S 3S 4S 5S QS KS 2H 3H KH JK")


def small_melds() -> list[tuple[Card, ...]]:
    out = []
    for n in (3, 4, 5):
        for combo in combinations_with_replacement(POOL, n):
            if max(Counter(combo).values()) <= 2:
                out.append(combo)
    return out


SMALL = small_melds()


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_every_small_meld_agrees_with_the_brute_force_reading(rules: RuleSet) -> None:
    legal_count = 0
    for cards in SMALL:
        want_legal, want_clean = reference(cards, rules)
        try:
            m = evaluate_meld(cards, rules)
        except IllegalMeld:
            assert not want_legal, cards
            continue
        assert want_legal, cards
        assert m.clean == want_clean, cards
        check_layout(m, cards, rules)
        legal_count += 1
    assert legal_count > 50  # the pool really exercises legal melds


suits = st.sampled_from(list(Suit))


@st.composite
def natural_runs(draw: st.DrawFn) -> list[Card]:
    n = draw(st.integers(3, 14))
    start = draw(st.integers(1, 15 - n))
    suit = draw(suits)
    return [run_face(p, suit) for p in range(start, start + n)]


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
@given(run=natural_runs(), order=st.randoms(use_true_random=False))
def test_any_natural_run_of_one_suit_is_a_clean_run(
    rules: RuleSet, run: list[Card], order: object
) -> None:
    shuffled = list(run)
    order.shuffle(shuffled)  # type: ignore[attr-defined]
    m = evaluate_meld(shuffled, rules)
    assert m.kind is MeldKind.RUN and m.clean and m.size == len(run)
    if len(run) == 13:
        # A..K and 2..A are the same 13 cards: either layout is right.
        assert list(m.faces) in (run, run[-1:] + run[:-1], run[1:] + run[:1])
    else:
        assert list(m.faces) == run
    check_layout(m, run, rules)


def off_wilds(suit: Suit | None) -> list[Card]:
    """Wildcards that can never be natural in a meld of this suit (any deuce for a set)."""
    return [JOKER] + [face(2, s) for s in Suit if s is not suit]


@pytest.mark.parametrize("rules", WITH_JOKERS, ids=lambda r: r.name)
@given(data=st.data())
def test_any_meld_with_two_non_natural_wilds_is_illegal(
    rules: RuleSet, data: st.DataObject
) -> None:
    if data.draw(st.booleans()):
        base = data.draw(natural_runs())
        suit: Suit | None = base[0].suit
    else:
        rank = data.draw(st.sampled_from([1, *range(3, 14)]))
        # Two naturals at least: one natural and two wilds could read as a run (AS JK 2S).
        base = [face(rank, s) for s in data.draw(st.lists(suits, min_size=2, max_size=8))]
        suit = None
    two = data.draw(st.lists(st.sampled_from(off_wilds(suit)), min_size=2, max_size=2))
    cards = data.draw(st.permutations(base + two))
    with pytest.raises(IllegalMeld):
        evaluate_meld(cards, rules)


@st.composite
def near_melds(draw: st.DrawFn) -> list[Card]:
    """Runs with a card swapped for a wild, an extra card, a set: dense in legal and not."""
    kind = draw(st.sampled_from(["run", "run", "set"]))
    if kind == "run":
        cards = draw(natural_runs())
        if draw(st.booleans()) and len(cards) > 3:
            cards.pop(draw(st.integers(0, len(cards) - 1)))
            cards.append(draw(st.sampled_from([JOKER, *(face(2, s) for s in Suit)])))
    else:
        rank = draw(st.sampled_from([1, *range(3, 14)]))
        cards = [face(rank, s) for s in draw(st.lists(suits, min_size=1, max_size=8))]
    extra = draw(st.lists(st.sampled_from(FACES), max_size=2))
    return draw(st.permutations(cards + extra))


@pytest.mark.parametrize("rules", WITH_JOKERS, ids=lambda r: r.name)
@given(cards=near_melds())
def test_random_melds_agree_with_the_brute_force_reading(rules: RuleSet, cards: list[Card]) -> None:
    want_legal, want_clean = reference(cards, rules)
    try:
        m = evaluate_meld(cards, rules)
    except IllegalMeld:
        assert not want_legal
        return
    assert want_legal and m.clean == want_clean
    check_layout(m, cards, rules)


@pytest.mark.parametrize("rules", WITH_JOKERS, ids=lambda r: r.name)
@given(cards=near_melds(), data=st.data())
def test_input_order_never_changes_the_meld(
    rules: RuleSet, cards: list[Card], data: st.DataObject
) -> None:
    try:
        m = evaluate_meld(cards, rules)
    except IllegalMeld as exc:
        with pytest.raises(IllegalMeld) as again:
            evaluate_meld(data.draw(st.permutations(cards)), rules)
        assert again.value.code == exc.code
        return
    assert evaluate_meld(data.draw(st.permutations(cards)), rules) == m


@pytest.mark.parametrize("rules", WITH_JOKERS, ids=lambda r: r.name)
@given(cards=near_melds(), data=st.data())
def test_extend_meld_equals_evaluate_meld_of_the_union_when_legal(
    rules: RuleSet, cards: list[Card], data: st.DataObject
) -> None:
    try:
        table = evaluate_meld(cards, rules)
    except IllegalMeld:
        return
    pool = [JOKER, *(face(2, s) for s in Suit)]
    if table.suit is not None:
        pool += [face(r, table.suit) for r in range(1, 14)]
    else:
        pool += [face(table.rank or 1, s) for s in Suit]
    added = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
    union = [*table.faces, *added]
    try:
        grown = extend_meld(table, added, rules)
    except IllegalMeld as exc:
        if exc.code != "meld_changed":
            # Everything else that stops an extension stops the meld laid fresh.
            with pytest.raises(IllegalMeld):
                evaluate_meld(union, rules)
        return
    fresh = evaluate_meld(union, rules)
    check_layout(grown, union, rules)
    summary = ("kind", "clean", "card_points", "bonus", "size", "is_buraco", "suit", "rank")
    for field in summary:
        assert getattr(grown, field) == getattr(fresh, field), field
    if not any(c.rank == 1 for c in union):
        # Without an ace there is only one place for each natural: the same layout.
        assert grown == fresh
    if table.kind is MeldKind.RUN:
        # Cards already on the table did not move.
        for i, c in enumerate(table.faces):
            if i != table.wild_index:
                assert grown.faces[table.start + i - grown.start] == c


@given(
    run=natural_runs(),
    rules=st.sampled_from(ALL),
)
def test_clean_buraco_bonus_by_length(run: list[Card], rules: RuleSet) -> None:
    m = evaluate_meld(run, rules)
    lengths = dict(rules.clean_run_length_bonus)
    if len(run) < 7:
        assert m.bonus == 0 and not m.is_buraco
    else:
        assert m.is_buraco and m.bonus == lengths.get(len(run), rules.bonus_clean)


def test_reference_sanity() -> None:
    us = get_preset("us")
    assert reference(parse_cards("AS 2S 3S"), us) == (True, True)
    assert reference(parse_cards("AS 2S 2S 4S 5S 6S 7S"), us) == (True, False)
    assert reference(parse_cards("KS AS 2S 3S"), us) == (False, False)
    assert reference(parse_cards("KS KH 2S"), us) == (True, False)


@pytest.mark.parametrize("rules", WITH_JOKERS, ids=lambda r: r.name)
def test_every_small_meld_extended_by_every_pool_card(rules: RuleSet) -> None:
    """Exhaustive: one card added to each legal small meld agrees with the union laid fresh."""
    extended = 0
    for cards in SMALL:
        try:
            table = evaluate_meld(cards, rules)
        except IllegalMeld:
            continue
        for card in POOL:
            union = [*table.faces, card]
            want_legal, want_clean = reference(union, rules)
            try:
                grown = extend_meld(table, [card], rules)
            except IllegalMeld:
                if want_legal:
                    # Only a layout that would move a card on the table may differ.
                    fresh = evaluate_meld(union, rules)
                    assert fresh.kind is MeldKind.RUN and any(c.rank == 1 for c in union)
                continue
            assert want_legal and grown.clean == want_clean, (table, card)
            check_layout(grown, union, rules)
            extended += 1
    assert extended > 100
