"""A team's score lines for a finished hand."""

import pytest
from rules_helpers import ALL, CLASSIC, FE, IT, PC, US

from buraco_p2p.rules import (
    LINE_NAMES,
    Meld,
    RuleSet,
    ScoreLine,
    evaluate_meld,
    parse_cards,
    score_team_hand,
    total,
)


def melds(rules: RuleSet, *texts: str) -> list[Meld]:
    return [evaluate_meld(parse_cards(t), rules) for t in texts]


def lines_by_name(lines: tuple[ScoreLine, ...]) -> dict[str, int]:
    return {line.name: line.points for line in lines}


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_lines_are_always_all_present_in_order(rules: RuleSet) -> None:
    lines = score_team_hand(rules, melds=[], cards_in_hands=[], took_pot=True, went_out=False)
    assert tuple(line.name for line in lines) == LINE_NAMES
    assert total(lines) == 0


def test_us_team_that_went_out() -> None:
    table = melds(US, "3D 4D 5D 6D 7D 8D 9D", "KS KH 2C", "AH 2H 3H")
    lines = score_team_hand(
        US, melds=table, cards_in_hands=parse_cards("QD 4C"), took_pot=True, went_out=True
    )
    got = lines_by_name(lines)
    assert got == {
        "melds": (5 * 5 + 10 * 2) + (10 + 10 + 20) + (15 + 20 + 5),
        "buracos": 200,
        "going_out": 100,
        "hand_penalty": -(10 + 5),
        "pot_not_taken": 0,
        "pot_unplayed": 0,
        "cut_22": 0,
    }
    assert total(lines) == sum(got.values())
    assert lines[1].detail == "1 clean, 0 dirty"


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_team_never_took_its_pot_minus_100(rules: RuleSet) -> None:
    lines = score_team_hand(
        rules, melds=[], cards_in_hands=parse_cards("5S"), took_pot=False, went_out=False
    )
    got = lines_by_name(lines)
    assert got["pot_not_taken"] == -100
    assert got["hand_penalty"] == -5
    assert "never took" in lines[LINE_NAMES.index("pot_not_taken")].detail


@pytest.mark.parametrize("rules", ALL, ids=lambda r: r.name)
def test_cards_left_in_hands_count_minus_their_points(rules: RuleSet) -> None:
    hand = parse_cards("AS 2S KS 3S") + ([parse_cards("JK")[0]] if rules.jokers else [])
    lines = score_team_hand(rules, melds=[], cards_in_hands=hand, took_pot=True, went_out=False)
    expected = 15 + rules.points_deuce + 10 + 5 + (rules.points_joker if rules.jokers else 0)
    assert lines_by_name(lines)["hand_penalty"] == -expected


POT = parse_cards("AS AH KD QD 9C 8C 7H 6H 3S 3S JK")


@pytest.mark.parametrize("rules", [US, CLASSIC, PC], ids=lambda r: r.name)
def test_pot_taken_but_unplayed_minus_100_and_its_cards_not_counted(rules: RuleSet) -> None:
    pot = [c for c in POT if rules.jokers or not c.is_joker]
    got = lines_by_name(
        score_team_hand(
            rules,
            melds=[],
            cards_in_hands=parse_cards("4D"),
            took_pot=True,
            went_out=False,
            unplayed_pot=pot,
        )
    )
    assert got["pot_unplayed"] == -100
    assert got["hand_penalty"] == -5
    assert got["pot_not_taken"] == 0


def test_italian_unplayed_pot_counts_as_cards_in_hand() -> None:
    got = lines_by_name(
        score_team_hand(
            IT,
            melds=[],
            cards_in_hands=parse_cards("4D"),
            took_pot=True,
            went_out=False,
            unplayed_pot=POT,
        )
    )
    pot_points = 15 + 15 + 10 + 10 + 10 + 10 + 5 + 5 + 5 + 5 + 30
    assert got["pot_unplayed"] == 0
    assert got["hand_penalty"] == -(5 + pot_points)


def test_fechado_unplayed_pot_minus_100_and_its_cards_counted() -> None:
    got = lines_by_name(
        score_team_hand(
            FE, melds=[], cards_in_hands=[], took_pot=True, went_out=False, unplayed_pot=POT
        )
    )
    pot_points = 15 + 15 + 10 + 10 + 10 + 10 + 5 + 5 + 5 + 5 + 50
    assert got["pot_unplayed"] == -100
    assert got["hand_penalty"] == -pot_points


def test_unplayed_pot_without_taking_the_pot_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="took_pot"):
        score_team_hand(
            US, melds=[], cards_in_hands=[], took_pot=False, went_out=False, unplayed_pot=[]
        )


@pytest.mark.parametrize("rules", [US, CLASSIC], ids=lambda r: r.name)
def test_us_cut_of_22_adds_100(rules: RuleSet) -> None:
    lines = score_team_hand(
        rules, melds=[], cards_in_hands=[], took_pot=True, went_out=False, cut_22=True
    )
    assert lines_by_name(lines)["cut_22"] == 100
    assert lines[-1].detail == "cut exactly 22 cards"


@pytest.mark.parametrize("rules", [PC, IT, FE], ids=lambda r: r.name)
def test_cut_of_22_earns_nothing_in_other_presets(rules: RuleSet) -> None:
    lines = score_team_hand(
        rules, melds=[], cards_in_hands=[], took_pot=True, went_out=False, cut_22=True
    )
    assert lines_by_name(lines)["cut_22"] == 0


def test_fechado_royal_and_dirty_buracos_in_the_buracos_line() -> None:
    table = melds(
        FE,
        "AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
        "3D 4D 5D 6D 7D 8D JK",
        "3H 4H 5H 6H 7H 8H 9H",
    )
    lines = score_team_hand(FE, melds=table, cards_in_hands=[], took_pot=True, went_out=True)
    got = lines_by_name(lines)
    assert got["buracos"] == 1000 + 100 + 200
    assert got["going_out"] == 100
    assert lines[1].detail == "2 clean, 1 dirty"


def test_stock_out_no_going_out_bonus() -> None:
    table = melds(CLASSIC, "3D 4D 5D 6D 7D 8D 9D")
    got = lines_by_name(
        score_team_hand(CLASSIC, melds=table, cards_in_hands=[], took_pot=True, went_out=False)
    )
    assert got["going_out"] == 0 and got["buracos"] == 200
