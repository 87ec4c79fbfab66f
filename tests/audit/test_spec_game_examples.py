"""game.json's rules and engine examples, read as a second implementation reads them: from the
file, checked against the rules layer and the engine, with the facts docs/rules.md and
docs/protocol.md (3.4, 4.9) state about them asserted on their own."""

from __future__ import annotations

import json
from typing import Any

import pytest

from buraco_p2p.cards import id_text
from buraco_p2p.engine.errors import IllegalMove
from buraco_p2p.engine.layout import deal_layout
from buraco_p2p.engine.local import LocalTable
from buraco_p2p.engine.moves import AddToMeld, DrawStock, LayDown, move_from_wire
from buraco_p2p.engine.values import HandSetup
from buraco_p2p.rules import PRESETS, IllegalMeld, evaluate_meld, extend_meld, parse_cards
from buraco_p2p.rules.scoring import score_team_hand
from protocol.gen.files import VECTOR_DIR

GAME = json.loads((VECTOR_DIR / "game.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", GAME["meld_extensions"], ids=lambda c: c["name"])
def test_meld_extensions(case: dict[str, Any]) -> None:
    rules = PRESETS[case["preset"]]
    meld = evaluate_meld(parse_cards(" ".join(case["meld"]["faces"])), rules)
    assert str(meld) == case["meld"]["text"]
    added = parse_cards(" ".join(case["added"]))
    end = case["wild_end"]
    if "refused" in case:
        with pytest.raises(IllegalMeld) as caught:
            extend_meld(meld, added, rules, wild_end=end)
        assert caught.value.code == case["refused"]
        return
    grown = extend_meld(meld, added, rules, wild_end=end)
    want = case["result"]
    assert [str(c) for c in grown.faces] == want["faces"] and grown.start == want["start"]
    assert (-1 if grown.wild_index is None else grown.wild_index) == want["wild_index"]


@pytest.mark.parametrize("case", GAME["meld_extensions"], ids=lambda c: c["name"])
def test_meld_extensions_as_moves(case: dict[str, Any]) -> None:
    """The same extension as an `AddToMeld` move of 3.4 with the case's `end`, at two seats:
    seat 1 (first to play) lays the meld down with a run of hearts, then adds the cards."""
    rules = PRESETS[case["preset"]].with_overrides({"players": 2})
    faces = [*case["meld"]["faces"], *case["added"], "3H", "4H", "5H", "6H", "7H", "KD", "QD"]
    hand = deal_layout(rules).hands[0]  # the first player's, seat 1's with dealer 0
    ids: list[int] = []
    for face in faces[: len(hand)]:
        ids.append(next(i for i in range(rules.deck_size) if id_text(i) == face and i not in ids))
    fixed = dict(zip(hand, ids, strict=False))
    rest = iter(c for c in range(rules.deck_size) if c not in ids)
    perm = [fixed[s] if s in fixed else next(rest) for s in range(rules.deck_size)]
    table = LocalTable(HandSetup(rules, 0, (0, 0), 37, 0), perm)
    n, k = len(case["meld"]["faces"]), len(case["added"])
    table.push(DrawStock(1))
    table.push(LayDown(1, (hand[:n], hand[n + k : n + k + 5])))
    assert str(table.referee.melds[1][0].meld) == case["meld"]["text"]
    add = AddToMeld(1, 0, hand[n : n + k], case["end"])
    assert move_from_wire(add.to_wire(), players=2, deck_size=rules.deck_size) == add
    if "refused" in case:
        with pytest.raises(IllegalMove) as caught:
            table.push(add)
        assert caught.value.code.value == "illegal_meld"
        return
    table.push(add)
    assert str(table.referee.melds[1][0].meld) == case["result"]["text"]


def test_the_low_end_asked_for_a_displaced_wild() -> None:
    """docs/rules.md, "Adding to a meld": a natural taking the wild's place sends the wild to
    the low end if the player asks and the preset's `wild_end` is `either`; `high` refuses it."""
    cases = {
        (c["preset"], c["added"][0]): c
        for c in GAME["meld_extensions"]
        if c["wild_end"] == "low" and c["meld"]["text"] == "8C 9C 2S=TC JC"
    }
    assert PRESETS["classic"].wild_end.value == "either"
    assert cases["classic", "TC"]["result"]["text"] == "2S=7C 8C 9C TC JC"
    assert PRESETS["italian"].wild_end.value == "high"
    assert cases["italian", "TC"]["refused"] == "wild_must_take_high_end"
    assert cases["classic", "QC"]["refused"] == "wild_end_unavailable"


def test_the_wild_moves_into_the_gap_an_added_card_opens() -> None:
    case = next(c for c in GAME["meld_extensions"] if "opens a gap" in c["name"])
    assert case["meld"]["text"] == "8C 9C TC 2S=JC"
    assert case["result"]["text"] == "6C 2S=7C 8C 9C TC"


@pytest.mark.parametrize("case", GAME["scoring"], ids=lambda c: c["name"])
def test_scoring_lines(case: dict[str, Any]) -> None:
    rules = PRESETS[case["preset"]]
    pot = case["unplayed_pot"]
    lines = score_team_hand(
        rules,
        melds=[evaluate_meld(parse_cards(m), rules) for m in case["melds"]],
        cards_in_hands=parse_cards(" ".join(case["cards_in_hands"])),
        took_pot=True,
        went_out=False,
        unplayed_pot=None if pot is None else parse_cards(" ".join(pot)),
    )
    assert [[x.name, x.points] for x in lines] == case["lines"]


def test_an_unplayed_pot_as_docs_rules_md_defines_it() -> None:
    by_mode = {c["pot_unplayed"]: dict(c["lines"]) for c in GAME["scoring"] if c["unplayed_pot"]}
    hand_only = -20  # KD QD
    assert by_mode["penalty"]["hand_penalty"] == hand_only
    assert by_mode["penalty"]["pot_unplayed"] == -100
    assert by_mode["count"]["hand_penalty"] < hand_only and by_mode["count"]["pot_unplayed"] == 0
    both = by_mode["penalty_and_count"]
    assert both["hand_penalty"] < hand_only and both["pot_unplayed"] == -100


def test_every_preset_records_the_cut() -> None:
    setups = {c["preset"]: c for c in GAME["setups"]}
    assert set(setups) == set(PRESETS)
    assert {c["cut_22_bonus"] for c in setups.values()} == {0, 100}
    for name, case in setups.items():
        assert case["setup"] == [1, [120, -35], 37, 2], name
        rules = PRESETS[name]
        state = LocalTable(HandSetup(rules, 1, (120, -35), 37, 2), list(range(rules.deck_size)))
        assert state.views[0].public_state()[2] == case["setup"]


@pytest.mark.parametrize(
    "case", GAME["shown_slots"], ids=lambda c: str(c["discard_wild_to_go_out"])
)
def test_a_lay_down_shows_the_card_it_leaves_where_a_wild_may_not_go_out(
    case: dict[str, Any],
) -> None:
    rules = PRESETS["italian"].with_overrides(
        {"players": 2, "discard_wild_to_go_out": case["discard_wild_to_go_out"]}
    )
    named = [s for s in case["hand_after_draw"] if s != 45]
    rest = iter(
        c for c in range(rules.deck_size) if c not in {15, 16, 17, 18, 19, 20, 21, 2, 3, 4, 5, 6}
    )
    faces = {int(k): v for k, v in case["cards"].items()}
    ids = {"3H": 15, "4H": 16, "5H": 17, "6H": 18, "7H": 19, "8H": 20, "9H": 21}
    ids |= {"3S": 2, "4S": 3, "5S": 4, "6S": 5, "7S": 6}
    perm = [ids[faces[s]] if s in faces else next(rest) for s in range(rules.deck_size)]
    table = LocalTable(HandSetup(rules, 0, (0, 0), 37, 0), perm)
    draw, lay = (move_from_wire(m, players=2, deck_size=rules.deck_size) for m in case["moves"])
    table.push(draw)
    assert list(table.views[1].hand(1)) == case["hand_after_draw"]
    shown = list(table.referee.exposed_by(lay))
    assert shown == case["shown_by_the_lay_down"]
    if case["discard_wild_to_go_out"]:
        assert shown == named
    else:
        assert shown == [*named, 45]  # the one card left, after the melded ones


@pytest.mark.parametrize("case", GAME["lone_wild"], ids=lambda c: str(c["discard_wild_to_go_out"]))
def test_a_meld_that_would_leave_a_lone_wild_to_go_out_with(case: dict[str, Any]) -> None:
    rules = PRESETS["italian"].with_overrides(
        {"players": 2, "discard_wild_to_go_out": case["discard_wild_to_go_out"]}
    )
    first = {2 * i: c for i, c in enumerate([15, 16, 17, 18, 19, 20, 21, 2, 3, 4, 5])}
    pot_ids = {"3D": 28, "4D": 29, "5D": 30, "6D": 31, "7D": 32, "8D": 33, "9D": 34}
    pot_ids |= {"3C": 41, "4C": 42, "5C": 43, "JK": 104}
    fixed = {**first, 45: 6} | {
        s: pot_ids[f] for s, f in zip(case["pot_slots"], case["pot_cards"], strict=True)
    }
    rest = iter(c for c in range(rules.deck_size) if c not in fixed.values())
    perm = [fixed[s] if s in fixed else next(rest) for s in range(rules.deck_size)]
    table = LocalTable(HandSetup(rules, 0, (0, 0), 37, 0), perm)
    moves = [move_from_wire(m, players=2, deck_size=rules.deck_size) for m in case["moves"]]
    for move in moves[:2]:
        table.push(move)
    melded = [s for s in case["pot_slots"] if perm[s] != 104]
    joker = next(s for s in case["pot_slots"] if perm[s] == 104)
    shown = list(table.referee.exposed_by(moves[2]))
    assert shown == case["shown_by_the_last"]
    if case["discard_wild_to_go_out"]:
        assert shown == melded and case["last"] == "accepted"
        table.push(moves[2])
        assert list(table.views[1].hand(1)) == [joker]
    else:
        assert shown == [*melded, joker] and case["last"] == "cannot_empty_hand"
        with pytest.raises(IllegalMove) as caught:
            table.push(moves[2])
        assert caught.value.code.value == "cannot_empty_hand"


def test_going_out_with_no_pots_ends_the_hand_with_no_pot_line() -> None:
    case = GAME["no_pots"]
    rules = PRESETS[case["preset"]].with_overrides(
        {"players": case["players"], "pots": case["pots"]}
    )
    assert case["pots"] == 0
    layout = case["layout"]
    assert (
        layout["pots"] == [] and layout["face_up"] == 22 and layout["stock_in_draw_order"][0] == 23
    )
    faces = {int(s): f for s, f in case["cards"].items()}
    ids: dict[str, int] = {}
    for face in faces.values():  # the first card id with each face (3.1)
        ids[face] = next(i for i in range(rules.deck_size) if id_text(i) == face)
    fixed = {s: ids[f] for s, f in faces.items()}
    rest = iter(c for c in range(rules.deck_size) if c not in fixed.values())
    perm = [fixed[s] if s in fixed else next(rest) for s in range(rules.deck_size)]
    table = LocalTable(HandSetup(rules, case["dealer"], (0, 0), 37, 0), perm)
    moves = [move_from_wire(m, players=2, deck_size=rules.deck_size) for m in case["moves"]]
    for move in moves:
        assert not table.ended
        table.push(move)
    assert table.ended == case["ended"] is True
    result = table.result()
    assert result.end_reason.value == case["end_reason"] == "went_out"
    assert result.went_out == case["went_out"] == 1
    assert [[[x.name, x.points] for x in side] for side in result.lines] == case["lines"]
    for side in case["lines"]:
        assert dict(side)["pot_not_taken"] == 0 and dict(side)["pot_unplayed"] == 0
    state = table.views[0].public_state()
    assert state[9] == case["pots_state"] == [] and state[20] == case["side_change"] == []
