"""Meld validation and layout: the seeds' own examples, wildcard rules, and every error code."""

import pytest
from rules_helpers import CLASSIC, FE, IT, PC, US, meld

from buraco_p2p.cards import Card, Suit
from buraco_p2p.rules import (
    MELD_ERROR_CODES,
    End,
    IllegalMeld,
    MeldKind,
    RuleSet,
    evaluate_meld,
    get_preset,
    is_wildcard_face,
    parse_card,
    parse_cards,
)


def suited(seq: str, suit: str) -> str:
    """The seeds write runs as `A-2-3`: give them a suit."""
    return " ".join(rank + suit for rank in seq.split("-"))


def illegal(text: str, rules: RuleSet = CLASSIC) -> IllegalMeld:
    with pytest.raises(IllegalMeld) as info:
        meld(text, rules)
    assert info.value.code in MELD_ERROR_CODES
    return info.value


# ----- the seeds' examples (000:54-55, 000:70-72, 001:74-84) -----


@pytest.mark.parametrize("rules", [US, CLASSIC], ids=lambda r: r.name)
@pytest.mark.parametrize("seq", ["A-2-3-4-5-6-7", "2-3-4-5-6-7-8"])
def test_seed_clean_runs_with_a_natural_deuce(seq: str, rules: RuleSet) -> None:
    m = meld(suited(seq, "H"), rules)
    assert m.kind == "run" and m.clean and m.bonus == 200 and m.wild_index is None


@pytest.mark.parametrize("rules", [US, CLASSIC], ids=lambda r: r.name)
@pytest.mark.parametrize(
    ("seq", "stands_for"),
    [("A-2-3-4-5-6-2", 7), ("2-2-3-4-5-6-7", None), ("A-2-2-4-5-6-7", 3)],
)
def test_seed_dirty_runs_with_two_deuces(seq: str, stands_for: int | None, rules: RuleSet) -> None:
    m = meld(suited(seq, "H"), rules)
    assert m.kind == "run" and not m.clean and m.bonus == 100
    assert m.wild == parse_card("2H")
    assert m.faces.count(parse_card("2H")) == 2
    if stands_for is not None:
        assert m.wild_rank == stands_for


def test_seed_2_2_3_4_5_6_7_as_laid_in_the_seed_wild_at_low_end() -> None:
    m = meld("2H 2H 3H 4H 5H 6H 7H", US, wild_end=End.LOW)
    assert m.describe() == "2H=AH 2H 3H 4H 5H 6H 7H"
    assert meld("2H 2H 3H 4H 5H 6H 7H", US).describe() == "2H 3H 4H 5H 6H 7H 2H=8H"


def test_seed_deuce_between_ace_and_3_is_not_wild() -> None:
    # 004:20 "If the joker has been locate between an ACE and 3 it will not be take as a joker."
    m = meld("AC 2C 3C", FE)
    assert m.clean and m.faces == tuple(parse_cards("AC 2C 3C"))


def test_seed_wild_deuce_blocks_a_joker() -> None:
    # 001:85 "If a deuce is used as a wildcard, then a joker cannot be placed into the same meld"
    assert illegal("4H 5H 2S JK").code == "too_many_wilds"
    assert illegal("5H 6H 2H JK").code == "too_many_wilds"
    # A deuce at its own place leaves room for the joker.
    assert meld("4H 5H 2H JK").describe() == "2H JK=3H 4H 5H"


def test_seed_italian_wild_at_end_counts_as_9_not_6() -> None:
    # 003:75 "7-8-wildcard = wildcard must count as 9, not 6"
    m = meld("7H 8H 2S", IT)
    assert m.wild_rank == 9 and m.start == 7


def test_seed_italian_sets_may_repeat_suits() -> None:
    # 003:69 "3♥ + 3♥ + 3♠"
    m = meld("3H 3H 3S", IT)
    assert m.kind == "set" and m.rank == 3 and m.clean


def test_seed_fechado_royal_and_half_royal() -> None:
    # 004:44 and 004:46, with 10C as written in the seed
    royal = meld("AC,2C,3C,4C,5C,6C,7C,8C,9C,10C,JC,QC,KC,AC", FE)
    half = meld("AC,2C,3C,4C,5C,6C,7C,8C,9C,10C,JC,QC,KC", FE)
    assert (royal.size, royal.bonus, half.size, half.bonus) == (14, 1000, 13, 500)


def test_seed_playingcards_longest_meld_begins_and_ends_with_its_ace() -> None:
    # 002:22 "The maximum meld length is 14 cards, beginning and ending with its own Ace."
    m = meld("AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD", PC)
    assert m.faces[0] == m.faces[-1] == parse_card("AD")
    assert illegal("AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD JK", PC).code == "too_long"


# ----- layout -----


def test_input_order_does_not_matter() -> None:
    assert meld("5S 3S 4S") == meld("3S 4S 5S") == meld("4S 5S 3S")
    assert meld("JK 9C 7C") == meld("7C 9C JK")


def test_run_layout_positions_and_wild() -> None:
    m = meld("9C 7C JK")
    assert m.describe() == "7C JK=8C 9C"
    assert (m.start, m.end, m.size, m.wild_index, m.suit, m.rank) == (7, 9, 3, 1, Suit.C, None)
    assert m.wild_stands_for == Card(8, Suit.C)
    assert str(m) == m.describe()


def test_wild_defaults_to_high_end_and_to_low_when_top_is_an_ace() -> None:
    assert meld("JC QC JK").describe() == "JC QC JK=KC"
    assert meld("QC KC JK").describe() == "QC KC JK=AC"
    assert meld("KC AC JK").describe() == "JK=QC KC AC"


def test_wild_end_choice_unavailable_past_an_ace() -> None:
    with pytest.raises(IllegalMeld) as info:
        meld("KC AC JK", wild_end="high")
    assert info.value.code == "wild_end_unavailable"
    with pytest.raises(IllegalMeld) as info:
        meld("AC 2C JK", wild_end="low")
    assert info.value.code == "wild_end_unavailable"
    assert meld("AC 2C JK").describe() == "AC 2C JK=3C"


def test_wild_end_choice_for_a_gap_filling_wild_is_refused() -> None:
    with pytest.raises(IllegalMeld) as info:
        meld("7C 9C JK", wild_end="low")
    assert info.value.code == "wild_end_unavailable"


def test_wild_end_must_be_low_or_high() -> None:
    with pytest.raises(IllegalMeld, match="'middle'"):
        meld("7C 8C JK", wild_end="middle")


def test_a_deuce_of_the_suit_is_natural_when_it_can_be() -> None:
    m = meld("2S 3S 4S 5S")
    assert m.clean and m.start == 2


def test_a_deuce_of_the_suit_away_from_its_place_is_wild() -> None:
    m = meld("2S 5S 6S 7S")
    assert not m.clean and m.describe() == "5S 6S 7S 2S=8S"
    m = meld("2S 4S 5S 6S")
    assert m.describe() == "4S 5S 6S 2S=7S"
    assert meld("2S 4S 5S 6S", wild_end="low").describe() == "2S=3S 4S 5S 6S"


def test_a_deuce_of_another_suit_is_always_wild() -> None:
    m = meld("AS 2H 3S")
    assert m.describe() == "AS 2H=2S 3S" and not m.clean


def test_natural_deuce_plus_joker_in_one_run() -> None:
    m = meld("AS 2S JK 4S")
    assert m.describe() == "AS 2S JK=3S 4S"


def test_set_layout_naturals_by_suit_then_wild() -> None:
    m = meld("KC JK KS KH KS")
    assert m.describe() == "KS KS KH KC JK=K"
    assert (m.kind, m.rank, m.suit, m.start, m.wild_rank) == (MeldKind.SET, 13, None, 0, 13)
    assert m.wild_stands_for == Card(13, Suit.S)


def test_set_with_wild_deuce() -> None:
    m = meld("QS QH 2D", US)
    assert m.kind == "set" and not m.clean and m.wild == parse_card("2D")


def test_clean_meld_has_no_wild() -> None:
    m = meld("QS QH QD")
    assert m.wild is None and m.wild_rank is None and m.wild_stands_for is None


def test_is_wildcard_face() -> None:
    assert is_wildcard_face(parse_card("2D")) and is_wildcard_face(parse_card("JK"))
    assert not any(is_wildcard_face(c) for c in parse_cards("AS 3S KD"))


# ----- every error code -----


def test_too_short() -> None:
    assert illegal("5S 6S").code == "too_short"
    assert illegal("").code == "too_short"


def test_too_long() -> None:
    assert illegal("AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS 2H").code == "too_long"


def test_too_many_wilds() -> None:
    e = illegal("5S 2H 2D")
    assert e.code == "too_many_wilds" and "at most 1" in str(e)
    assert illegal("JK JK 5S").code == "too_many_wilds"
    assert illegal("2S 2S 2S").code == "too_many_wilds"
    assert illegal("JK JK JK").code == "too_many_wilds"
    assert illegal("KS KH 2D JK").code == "too_many_wilds"


def test_mixed_suits() -> None:
    e = illegal("5S 6S 7H")
    assert e.code == "mixed_suits" and "7H" in str(e)


def test_mixed_ranks_in_a_set_shows_as_not_a_run() -> None:
    assert illegal("KS KH QH").code in ("mixed_suits", "duplicate_rank")
    assert illegal("KS KS QS").code == "duplicate_rank"


def test_duplicate_rank() -> None:
    e = illegal("5S 5S 6S 7S")
    assert e.code == "duplicate_rank" and "5S" in str(e)
    assert illegal("AS AS AS 2S 3S").code == "duplicate_rank"


def test_not_consecutive_names_the_missing_cards() -> None:
    e = illegal("3S 6S 7S")
    assert e.code == "not_consecutive" and "4S 5S" in str(e)


def test_not_consecutive_with_a_wild_already_used() -> None:
    assert illegal("3S 5S 7S JK").code == "not_consecutive"


def test_sets_not_allowed_and_set_rank_not_allowed() -> None:
    assert illegal("KS KH KD", PC).code == "sets_not_allowed"
    assert illegal("7S 7H 7D", US).code == "set_rank_not_allowed"


def test_not_a_card() -> None:
    with pytest.raises(IllegalMeld) as info:
        evaluate_meld(["AS", "2S", "3S"], CLASSIC)  # type: ignore[list-item]
    assert info.value.code == "not_a_card"


def test_not_in_deck() -> None:
    assert illegal("JK 5S 6S", US).code == "not_in_deck"


def test_ace_twice_when_aces_are_one_sided() -> None:
    low_only = CLASSIC.with_overrides({"ace": "low_only"})
    e = illegal("AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", low_only)
    assert e.code == "ace_twice"


def test_ace_low_only_variant() -> None:
    low_only = CLASSIC.with_overrides({"ace": "low_only"})
    assert meld("AS 2S 3S", low_only).start == 1
    assert illegal("QS KS AS", low_only).code == "not_consecutive"


def test_ace_high_only_variant() -> None:
    high_only = CLASSIC.with_overrides({"ace": "high_only"})
    assert meld("QS KS AS", high_only).end == 14
    assert illegal("AS 2S 3S", high_only).code == "not_consecutive"


def test_no_wilds_variant() -> None:
    pure = CLASSIC.with_overrides({"max_wilds": 0})
    assert meld("AS 2S 3S", pure).clean
    assert illegal("AS 3S JK", pure).code in ("too_many_wilds", "not_consecutive")


def test_illegal_meld_is_a_value_error_with_reason_and_code() -> None:
    e = illegal("3S 6S 7S")
    assert isinstance(e, ValueError) and e.reason == str(e)


def test_every_error_code_is_documented_once() -> None:
    assert len(set(MELD_ERROR_CODES)) == len(MELD_ERROR_CODES)


def test_a_huge_untrusted_list_is_refused_by_length_first() -> None:
    with pytest.raises(IllegalMeld) as info:
        evaluate_meld([None] * 100_000, CLASSIC)  # type: ignore[list-item]
    assert info.value.code == "too_long"


@pytest.mark.parametrize("preset", ["italian", "fechado", "classic"])
@pytest.mark.parametrize("text", ["2C 2D 2H", "2S 2S JK", "2H JK 2D 2C"])
def test_wildcards_alone_are_no_meld_in_any_preset(preset: str, text: str) -> None:
    with pytest.raises(IllegalMeld, match="no sets of wildcards") as info:
        evaluate_meld(parse_cards(text), get_preset(preset))
    assert info.value.code == "too_many_wilds"
