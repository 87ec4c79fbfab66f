"""One test per rule of the hand, per preset where the presets differ."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from engine_helpers import add, discard, draw, lay, slots_of, table_for

from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    EndReason,
    HandSetup,
    HandState,
    IllegalMove,
    IllegalMoveCode,
    LayDown,
    LocalTable,
    Move,
    Phase,
    PlayerView,
    RevealError,
    TakeDiscard,
    TurnUpFirst,
    deal_layout,
    legal_moves,
    play_order,
    score_hand,
)
from buraco_p2p.engine.hand import POT_IS_STOCK
from buraco_p2p.rules import get_preset

# ---------------------------------------------------------------- deal and turn order


@pytest.mark.parametrize(
    ("preset", "stock", "face_up"),
    [("us", 38, False), ("classic", 41, True), ("playingcards", 42, False),
     ("italian", 41, True), ("fechado", 42, False)],
)
def test_deal_layout_places_every_slot_once(preset: str, stock: int, face_up: bool) -> None:
    layout = deal_layout(get_preset(preset))
    places = [s for h in layout.hands for s in h] + [s for p in layout.pots for s in p]
    places += list(layout.stock) + ([layout.face_up] if layout.face_up is not None else [])
    assert sorted(places) == list(range(layout.deck_size))
    assert [len(h) for h in layout.hands] == [11] * 4
    assert [len(p) for p in layout.pots] == [11, 11]
    assert len(layout.stock) == stock
    assert (layout.face_up is not None) == face_up


def test_deal_is_one_card_at_a_time_in_play_order() -> None:
    layout = deal_layout(get_preset("us"))
    assert layout.hands[0][:3] == (0, 4, 8)
    assert layout.hands[3][:3] == (3, 7, 11)


@pytest.mark.parametrize("preset", ["us", "classic", "fechado"])
def test_clockwise_presets_start_left_of_dealer(preset: str) -> None:
    t = table_for(preset, dealer=2)
    assert t.referee.turn == 3
    draw(t)
    t.push(Discard(3, t.referee.hands[3][0]))
    assert t.referee.turn == 0


@pytest.mark.parametrize("preset", ["playingcards", "italian"])
def test_counter_clockwise_presets_start_right_of_dealer(preset: str) -> None:
    t = table_for(preset, dealer=2)
    assert t.referee.turn == 1
    assert play_order(2, clockwise=False) == (1, 0, 3, 2)


def test_hands_are_revealed_only_to_their_owner() -> None:
    t = table_for("us")
    for seat, view in enumerate(t.views):
        for other in range(4):
            known = [view.card(s) is not None for s in view.hands[other]]
            assert all(known) if other == seat else not any(known)


# ---------------------------------------------------------------- start of the discard pile


@pytest.mark.parametrize("preset", ["us", "playingcards"])
def test_first_player_may_keep_the_first_card(preset: str) -> None:
    t = table_for(preset, stock="KH 5C")
    seat = draw(t)
    assert t.referee.phase is Phase.FIRST_CHOICE
    kh = slots_of(t.referee, seat, "KH")[0]
    discard(t, seat, "KH")  # kept, then discarded: the turn is over
    assert t.referee.pile == [kh]
    assert t.referee.turn != seat


@pytest.mark.parametrize("preset", ["us", "playingcards"])
def test_first_player_may_turn_the_first_card_up_and_draw_the_next(preset: str) -> None:
    t = table_for(preset, stock="KH 5C")
    seat = draw(t)
    t.push(TurnUpFirst(seat))
    ref = t.referee
    assert [ref.face(s) for s in ref.pile] == [ref.face(ref.layout.stock[0])]
    assert str(ref.face(ref.hands[seat][-1])) == "5C"
    assert ref.phase is Phase.PLAY
    with pytest.raises(IllegalMove) as e:
        t.push(TurnUpFirst(seat))
    assert e.value.code is IllegalMoveCode.NO_FIRST_CARD
    # Every view learned the turned-up card publicly and the new card only privately.
    for view in t.views:
        assert view.card(ref.pile[0]) == ref.known[ref.pile[0]]
        assert (view.card(ref.hands[seat][-1]) is not None) == (view.viewer == seat)


def test_turning_up_is_only_for_the_first_draw_of_the_hand() -> None:
    t = table_for("us")
    seat = draw(t)
    t.push(Discard(seat, t.referee.hands[seat][0]))
    nxt = draw(t)
    assert t.referee.phase is Phase.PLAY
    with pytest.raises(IllegalMove) as e:
        t.push(TurnUpFirst(nxt))
    assert e.value.code is IllegalMoveCode.NO_FIRST_CARD


@pytest.mark.parametrize("preset", ["classic", "italian"])
def test_one_card_is_face_up_at_the_deal(preset: str) -> None:
    t = table_for(preset, face_up="9D")
    ref = t.referee
    assert len(ref.pile) == 1 and str(ref.face(ref.pile[0])) == "9D"
    for view in t.views:
        assert str(view.face(ref.pile[0])) == "9D"
    seat = ref.turn
    t.push(TakeDiscard(seat))
    assert ref.pile == [] and str(ref.face(ref.hands[seat][-1])) == "9D"


def test_face_up_card_must_be_revealed_before_any_move() -> None:
    rules = get_preset("classic")
    view = PlayerView(HandSetup(rules, 0), 1)
    with pytest.raises(IllegalMove) as e:
        view.push(DrawStock(1))
    assert e.value.code is IllegalMoveCode.UNKNOWN_CARD


def test_fechado_has_no_pile_at_the_start() -> None:
    t = table_for("fechado")
    seat = t.referee.turn
    with pytest.raises(IllegalMove) as e:
        t.push(TakeDiscard(seat))
    assert e.value.code is IllegalMoveCode.EMPTY_PILE
    draw(t)
    assert t.referee.phase is Phase.PLAY
    assert TurnUpFirst(seat) not in legal_moves(t.views[seat])


# ---------------------------------------------------------------- initial meld minimum


def test_us_initial_meld_minimum_is_50_and_a_turn_under_it_adds_15() -> None:
    # 3S 4S 5S = 15 points: under 50.
    t = table_for("us", hands={1: "3S 4S 5S KH KD KC QH QD QC 9S 9H"})
    seat = draw(t)
    assert seat == 1 and t.referee.initial_minimum(1) == 50
    before = list(t.referee.hands[1])
    lay(t, 1, "3S 4S 5S")
    ref = t.referee
    assert ref.hands[1] == before  # the cards stay in the hand
    assert not ref.opened[1] and ref.melds[1] == []
    assert ref.opening_slots() == set(slots_of(ref, 1, "3S 4S 5S"))
    # The attempt showed the cards to everyone.
    for view in t.views:
        assert all(view.card(s) is not None for s in slots_of(ref, 1, "3S 4S 5S"))
    assert len({v.state_hash() for v in (ref, *t.views)}) == 1
    # The turn ends under the minimum: a failed attempt, and 65 is needed from now on.
    assert ref.failed[1] == 0
    discard(t, 1, "9H")
    assert ref.failed[1] == 1 and ref.initial_minimum(1) == 65 and not ref.opening
    assert ref.initial_minimum(0) == 50


def test_us_initial_meld_counts_the_melds_of_the_whole_turn() -> None:
    # 000:149-150: "The sum of the values of the cards played in the player's turn".
    t = table_for("us", hands={1: "3S 4S 5S KH KD KC QH QD QC 9S 9H"})
    draw(t)
    ref = t.referee
    lay(t, 1, "3S 4S 5S")  # 15
    lay(t, 1, "KH KD KC")  # 45 so far
    assert not ref.opened[1] and len(ref.opening) == 2
    with pytest.raises(IllegalMove) as e:  # an opening slot cannot be laid down twice
        t.push(LayDown(1, (slots_of(ref, 1, "3S 4S 5S"),)))
    assert e.value.code is IllegalMoveCode.DUPLICATE_SLOT
    lay(t, 1, "QH QD QC")  # 75 >= 50: the three melds go down together
    assert ref.opened[1] and not ref.opening and ref.failed[1] == 0
    assert str(ref.melds[1][0].meld).startswith("3S")
    assert len(ref.melds[1]) == 3 and len(ref.hands[1]) == 3
    assert len({v.state_hash() for v in (ref, *t.views)}) == 1


def test_an_opening_in_progress_keeps_one_set_per_rank() -> None:
    t = table_for("us", hands={1: "KH KD KC KS KH 2C 9S 9H 4C"})
    draw(t)
    ref = t.referee
    lay(t, 1, "KH KD KC")
    second = slots_of(ref, 1, "KS KH 2C", exclude=tuple(ref.opening_slots()))
    with pytest.raises(IllegalMove) as e:
        t.push(LayDown(1, (second,)))
    assert e.value.code is IllegalMoveCode.DUPLICATE_SET


def test_playingcards_opening_needs_one_meld_of_75() -> None:
    # 002:54: "the first meld they put down must have a card value of at least 75 points".
    hand = "8S 9S TS JS QS KS 8H 9H TH JH QH"
    t = table_for("playingcards", scores=(1500, 1500), hands={3: hand})
    ref = t.referee
    seat = draw(t)
    assert seat == 3
    assert ref.initial_minimum(seat & 1) == 75
    # Two runs of 60 and 50 points: 110 together, but neither reaches 75 alone.
    lay(t, seat, "8S 9S TS JS QS KS", "8H 9H TH JH QH")
    assert not ref.opened[seat & 1] and ref.melds[seat & 1] == [] and not ref.opening
    assert all(
        not (isinstance(m, LayDown) and len(m.melds) > 1) for m in legal_moves(t.views[seat])
    )


def test_us_initial_meld_counts_every_meld_laid_down_at_once() -> None:
    t = table_for("us", hands={1: "KH KD KC AS AH AD 3C 4C 5C 9S 9H"})
    draw(t)
    lay(t, 1, "KH KD KC", "AS AH AD")  # 30 + 45 = 75 >= 50
    assert t.referee.opened[1] and len(t.referee.melds[1]) == 2
    lay(t, 1, "3C 4C 5C")  # once open, no minimum
    assert len(t.referee.melds[1]) == 3


@pytest.mark.parametrize("preset", ["us", "classic"])
def test_initial_meld_minimum_is_75_from_1500(preset: str) -> None:
    t = table_for(preset, scores=(1500, 1495), face_up="9D" if preset == "classic" else None)
    assert t.referee.initial_minimum(0) == 75
    assert t.referee.initial_minimum(1) == 50


def test_playingcards_minimum_75_once_team_reaches_half_the_target() -> None:
    t = table_for("playingcards", scores=(1500, 1499))
    assert t.referee.initial_minimum(0) == 75
    assert t.referee.initial_minimum(1) == 0


@pytest.mark.parametrize("preset", ["italian", "fechado"])
def test_no_initial_minimum(preset: str) -> None:
    fu = "9D" if preset == "italian" else None
    t = table_for(preset, scores=(1900, 1900), face_up=fu, dealer=0,
                  hands={3 if preset == "italian" else 1: "3S 4S 5S 9H 9C"})
    seat = draw(t)
    lay(t, seat, "3S 4S 5S")
    assert t.referee.opened[seat & 1]


# ---------------------------------------------------------------- taking the discard pile


def test_taking_the_pile_takes_the_whole_pile() -> None:
    t = table_for("us")
    for _ in range(3):
        seat = draw(t)
        t.push(Discard(seat, t.referee.hands[seat][0]))
    pile = list(t.referee.pile)
    assert len(pile) == 3
    seat = t.referee.turn
    t.push(TakeDiscard(seat))
    assert t.referee.pile == [] and t.referee.hands[seat][-3:] == pile
    with pytest.raises(IllegalMove) as e:
        t.push(DrawStock(seat))
    assert e.value.code is IllegalMoveCode.WRONG_PHASE


def test_italian_may_not_discard_the_only_card_just_taken() -> None:
    t = table_for("italian", face_up="9D")
    seat = t.referee.turn
    t.push(TakeDiscard(seat))
    with pytest.raises(IllegalMove) as e:
        discard(t, seat, "9D")
    assert e.value.code is IllegalMoveCode.DISCARD_TAKEN_CARD
    assert Discard(seat, t.referee.pile[-1] if t.referee.pile else -1) not in legal_moves(
        t.views[seat]
    )
    t.push(Discard(seat, t.referee.hands[seat][0]))


def test_classic_may_discard_the_only_card_just_taken() -> None:
    t = table_for("classic", face_up="9D")
    seat = t.referee.turn
    t.push(TakeDiscard(seat))
    discard(t, seat, "9D")
    assert t.referee.turn != seat


def _fechado_pile_topped_with(top: str, hand1: str) -> LocalTable:
    """Fechado: player 1 then three discards; player 0 discards `top` for player 1."""
    rules = get_preset("fechado").with_overrides({"hand_size": 6})
    t = table_for(rules, hands={1: hand1, 0: top}, stock="5H 9C 6D JC")
    draw(t)
    t.push(Discard(1, t.referee.hands[1][-1]))
    for seat in (2, 3):
        draw(t)
        t.push(Discard(seat, t.referee.hands[seat][-1]))
    draw(t)
    discard(t, 0, top)
    return t


def test_fechado_must_meld_the_top_card_of_the_pile_that_turn() -> None:
    t = _fechado_pile_topped_with("5S", "3S 4S 7H 8H 9H KC")
    t.push(TakeDiscard(1, slots_of(t.referee, 1, "3S 4S")))
    ref = t.referee
    top = ref.hands[1][-1]
    assert str(ref.face(top)) == "5S" and ref.must_meld == top
    with pytest.raises(IllegalMove) as e:
        t.push(Discard(1, slots_of(ref, 1, "KC")[0]))
    assert e.value.code is IllegalMoveCode.MUST_MELD_TOP
    with pytest.raises(IllegalMove) as e:
        lay(t, 1, "7H 8H 9H")
    assert e.value.code is IllegalMoveCode.MUST_MELD_TOP
    assert all(
        top in (s for m in mv.melds for s in m) if isinstance(mv, LayDown) else True
        for mv in legal_moves(t.views[1])
    )
    lay(t, 1, "3S 4S 5S")
    assert ref.must_meld == -1
    lay(t, 1, "7H 8H 9H")
    discard(t, 1, "KC")


def test_fechado_pile_is_offered_only_when_its_top_card_can_be_melded() -> None:
    t = _fechado_pile_topped_with("QD", "3S 4S 7H 8H 9H KC")
    assert not any(isinstance(m, TakeDiscard) for m in legal_moves(t.views[1]))
    t = _fechado_pile_topped_with("5S", "3S 4S 7H 8H 9H KC")
    just = tuple(sorted(slots_of(t.referee, 1, "3S 4S")))
    assert [m for m in legal_moves(t.views[1]) if isinstance(m, TakeDiscard)] == [
        TakeDiscard(1, just)
    ]


# ---------------------------------------------------------------- melds and additions


def test_us_sets_only_of_J_Q_K_A() -> None:
    t = table_for("us", hands={1: "5S 5H 5D KS KH KD AS AH AC 9C 9D"})
    draw(t)
    with pytest.raises(IllegalMove) as e:
        lay(t, 1, "5S 5H 5D", "KS KH KD", "AS AH AC")
    assert e.value.code is IllegalMoveCode.ILLEGAL_MELD
    lay(t, 1, "KS KH KD", "AS AH AC")


def test_italian_sets_of_any_rank_with_duplicate_suits() -> None:
    t = table_for("italian", face_up="9D", hands={3: "5S 5S 5D 9C"})
    seat = draw(t)
    assert seat == 3
    lay(t, 3, "5S 5S 5D")
    assert t.referee.melds[1][0].meld.kind.value == "set"


def test_playingcards_has_no_sets() -> None:
    t = table_for("playingcards", hands={3: "KS KH KD 9C"})
    draw(t)
    with pytest.raises(IllegalMove) as e:
        lay(t, 3, "KS KH KD")
    assert e.value.code is IllegalMoveCode.ILLEGAL_MELD


def test_one_set_per_rank_per_team() -> None:
    t = table_for("italian", face_up="9D", hands={3: "5S 5H 5D 5C 5C 5H 9C", 2: "5D 5S JK"})
    draw(t)
    with pytest.raises(IllegalMove) as e:
        lay(t, 3, "5S 5H 5D", "5C 5C 5H")
    assert e.value.code is IllegalMoveCode.DUPLICATE_SET
    lay(t, 3, "5S 5H 5D")
    with pytest.raises(IllegalMove) as e:
        lay(t, 3, "5C 5C 5H")
    assert e.value.code is IllegalMoveCode.DUPLICATE_SET
    add(t, 3, 0, "5C 5C")
    discard(t, 3, "9C")
    # The other team may have its own set of fives.
    draw(t)
    lay(t, 2, "5D 5S JK")
    assert len(t.referee.melds[0]) == 1


def test_adding_to_a_team_meld_and_not_to_the_opponents() -> None:
    t = table_for("us", hands={1: "KS KH KD AS AH AD 9C", 2: "KC 3H"})
    draw(t)
    lay(t, 1, "KS KH KD", "AS AH AD")
    discard(t, 1, "9C")
    draw(t)
    with pytest.raises(IllegalMove) as e:
        add(t, 2, 0, "KC")  # team 0 has no melds: index 0 names nothing of theirs
    assert e.value.code is IllegalMoveCode.NO_SUCH_MELD


def test_add_to_run_and_the_meld_becomes_dirty() -> None:
    t = table_for("us", hands={1: "5S 6S 7S 8S 9S TS JS 2H 4S 3S QH"})
    draw(t)
    lay(t, 1, "5S 6S 7S 8S 9S TS JS")  # 7 cards: clean buraco, 55 points
    m = t.referee.melds[1][0].meld
    assert m.clean and m.bonus == 200
    add(t, 1, 0, "2H")
    m = t.referee.melds[1][0].meld
    assert not m.clean and m.bonus == 100
    add(t, 1, 0, "4S 3S")
    assert t.referee.melds[1][0].meld.size == 10


def test_meld_with_cards_not_in_hand_is_rejected() -> None:
    t = table_for("us", hands={1: "KS KH KD", 2: "KC"})
    draw(t)
    ks, kh = slots_of(t.referee, 1, "KS KH")
    kc = slots_of(t.referee, 2, "KC")[0]
    with pytest.raises(IllegalMove) as e:
        t.push(LayDown(1, ((ks, kh, kc),)))
    assert e.value.code is IllegalMoveCode.NOT_HELD


# ---------------------------------------------------------------- pots and going out


def test_emptying_the_hand_by_melding_takes_the_pot_in_flight() -> None:
    rules = get_preset("italian").with_overrides({"hand_size": 3})
    t = table_for(rules, face_up="9D", hands={3: "5S 6S 7S"}, stock="8S")
    seat = draw(t)
    ref = t.referee
    pot = ref.layout.pots[0]
    lay(t, seat, "5S 6S 7S 8S")
    assert ref.team_pot[1] == 0 and ref.hands[3] == list(pot)
    assert ref.phase is Phase.PLAY and ref.turn == 3  # keeps playing with the pot
    assert all(t.views[3].card(s) is not None for s in pot)
    assert all(t.views[0].card(s) is None for s in pot)
    t.push(Discard(3, pot[0]))
    assert ref.turn != 3


def test_emptying_the_hand_by_discarding_takes_the_pot_and_ends_the_turn() -> None:
    rules = get_preset("italian").with_overrides({"hand_size": 4})
    t = table_for(rules, face_up="9D", hands={3: "5S 6S 7S KC"}, stock="8S")
    draw(t)
    lay(t, 3, "5S 6S 7S 8S")
    ref = t.referee
    pot = list(ref.layout.pots[0])
    seen_before = len(t.reveals)
    discard(t, 3, "KC")
    assert ref.team_pot[1] == 0 and ref.hands[3] == pot
    assert ref.turn == 2 and ref.phase is Phase.DRAW
    assert [(r.slot, r.seat) for r in t.reveals[seen_before:]] == [(s, 3) for s in pot]


def test_second_team_to_empty_takes_the_second_pot() -> None:
    rules = get_preset("italian").with_overrides({"hand_size": 3})
    t = table_for(rules, face_up="9D", hands={3: "5S 6S 7S", 2: "5H 6H 7H"}, stock="8S 8H")
    lay_after_draw = [(3, "5S 6S 7S 8S"), (2, "5H 6H 7H 8H")]
    seat = draw(t)
    lay(t, seat, lay_after_draw[0][1])
    t.push(Discard(3, t.referee.hands[3][0]))
    seat = draw(t)
    assert seat == 2
    lay(t, 2, lay_after_draw[1][1])
    ref = t.referee
    assert ref.team_pot == [1, 0] and ref.hands[2][:11] == list(ref.layout.pots[1])


@pytest.mark.parametrize(("preset", "may_go_out"), [("fechado", False), ("italian", True)])
def test_going_out_needs_a_clean_buraco_or_any_buraco(preset: str, may_go_out: bool) -> None:
    rules = get_preset(preset).with_overrides({"hand_size": 4})
    t = table_for(
        rules,
        face_up="9D" if preset == "italian" else None,
        hands={1: "3S 4S 5S 6S", 3: "3S 4S 5S 6S"},
        stock="7S",
        pots=("8S 9S TS JS QS KS 2H 4H 5H 6H 7H", ""),
    )
    seat = draw(t)
    lay(t, seat, "3S 4S 5S 6S 7S")  # empties the hand: takes the pot in flight
    ref = t.referee
    assert ref.team_pot[seat & 1] == 0
    add(t, seat, 0, "8S 9S TS JS QS KS")  # 3S..KS: a clean buraco
    add(t, seat, 0, "2H")  # now a dirty one
    assert not ref.melds[seat & 1][0].meld.clean
    if may_go_out:
        lay(t, seat, "4H 5H 6H")
        discard(t, seat, "7H")
        assert ref.ended and ref.went_out == seat
        return
    for melds in (("4H 5H 6H",), ("4H 5H 6H 7H",)):
        with pytest.raises(IllegalMove) as e:
            lay(t, seat, *melds)  # leaves one card that may not be discarded / empties
        assert e.value.code is IllegalMoveCode.CANNOT_EMPTY_HAND
    assert not ref.ended and len(ref.hands[seat]) == 4


def test_emptying_the_hand_before_the_pot_takes_it_instead_of_going_out() -> None:
    rules = get_preset("fechado").with_overrides({"hand_size": 7})
    t = table_for(rules, hands={1: "3S 4S 5S 6S 7S 8S KC"}, stock="9S")
    draw(t)
    lay(t, 1, "3S 4S 5S 6S 7S 8S 9S")  # a clean buraco, but no pot yet
    ref = t.referee
    discard(t, 1, "KC")
    assert not ref.ended and ref.team_pot[1] == 0
    assert ref.hands[1] == list(ref.layout.pots[0]) and ref.turn == 2


def _fechado_ready_to_go_out(last: str) -> LocalTable:
    rules = get_preset("fechado").with_overrides({"hand_size": 3})
    t = table_for(
        rules,
        hands={1: "3S 4S 5S"},
        stock="6S",
        pots=("7S 8S 9S TS " + last + " KD KH KC 5D 5H 5C", ""),
    )
    draw(t)
    lay(t, 1, "3S 4S 5S 6S")  # takes the pot in flight
    add(t, 1, 0, "7S 8S 9S")  # 3S..9S: clean buraco
    lay(t, 1, "KD KH KC", "5D 5H 5C")  # sets of different suits (004:48)
    add(t, 1, 0, "TS")
    return t


def test_going_out_with_a_clean_buraco_ends_the_hand_with_100() -> None:
    t = _fechado_ready_to_go_out("QC")
    discard(t, 1, "QC")
    ref = t.referee
    assert ref.ended and ref.end_reason is EndReason.WENT_OUT and ref.went_out == 1
    result = t.result()
    assert result.line(1, "going_out") == 100 and result.line(0, "going_out") == 0
    assert result.line(1, "buracos") == 200
    assert result.line(0, "pot_not_taken") == -100 and result.line(1, "pot_not_taken") == 0


def test_going_out_by_melding_the_last_card() -> None:
    t = _fechado_ready_to_go_out("JS")
    add(t, 1, 0, "JS")
    assert t.referee.ended and t.referee.went_out == 1


def _italian_with_pot(pot: str) -> LocalTable:
    rules = get_preset("italian").with_overrides({"hand_size": 3})
    t = table_for(rules, face_up="9D", hands={3: "3S 4S 5S"}, stock="6S", pots=(pot, ""))
    draw(t)
    lay(t, 3, "3S 4S 5S 6S")  # takes the pot in flight
    return t


def test_italian_goes_out_with_a_dirty_buraco() -> None:
    t = _italian_with_pot("7S 8S JK 9H 9H 9D 4C 4C 4D 4H QD")
    add(t, 3, 0, "7S 8S JK")  # 3S..8S and a joker: a dirty buraco
    lay(t, 3, "9H 9H 9D")
    lay(t, 3, "4C 4C 4D 4H")
    discard(t, 3, "QD")
    assert t.referee.ended and t.referee.went_out == 3


@pytest.mark.parametrize("discard_only", [True, False])
def test_italian_goes_out_only_by_discarding_the_last_card(discard_only: bool) -> None:
    rules = get_preset("italian").with_overrides(
        {"hand_size": 3, "go_out_by_discard_only": discard_only}
    )
    t = table_for(
        rules, face_up="9D", hands={3: "3S 4S 5S"}, stock="6S",
        pots=("7S 8S JK 9H 9H 9D 4C 4C 4D 4H 4S", ""),
    )
    draw(t)
    lay(t, 3, "3S 4S 5S 6S")  # emptying the hand by a meld still takes the pot in flight
    ref = t.referee
    assert ref.team_pot[1] == 0 and ref.turn == 3 and not ref.ended
    add(t, 3, 0, "7S 8S JK")  # a dirty buraco: the team may go out
    lay(t, 3, "9H 9H 9D")
    fours = slots_of(ref, 3, "4C 4C 4D 4H 4S")
    everything = LayDown(3, (fours,))
    melded = [
        set(m.slots) if isinstance(m, AddToMeld) else {s for x in m.melds for s in x}
        for m in legal_moves(t.views[3])
        if isinstance(m, LayDown | AddToMeld)
    ]
    if not discard_only:
        assert set(fours) in melded
        t.push(everything)
        assert ref.ended and ref.went_out == 3
        return
    assert melded and all(len(m) < 5 for m in melded)
    with pytest.raises(IllegalMove) as e:
        t.push(everything)
    assert e.value.code is IllegalMoveCode.GO_OUT_BY_DISCARD_ONLY
    assert len(ref.hands[3]) == 5 and not ref.ended
    lay(t, 3, "4C 4C 4D 4H")
    with pytest.raises(IllegalMove) as e:
        add(t, 3, 2, "4S")  # adding the last card to go out is refused too
    assert e.value.code is IllegalMoveCode.GO_OUT_BY_DISCARD_ONLY
    assert legal_moves(t.views[3]) == [Discard(3, slots_of(ref, 3, "4S")[0])]
    discard(t, 3, "4S")
    assert ref.ended and ref.went_out == 3 and ref.end_reason is EndReason.WENT_OUT


@pytest.mark.parametrize(("preset", "allowed"), [("italian", False), ("fechado", True)])
def test_going_out_by_discarding_a_wild(preset: str, allowed: bool) -> None:
    rules = get_preset(preset).with_overrides({"hand_size": 3})
    t = table_for(
        rules,
        face_up="9D" if preset == "italian" else None,
        hands={1: "3S 4S 5S", 3: "3S 4S 5S"},
        stock="6S",
        pots=("7S 8S 9S JH JC JD TC TD TH TS 2D", ""),
    )
    seat = draw(t)
    lay(t, seat, "3S 4S 5S 6S")
    add(t, seat, 0, "7S 8S 9S")  # a clean buraco
    lay(t, seat, "JH JC JD")
    fours = LayDown(seat, (slots_of(t.referee, seat, "TC TD TH TS"),))
    if not allowed:
        # Keeping only the deuce is never offered: it could not be discarded to go out ...
        assert fours not in legal_moves(t.views[seat])
        assert "wild" in (t.referee.last_card_problem(
            seat, slots_of(t.referee, seat, "2D")[0], [tm.meld for tm in t.referee.melds[1]]
        ) or "")
        # ... and the move shows the card it would leave, so every view refuses it.
        assert slots_of(t.referee, seat, "2D")[0] in t.referee.exposed_by(fours)
        with pytest.raises(IllegalMove) as e:
            t.push(fours)
        assert e.value.code is IllegalMoveCode.CANNOT_EMPTY_HAND
        # The wild may be melded instead, keeping a natural to discard (italian closes a hand
        # only by a discard, so melding all five is refused).
        with pytest.raises(IllegalMove) as e:
            lay(t, seat, "TC TD TH TS 2D")
        assert e.value.code is IllegalMoveCode.GO_OUT_BY_DISCARD_ONLY
        lay(t, seat, "TC TD TH 2D")
        discard(t, seat, "TS")
    else:
        lay(t, seat, "TC TD TH TS")
        discard(t, seat, "2D")
    assert t.referee.ended and t.referee.went_out == seat


# ---------------------------------------------------------------- stock running out


def _ended(t: LocalTable) -> Callable[[], bool]:
    return lambda: t.referee.ended


def _draw_and_discard_until(t: LocalTable, stop: Callable[[], bool]) -> None:
    ref = t.referee
    while not stop():
        seat = ref.turn
        t.push(DrawStock(seat))
        if not ref.ended:
            t.push(Discard(seat, ref.hands[seat][-1]))


@pytest.mark.parametrize("preset", ["us", "classic", "playingcards", "fechado"])
def test_stock_out_the_next_untaken_pot_becomes_the_stock(preset: str) -> None:
    t = table_for(preset, face_up="9D" if preset == "classic" else None)
    ref = t.referee
    first = len(ref.stock)
    _draw_and_discard_until(t, lambda: ref.pot_owner[0] != -1)
    assert ref.pot_owner == [POT_IS_STOCK, -1] and len(ref.stock) == 11 and not ref.ended
    assert sorted(ref.stock) == sorted(ref.layout.pots[0])
    _draw_and_discard_until(t, lambda: ref.ended)
    assert ref.end_reason is EndReason.STOCK_EXHAUSTED
    assert len(ref.moves) == 2 * (first + 22)
    result = t.result()
    assert result.line(0, "pot_not_taken") == -100 and result.line(1, "pot_not_taken") == -100
    assert result.line(0, "going_out") == 0 and result.line(1, "going_out") == 0


def test_italian_stock_out_ends_the_hand_after_that_turn() -> None:
    t = table_for("italian", face_up="9D")
    ref = t.referee
    n = len(ref.stock)
    _draw_and_discard_until(t, lambda: ref.ended)
    assert ref.pot_owner == [-1, -1] and ref.end_reason is EndReason.STOCK_EXHAUSTED
    assert len(ref.moves) == 2 * n


def test_last_turn_player_still_melds_before_the_hand_ends() -> None:
    t = table_for("italian", face_up="9D")
    ref = t.referee
    _draw_and_discard_until(t, lambda: len(ref.stock) == 1)
    seat = ref.turn
    t.push(DrawStock(seat))
    assert ref.last_turn and not ref.ended and ref.phase is Phase.PLAY
    t.push(Discard(seat, ref.hands[seat][0]))
    assert ref.ended


# ---------------------------------------------------------------- scoring


@pytest.mark.parametrize(("preset", "bonus"), [("us", 100), ("classic", 100), ("italian", 0)])
def test_cut_of_22_gives_100_to_the_cutters_team(preset: str, bonus: int) -> None:
    fu = "9D" if preset in ("classic", "italian") else None
    for cut, expect in ((22, bonus), (21, 0)):
        t = table_for(preset, dealer=0, cut=cut, face_up=fu)
        _draw_and_discard_until(t, _ended(t))
        r = t.result()
        # The cutter is the dealer's right-hand opponent: seat 3, team 1.
        assert r.line(1, "cut_22") == expect and r.line(0, "cut_22") == 0


def test_cards_left_in_hand_count_against_the_team() -> None:
    t = table_for("italian", face_up="9D")
    _draw_and_discard_until(t, lambda: t.referee.ended)
    ref = t.referee
    r = t.result()
    pts = ref.rules.face_points
    for team in (0, 1):
        left = sum(pts[_face(ref, s)] for seat in (team, team + 2) for s in ref.hands[seat])
        assert r.line(team, "hand_penalty") == -left


@pytest.mark.parametrize(
    ("preset", "penalty", "counted"),
    [("us", -100, False), ("italian", 0, True), ("fechado", -100, True)],
)
def test_pot_taken_but_unplayed(preset: str, penalty: int, counted: bool) -> None:
    rules = get_preset(preset).with_overrides({"hand_size": 4})
    t = table_for(
        rules,
        face_up="9D" if preset == "italian" else None,
        hands={1: "AS AH AD KC", 3: "AS AH AD KC"},
        stock="AC",
    )
    ref = t.referee
    seat = draw(t)
    lay(t, seat, "AS AH AD AC")  # 60 points: opens under every preset
    discard(t, seat, "KC")  # empties the hand: the pot is taken, play passes
    team = seat & 1
    assert ref.team_pot[team] == 0 and ref.pot_unplayed(team)
    _draw_and_discard_until(t, lambda: ref.ended)  # the pot's cards stay unplayed
    r = t.result()
    assert r.line(team, "pot_unplayed") == penalty
    assert r.line(team, "pot_not_taken") == 0 and r.line(1 - team, "pot_not_taken") == -100
    pts = ref.rules.face_points
    pot = set(ref.layout.pots[0])
    left = [s for x in (team, team + 2) for s in ref.hands[x] if counted or s not in pot]
    assert r.line(team, "hand_penalty") == -sum(pts[_face(ref, s)] for s in left)


def _face(view: HandState, slot: int) -> int:
    face = view.face(slot)
    assert face is not None
    return face.code


def test_score_lines_of_a_finished_hand_add_up() -> None:
    t = _fechado_ready_to_go_out("QC")
    discard(t, 1, "QC")
    r = t.result()
    for team in (0, 1):
        assert r.totals[team] == sum(x.points for x in r.lines[team])
    ref = t.referee
    assert r.line(1, "melds") == sum(tm.meld.card_points for tm in ref.melds[1])


def test_score_needs_the_end_of_hand_reveals_on_a_player_view() -> None:
    t = _fechado_ready_to_go_out("QC")
    discard(t, 1, "QC")
    # LocalTable delivered the public end-of-hand reveals: every view scores alike.
    assert {score_hand(v).totals for v in t.views} == {t.result().totals}
    # A view that replays the moves but never gets the end-of-hand reveals cannot score.
    ref = t.referee
    fresh = PlayerView(ref.setup, 0)
    for r in ref.deal_reveals():
        if r.seat in (None, 0):
            fresh.reveal(r.slot, ref.known[r.slot], public=r.seat is None)
    for m in ref.moves:
        for s in ref_exposed(t, m):
            fresh.reveal(s, ref.known[s], public=True)
        fresh.push(m)
    assert fresh.ended and fresh.state_hash() != ref.state_hash()
    with pytest.raises(RevealError):
        score_hand(fresh)


def ref_exposed(t: LocalTable, move: Move) -> tuple[int, ...]:
    if isinstance(move, LayDown):
        return tuple(s for m in move.melds for s in m)
    if isinstance(move, AddToMeld):
        return move.slots
    if isinstance(move, Discard):
        return (move.slot,)
    return ()


@pytest.mark.parametrize("preset", ["us", "classic"])
def test_us_and_classic_need_a_clean_buraco_to_empty_a_hand_after_the_pot(preset: str) -> None:
    rules = get_preset(preset).with_overrides({"hand_size": 4})
    t = table_for(
        rules,
        face_up="9D" if preset == "classic" else None,
        hands={1: "AS AH AD AC"},
        stock="AH",
        pots=("3S 4S 5S 6S 7S 8S 2H JH JH JC 4D", ""),
    )
    draw(t)
    lay(t, 1, "AS AH AD AC AH")  # 75 points: opens, empties the hand, takes the pot
    ref = t.referee
    assert ref.team_pot[1] == 0 and ref.turn == 1
    lay(t, 1, "3S 4S 5S 6S 7S 8S 2H")  # a dirty buraco only
    with pytest.raises(IllegalMove) as e:
        lay(t, 1, "JH JH JC")  # would leave 4D, which could not be discarded
    assert e.value.code is IllegalMoveCode.CANNOT_EMPTY_HAND
    with pytest.raises(IllegalMove) as e:
        add(t, 1, 0, "JH")  # not a run card anyway
    discard(t, 1, "4D")
    assert not ref.ended and len(ref.hands[1]) == 3


def test_no_pot_left_for_a_team_means_it_may_not_empty_a_hand() -> None:
    rules = get_preset("fechado").with_overrides({"hand_size": 3})
    t = table_for(rules, hands={1: "7H 8H 9H", 2: "5S 5H 5D"})
    ref = t.referee
    draw(t)
    lay(t, 1, "7H 8H 9H")
    t.push(Discard(1, ref.hands[1][0]))  # empties the hand: team 1 takes the first pot
    assert ref.pot_owner == [1, -1]
    _draw_and_discard_until(t, lambda: ref.pot_owner[1] == POT_IS_STOCK and ref.turn == 2)
    assert not ref.ended and ref.team_pot[0] == -1  # the second pot became the stock
    draw(t)
    with pytest.raises(IllegalMove) as e:
        lay(t, 2, "5S 5H 5D")  # would leave one card that could not be discarded
    assert e.value.code is IllegalMoveCode.CANNOT_EMPTY_HAND
    assert "no pot" in e.value.message
    assert all(len(ref.hands[2]) - sum(len(x) for x in m.melds) >= 2
               for m in legal_moves(t.views[2]) if isinstance(m, LayDown))


@pytest.mark.parametrize(("preset", "bonus"), [("playingcards", 500), ("fechado", 500)])
def test_clean_13_card_run_earns_its_special_bonus(preset: str, bonus: int) -> None:
    rules = get_preset(preset).with_overrides({"hand_size": 13})
    seat = 1 if preset == "fechado" else 3
    t = table_for(rules, hands={seat: "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS"}, stock="9H")
    draw(t)
    lay(t, seat, "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    ref = t.referee
    assert ref.melds[seat & 1][0].meld.clean and ref.melds[seat & 1][0].meld.size == 13
    discard(t, seat, "9H")  # empties the hand: takes the pot
    _draw_and_discard_until(t, lambda: ref.ended)
    assert t.result().line(seat & 1, "buracos") == bonus


def test_an_empty_hand_may_not_take_a_lone_card_it_could_not_discard() -> None:
    # Italian, changed so that a hand may run empty without going out: the player with no
    # cards would hold only the pile's one card, which they may not discard that turn. (A hand
    # may run empty only where a wild may be discarded to go out.)
    rules = get_preset("italian").with_overrides(
        {
            "hand_size": 3,
            "pots": 0,
            "empty_hand_needs_going_out": False,
            "discard_wild_to_go_out": True,
        }
    )
    t = table_for(rules, face_up="9D", hands={3: "3S 4S 5S"}, stock="6S")
    ref = t.referee
    assert draw(t) == 3
    lay(t, 3, "3S 4S 5S 6S")  # the hand runs empty, the turn passes
    assert ref.hands[3] == [] and ref.turn == 2
    for seat in (2, 1):
        draw(t)
        t.push(Discard(seat, ref.hands[seat][0]))
    t.push(TakeDiscard(0))
    t.push(Discard(0, ref.hands[0][0]))
    assert len(ref.pile) == 1 and ref.turn == 3
    with pytest.raises(IllegalMove) as e:
        t.push(TakeDiscard(3))
    assert e.value.code is IllegalMoveCode.DISCARD_TAKEN_CARD
    assert legal_moves(t.views[3]) == [DrawStock(3)]
