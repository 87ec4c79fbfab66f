"""Adding cards to a meld on the table."""

import pytest
from rules_helpers import CLASSIC, FE, IT, PC, meld

from buraco_p2p.rules import (
    IllegalMeld,
    Meld,
    RuleSet,
    evaluate_meld,
    extend_meld,
    parse_cards,
)


def extend(m: Meld, text: str, rules: RuleSet = CLASSIC, **kw: object) -> Meld:
    return extend_meld(m, parse_cards(text), rules, **kw)  # type: ignore[arg-type]


def refused(m: Meld, text: str, rules: RuleSet = CLASSIC, **kw: object) -> str:
    with pytest.raises(IllegalMeld) as info:
        extend(m, text, rules, **kw)
    return info.value.code


def test_naturals_extend_either_end_and_stay_clean() -> None:
    m = extend(meld("5S 6S 7S"), "4S 8S 9S")
    assert m.describe() == "4S 5S 6S 7S 8S 9S" and m.clean


def test_a_wild_added_to_a_clean_run_goes_to_the_high_end() -> None:
    m = extend(meld("5S 6S 7S"), "JK")
    assert m.describe() == "5S 6S 7S JK=8S" and not m.clean


def test_a_wild_added_may_go_to_the_low_end_where_the_preset_allows() -> None:
    assert extend(meld("5S 6S 7S"), "JK", wild_end="low").describe() == "JK=4S 5S 6S 7S"


def test_italian_wild_added_takes_the_high_end() -> None:
    assert refused(meld("5S 6S 7S", IT), "JK", IT, wild_end="low") == "wild_must_take_high_end"
    assert extend(meld("5S 6S 7S", IT), "JK", IT).describe() == "5S 6S 7S JK=8S"


def test_a_wild_fills_a_gap_made_by_new_naturals() -> None:
    assert extend(meld("5S 6S 7S"), "9S 2H").describe() == "5S 6S 7S 2H=8S 9S"


def test_a_second_wild_is_refused() -> None:
    assert refused(meld("5S 6S 7S JK"), "2H") == "too_many_wilds"
    assert refused(meld("5S 6S 7S 2H"), "JK") == "too_many_wilds"


def test_natural_replaces_the_wild_which_moves_to_the_high_end() -> None:
    m = extend(meld("5S 6S 7S JK"), "8S")
    assert m.describe() == "5S 6S 7S 8S JK=9S"


def test_natural_replaces_an_inner_wild_which_moves_to_an_end() -> None:
    m = extend(meld("5S JK 7S"), "6S")
    assert m.describe() == "5S 6S 7S JK=8S"
    m = extend(meld("5S JK 7S"), "6S", wild_end="low")
    assert m.describe() == "JK=4S 5S 6S 7S"


def test_italian_replaced_wild_moves_to_the_high_end() -> None:
    # 003:88 "A natural card can replace a wildcard in a run, but the wildcard must then be
    # moved to the end of the run."
    m = extend(meld("7C 8C JK", IT), "9C", IT)
    assert m.describe() == "7C 8C 9C JK=TC"
    assert refused(meld("7C 8C JK", IT), "9C", IT, wild_end="low") == "wild_must_take_high_end"


def test_replaced_wild_moves_low_when_the_run_tops_out_at_an_ace() -> None:
    m = extend(meld("QC KC JK", IT), "AC", IT)
    assert m.describe() == "JK=JC QC KC AC"


def test_a_wild_on_the_low_end_stays_there_when_the_run_grows() -> None:
    low = meld("5S 6S 7S JK", wild_end="low")
    assert extend(low, "8S").describe() == "JK=4S 5S 6S 7S 8S"


def test_a_wild_may_be_moved_on_request() -> None:
    # 000:181 "Wildcards may be moved within a Run."
    low = meld("5S 6S 7S JK", wild_end="low")
    assert extend(low, "8S", wild_end="high").describe() == "5S 6S 7S 8S JK=9S"


def test_no_room_for_a_replaced_wild_in_a_full_run() -> None:
    full = meld("AS 2S 3S JK 5S 6S 7S 8S 9S TS JS QS KS AS")
    assert full.size == 14
    assert refused(full, "4S") == "too_long"


def test_wild_deuce_settles_at_its_own_place_and_the_run_is_clean_again() -> None:
    m = meld("2S 4S 5S 6S", wild_end="low")
    assert m.describe() == "2S=3S 4S 5S 6S" and not m.clean
    again = extend(m, "3S")
    assert again.describe() == "2S 3S 4S 5S 6S" and again.clean


def test_seed_joker_after_moving_the_deuce_to_its_face_value() -> None:
    # 001:86 "a joker can be added to the meld only after moving the deuce to its face value"
    m = meld("2S 4S 5S 6S", wild_end="low")
    # The deuce moves to its face value and the joker takes the 3's place, in one step.
    assert extend(m, "JK").describe() == "2S JK=3S 4S 5S 6S"
    settled = extend(m, "3S")
    assert extend(settled, "JK").describe() == "2S 3S 4S 5S 6S JK=7S"
    # A deuce far from its place cannot move there, so the joker is a second wild.
    assert refused(meld("2S 5S 6S 7S"), "JK") == "too_many_wilds"
    strict = CLASSIC.with_overrides({"wild_deuce_settles_natural": False})
    kept = evaluate_meld(parse_cards("2S 4S 5S 6S"), strict, wild_end="low")
    assert refused(kept, "JK", strict) == "too_many_wilds"


def test_wild_deuce_stays_wild_when_the_rule_is_off() -> None:
    strict = CLASSIC.with_overrides({"wild_deuce_settles_natural": False})
    m = evaluate_meld(parse_cards("2S 4S 5S 6S"), strict, wild_end="low")
    kept = extend_meld(m, parse_cards("3S"), strict)
    assert kept.describe() == "3S 4S 5S 6S 2S=7S" and not kept.clean
    # A second deuce of the suit brought from the hand may still stand at its own place.
    both = extend_meld(kept, parse_cards("2S"), strict)
    assert both.describe() == "2S 3S 4S 5S 6S 2S=7S"


def test_cards_on_the_table_do_not_move_an_ace_stays_on_top() -> None:
    top = meld("QS KS AS")
    grown = extend(top, "2S 3S 4S 5S 6S 7S 8S 9S TS JS")
    assert grown.faces[-1] == parse_cards("AS")[0] and grown.end == 14 and grown.clean
    # From scratch the same cards could also lie with the ace low; on the table it stays high.
    mixed = meld("JK KS AS")
    grown = extend(mixed, "2S 3S 4S 5S 6S 7S 8S 9S TS JS")
    assert grown.describe() == "2S 3S 4S 5S 6S 7S 8S 9S TS JS JK=QS KS AS"
    fresh = meld("JK KS AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS")
    assert fresh.describe() == "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS JK=QS KS"


def test_extending_with_another_suit_is_refused() -> None:
    assert refused(meld("5S 6S 7S"), "8H") == "mixed_suits"


def test_extending_with_nothing_is_refused() -> None:
    assert refused(meld("5S 6S 7S"), "") == "nothing_added"


def test_extending_past_14_cards_is_refused() -> None:
    m = meld("AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    assert refused(m, "AS JK") == "too_long"


def test_extending_with_a_gap_is_refused() -> None:
    assert refused(meld("5S 6S 7S"), "9S") == "not_consecutive"
    assert refused(meld("5S 6S 7S JK"), "TS") == "not_consecutive"


def test_sets_grow_with_naturals_and_one_wild() -> None:
    kings = meld("KS KH KD")
    assert extend(kings, "KC KS").describe() == "KS KS KH KD KC"
    dirty = extend(kings, "2C")
    assert dirty.describe() == "KS KH KD 2C=K"
    assert refused(dirty, "JK") == "too_many_wilds"
    assert refused(kings, "QS") in ("mixed_ranks",)


def test_bonus_follows_the_meld_as_it_lies() -> None:
    six = meld("3D 4D 5D 6D 7D 8D")
    assert six.bonus == 0
    clean = extend(six, "9D")
    assert clean.bonus == 200 and clean.is_buraco
    # 003:115 "a clean Burraco becomes dirty if a wildcard is added later"
    assert extend(clean, "JK").bonus == 100


@pytest.mark.parametrize("rules", [PC, FE], ids=lambda r: r.name)
def test_growing_a_clean_run_to_13_and_14_cards(rules: RuleSet) -> None:
    twelve = meld("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC", rules)
    assert twelve.bonus == 200
    thirteen = extend(twelve, "AC", rules)
    assert thirteen.bonus == 500 and thirteen.start == 1
    assert extend(thirteen, "AC", rules).bonus == 1000


def test_points_follow_the_cards() -> None:
    m = extend(meld("5S 6S 7S"), "8S JK")
    assert m.card_points == 5 + 5 + 5 + 10 + 30
