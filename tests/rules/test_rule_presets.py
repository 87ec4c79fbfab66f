"""Every row of the preset table, preset by preset, as data and as behaviour."""

import pytest
from rules_helpers import ALL, CLASSIC, FE, IT, PC, US

from buraco_p2p.rules import (
    PRESETS,
    Direction,
    DiscardStart,
    GoingOut,
    IllegalMeld,
    Meld,
    MeldKind,
    PotUnplayed,
    RuleError,
    RuleSet,
    StockOut,
    WildEnd,
    card_points,
    check_new_meld,
    evaluate_meld,
    extend_meld,
    get_preset,
    has_going_out_buraco,
    parse_card,
    parse_cards,
)

WITH_JOKERS = [CLASSIC, PC, IT, FE]
WITH_SETS = [US, CLASSIC, IT, FE]


def meld(text: str, rules: RuleSet = US) -> Meld:
    return evaluate_meld(parse_cards(text), rules)


def points(text: str, rules: RuleSet) -> list[int]:
    return [card_points(c, rules) for c in parse_cards(text)]


def test_presets_are_the_five_named_ones() -> None:
    assert list(PRESETS) == ["us", "classic", "playingcards", "italian", "fechado"]
    for name, rules in PRESETS.items():
        assert get_preset(name) is rules
        assert rules.name == name


def test_unknown_preset_lists_the_valid_names() -> None:
    with pytest.raises(RuleError) as info:
        get_preset("canasta")
    for name in PRESETS:
        assert name in str(info.value)
    assert "'canasta'" in str(info.value)


# ----- deck -----


def test_us_deck_is_104_cards_without_jokers() -> None:
    assert (US.deck_size, US.jokers) == (104, 0)
    with pytest.raises(IllegalMeld) as info:
        meld("5S 6S JK", US)
    assert info.value.code == "not_in_deck"


@pytest.mark.parametrize("rules", WITH_JOKERS, ids=lambda r: r.name)
def test_joker_presets_play_108_cards_with_4_jokers(rules: RuleSet) -> None:
    assert (rules.deck_size, rules.jokers) == (108, 4)
    assert not meld("5S 6S JK", rules).clean


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_deal_11_each_two_pots_of_11_rest_is_stock(rules: RuleSet) -> None:
    assert (rules.hand_size, rules.pots, rules.pot_size, rules.players) == (11, 2, 11, 4)
    assert rules.stock_size == (38 if rules.deck_size == 104 else 42)


# ----- which melds -----


@pytest.mark.parametrize("rules", [US, CLASSIC], ids=lambda r: r.name)
def test_us_and_classic_sets_only_of_J_Q_K_A(rules: RuleSet) -> None:
    for rank in "AJQK":
        assert meld(f"{rank}S {rank}H {rank}D", rules).kind == MeldKind.SET
    for rank in "3456789T":
        with pytest.raises(IllegalMeld) as info:
            meld(f"{rank}S {rank}H {rank}D", rules)
        assert info.value.code == "set_rank_not_allowed"
        assert "A, J, Q, K" in str(info.value)


def test_playingcards_runs_only_no_sets() -> None:
    for rank in "A3K":
        with pytest.raises(IllegalMeld) as info:
            meld(f"{rank}S {rank}H {rank}D", PC)
        assert info.value.code == "sets_not_allowed"
    assert meld("3S 4S 5S", PC).kind == MeldKind.RUN


@pytest.mark.parametrize("rules", [IT, FE], ids=lambda r: r.name)
def test_italian_and_fechado_sets_of_any_rank_3_to_K_or_A(rules: RuleSet) -> None:
    for rank in "A3456789TJQK":
        assert meld(f"{rank}S {rank}H {rank}C", rules).kind == MeldKind.SET


@pytest.mark.parametrize("rules", WITH_SETS, ids=lambda r: r.name)
def test_no_preset_has_sets_of_deuces(rules: RuleSet) -> None:
    with pytest.raises(IllegalMeld):
        meld("2S 2H 2D", rules)


@pytest.mark.parametrize("rules", WITH_SETS, ids=lambda r: r.name)
def test_one_set_per_rank_per_team(rules: RuleSet) -> None:
    kings = meld("KS KH KD", rules)
    aces = meld("AS AH AD", rules)
    check_new_meld(aces, [kings], rules)
    with pytest.raises(IllegalMeld) as info:
        check_new_meld(meld("KC KS KH", rules), [aces, kings], rules)
    assert info.value.code == "duplicate_set"
    # Runs are not limited: two runs of one suit are fine.
    run = meld("3S 4S 5S", rules)
    check_new_meld(meld("9S TS JS", rules), [run], rules)


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_at_most_one_wild_per_meld(rules: RuleSet) -> None:
    assert rules.max_wilds == 1
    with pytest.raises(IllegalMeld) as info:
        meld("5H 6H 2C 2D", rules)
    assert info.value.code == "too_many_wilds"


@pytest.mark.parametrize("rules", WITH_JOKERS, ids=lambda r: r.name)
def test_wild_deuce_and_joker_never_in_one_meld(rules: RuleSet) -> None:
    with pytest.raises(IllegalMeld) as info:
        meld("5H 6H 2C JK", rules)
    assert info.value.code == "too_many_wilds"
    # ... but a natural deuce and a joker may be together.
    both = meld("AH 2H JK", rules)
    assert both.wild is not None and both.wild.is_joker
    assert both.faces[1] == parse_card("2H")


@pytest.mark.parametrize("rules", [US, CLASSIC, PC, FE], ids=lambda r: r.name)
def test_wild_may_stand_at_either_end(rules: RuleSet) -> None:
    assert rules.wild_end is WildEnd.EITHER
    high = evaluate_meld(parse_cards("7C 8C 2D"), rules)
    low = evaluate_meld(parse_cards("7C 8C 2D"), rules, wild_end="low")
    assert high.describe() == "7C 8C 2D=9C"
    assert low.describe() == "2D=6C 7C 8C"


def test_italian_wild_takes_high_end() -> None:
    assert IT.wild_end is WildEnd.HIGH
    assert meld("7C 8C JK", IT).describe() == "7C 8C JK=9C"
    with pytest.raises(IllegalMeld) as info:
        evaluate_meld(parse_cards("7C 8C JK"), IT, wild_end="low")
    assert info.value.code == "wild_must_take_high_end"


def test_italian_wild_takes_low_end_when_run_ends_in_top_ace() -> None:
    assert meld("QC KC AC JK", IT).describe() == "JK=JC QC KC AC"


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_ace_low_or_high_never_wraps(rules: RuleSet) -> None:
    assert meld("AD 2D 3D", rules).start == 1
    assert meld("QD KD AD", rules).end == 14
    with pytest.raises(IllegalMeld) as info:
        meld("KD AD 2D 3D", rules)
    assert info.value.code == "not_consecutive"
    with pytest.raises(IllegalMeld):
        meld("KD AD 3D", rules)
    # K-A-2 is legal only with the deuce as a wild, standing for the queen.
    assert meld("KD AD 2D", rules).describe() == "2D=QD KD AD"


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_ace_at_both_ends_only_as_full_14(rules: RuleSet) -> None:
    full = meld("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", rules)
    assert (full.start, full.end, full.size, full.clean) == (1, 14, 14, True)
    with pytest.raises(IllegalMeld):
        meld("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH AH", rules)
    with pytest.raises(IllegalMeld):
        meld("AH 2H 3H QH KH AH", rules)


# ----- points -----


def test_us_points_deuce_20_ace_15_8_to_K_10_3_to_7_5() -> None:
    assert points("2S AS 8S 9S TS JS QS KS 3S 4S 5S 6S 7S", US) == [20, 15] + [10] * 6 + [5] * 5


def test_classic_points_joker_30_deuce_20() -> None:
    assert points("JK 2H AH KH 3H", CLASSIC) == [30, 20, 15, 10, 5]


def test_playingcards_points_joker_20_deuce_10() -> None:
    assert points("JK 2H AH KH 3H", PC) == [20, 10, 15, 10, 5]


def test_italian_points_joker_30_deuce_20() -> None:
    assert points("JK 2H AH 8H 7H", IT) == [30, 20, 15, 10, 5]


def test_fechado_points_joker_50_deuce_10() -> None:
    assert points("JK 2H AH 8H 7H", FE) == [50, 10, 15, 10, 5]


def test_meld_points_count_a_wild_by_its_own_face() -> None:
    # The joker stands for 9C but scores as a joker.
    assert meld("7C 8C JK", CLASSIC).card_points == 5 + 10 + 30
    assert meld("7C 8C JK", FE).card_points == 5 + 10 + 50


# ----- buracos -----

CLEAN7 = "3D 4D 5D 6D 7D 8D 9D"
DIRTY7 = "3D 4D 5D 6D 7D 8D JK"


@pytest.mark.parametrize("rules", WITH_JOKERS, ids=lambda r: r.name)
def test_buraco_bonus_clean_200_dirty_100(rules: RuleSet) -> None:
    assert meld(CLEAN7, rules).bonus == 200
    assert meld(DIRTY7, rules).bonus == 100
    assert meld("3D 4D 5D 6D 7D 8D", rules).bonus == 0
    assert meld("3D 4D 5D 6D 7D 8D 9D TD JD QD KD", rules).bonus == 200


def test_us_buraco_bonus_clean_200_dirty_100() -> None:
    assert meld(CLEAN7, US).bonus == 200
    assert meld("3D 4D 5D 6D 7D 8D 2S", US).bonus == 100


@pytest.mark.parametrize("rules", [US, CLASSIC, IT], ids=lambda r: r.name)
def test_no_special_bonus_for_13_or_14_card_runs(rules: RuleSet) -> None:
    assert meld("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", rules).bonus == 200
    assert meld("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", rules).bonus == 200


@pytest.mark.parametrize("rules", [PC, FE], ids=lambda r: r.name)
def test_clean_13_card_run_500_and_14_card_run_1000(rules: RuleSet) -> None:
    assert meld("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC", rules).bonus == 500
    assert meld("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", rules).bonus == 500
    assert meld("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", rules).bonus == 1000
    # Only clean: with a wild they are plain dirty buracos.
    assert meld("AC JK 3C 4C 5C 6C 7C 8C 9C TC JC QC KC", rules).bonus == 100
    assert meld("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JK QC KC AC", rules).bonus == 100
    assert meld("3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", rules).bonus == 200


@pytest.mark.parametrize(
    "rules", [r for r in WITH_SETS if not r.set_suits_differ], ids=lambda r: r.name
)
def test_a_set_of_seven_is_a_buraco_where_sets_may_be(rules: RuleSet) -> None:
    kings = meld("KS KS KH KH KD KD KC", rules)
    assert kings.is_buraco and kings.bonus == 200
    dirty = meld("KS KS KH KH KD KD 2C", rules)
    assert dirty.is_buraco and dirty.bonus == 100


def test_fechado_sets_are_of_different_suits() -> None:
    # 004:48: a "trinca" is three or more cards of one value "with different suits".
    assert FE.set_suits_differ and not IT.set_suits_differ
    for text in ("5S 5S 5H", "KS KH KD KH", "5S 5H 5S 2C", "AS AS JK"):
        with pytest.raises(IllegalMeld) as info:
            meld(text, FE)
        assert info.value.code == "repeated_suit"
        meld(text, IT)  # the Italian rules let suits repeat (003:69)
    full = meld("5S 5H 5D 5C JK", FE)
    assert full.size == 5 and not full.is_buraco
    with pytest.raises(IllegalMeld) as info:
        extend_meld(meld("5S 5H 5D", FE), parse_cards("5H"), FE)
    assert info.value.code == "repeated_suit"
    assert extend_meld(meld("5S 5H 5D", FE), parse_cards("5C"), FE).size == 4


def test_playingcards_buraco_is_a_run_only() -> None:
    big_set = PC.with_overrides({"set_ranks": "K"})
    kings = meld("KS KS KH KH KD KD KC", big_set)
    assert kings.kind == MeldKind.SET and not kings.is_buraco and kings.bonus == 0
    assert meld(CLEAN7, PC).is_buraco


# ----- initial meld -----


@pytest.mark.parametrize("rules", [US, CLASSIC], ids=lambda r: r.name)
def test_us_initial_meld_50_below_1500_75_from_1500(rules: RuleSet) -> None:
    assert rules.initial_meld_minimum(0) == 50
    assert rules.initial_meld_minimum(1495) == 50
    assert rules.initial_meld_minimum(1500) == 75
    assert rules.initial_meld_minimum(2995) == 75
    assert rules.initial_meld_minimum(-300) == 50


@pytest.mark.parametrize("rules", [US, CLASSIC], ids=lambda r: r.name)
def test_us_initial_meld_plus_15_per_failed_attempt(rules: RuleSet) -> None:
    assert rules.initial_meld_minimum(0, 1) == 65
    assert rules.initial_meld_minimum(0, 2) == 80
    assert rules.initial_meld_minimum(2000, 1) == 90
    with pytest.raises(ValueError):
        rules.initial_meld_minimum(0, -1)


def test_playingcards_initial_meld_75_once_team_at_half_target() -> None:
    assert PC.initial_meld_minimum(0) == 0
    assert PC.initial_meld_minimum(1499) == 0
    assert PC.initial_meld_minimum(1500) == 75
    assert PC.initial_meld_minimum(1500, 3) == 75
    lower_target = PC.with_overrides({"target_score": 2000})
    assert lower_target.initial_meld_minimum(1000) == 75
    assert lower_target.initial_meld_minimum(999) == 0


@pytest.mark.parametrize("rules", [IT, FE], ids=lambda r: r.name)
def test_italian_and_fechado_no_initial_meld_minimum(rules: RuleSet) -> None:
    for score in (0, 1500, 2999):
        assert rules.initial_meld_minimum(score, 2) == 0


# ----- going out -----


@pytest.mark.parametrize("rules", [US, CLASSIC, PC, FE], ids=lambda r: r.name)
def test_going_out_needs_a_clean_buraco(rules: RuleSet) -> None:
    assert rules.going_out is GoingOut.CLEAN_BURACO and rules.going_out_needs_pot
    dirty = meld("3D 4D 5D 6D 7D 8D 2S", rules)
    clean = meld(CLEAN7, rules)
    assert not has_going_out_buraco([dirty, meld("3S 4S 5S", rules)], rules)
    assert has_going_out_buraco([dirty, clean], rules)
    assert not has_going_out_buraco([], rules)


def test_italian_going_out_needs_any_buraco() -> None:
    assert IT.going_out is GoingOut.ANY_BURACO and IT.going_out_needs_pot
    assert has_going_out_buraco([meld(DIRTY7, IT)], IT)
    assert not has_going_out_buraco([meld("3D 4D 5D 6D 7D 8D", IT)], IT)


def test_going_out_by_set_buraco_counts_where_sets_are_buracos() -> None:
    assert has_going_out_buraco([meld("KS KS KH KH KD KD KC", US)], US)


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_going_out_bonus_100(rules: RuleSet) -> None:
    assert rules.going_out_bonus == 100


def test_italian_going_out_by_discarding_a_wild_not_allowed() -> None:
    assert IT.discard_wild_to_go_out is False
    assert all(r.discard_wild_to_go_out for r in (US, CLASSIC, PC, FE))


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_team_with_pot_but_no_allowed_buraco_may_not_empty_hand(rules: RuleSet) -> None:
    assert rules.empty_hand_needs_going_out is True
    assert rules.pot_in_flight is True


# ----- penalties -----


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_team_never_took_its_pot_minus_100(rules: RuleSet) -> None:
    assert rules.no_pot_penalty == 100


def test_pot_taken_but_unplayed_per_preset() -> None:
    assert US.pot_unplayed is CLASSIC.pot_unplayed is PC.pot_unplayed is PotUnplayed.PENALTY
    assert IT.pot_unplayed is PotUnplayed.COUNT
    assert FE.pot_unplayed is PotUnplayed.PENALTY_AND_COUNT
    assert all(r.pot_unplayed_penalty == 100 for r in ALL)


# ----- match, table and turn -----


def test_target_scores() -> None:
    assert [r.target_score for r in ALL] == [3000, 2000, 3000, 2000, 3000]


def test_us_discard_pile_starts_empty_with_first_player_peek() -> None:
    assert US.discard_start is PC.discard_start is DiscardStart.FIRST_PLAYER_PEEK


def test_classic_and_italian_discard_pile_starts_with_one_face_up_card() -> None:
    assert CLASSIC.discard_start is IT.discard_start is DiscardStart.FACE_UP


def test_fechado_discard_pile_starts_empty_first_player_draws() -> None:
    assert FE.discard_start is DiscardStart.NONE


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_discard_pile_is_always_taken_whole(rules: RuleSet) -> None:
    assert rules.discard_take.value == "whole_pile"


def test_italian_may_not_discard_the_only_card_just_taken() -> None:
    assert IT.may_discard_lone_taken_card is False
    assert all(r.may_discard_lone_taken_card for r in (US, CLASSIC, PC, FE))


def test_fechado_top_discard_must_be_melded_that_turn() -> None:
    assert FE.must_meld_top_discard is True
    assert not any(r.must_meld_top_discard for r in (US, CLASSIC, PC, IT))


def test_italian_stock_out_ends_the_hand_others_use_the_pot() -> None:
    assert IT.stock_out is StockOut.HAND_ENDS
    assert all(r.stock_out is StockOut.POT_BECOMES_STOCK for r in (US, CLASSIC, PC, FE))


def test_us_and_classic_cut_of_22_bonus_100_others_none() -> None:
    assert (US.cut_22_bonus, CLASSIC.cut_22_bonus) == (100, 100)
    assert (PC.cut_22_bonus, IT.cut_22_bonus, FE.cut_22_bonus) == (0, 0, 0)


def test_play_direction_per_preset_dealer_always_passes_clockwise() -> None:
    assert [r.play_direction for r in ALL] == [
        Direction.CLOCKWISE,
        Direction.CLOCKWISE,
        Direction.COUNTER_CLOCKWISE,
        Direction.COUNTER_CLOCKWISE,
        Direction.CLOCKWISE,
    ]
    assert all(r.dealer_passes is Direction.CLOCKWISE for r in ALL)


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_face_point_table_matches_card_points(rules: RuleSet) -> None:
    from buraco_p2p.cards import FACES

    assert len(rules.face_points) == 53
    for face in FACES:
        assert rules.face_points[face.code] == card_points(face, rules)


def test_presets_cannot_be_replaced_or_changed() -> None:
    with pytest.raises(TypeError):
        PRESETS["us"] = CLASSIC  # type: ignore[index]
    with pytest.raises(AttributeError):
        US.target_score = 1  # type: ignore[misc]


def test_italian_closes_a_hand_only_by_discarding() -> None:
    assert IT.go_out_by_discard_only is True
    assert not any(r.go_out_by_discard_only for r in (US, CLASSIC, PC, FE))
