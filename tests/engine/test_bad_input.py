"""Bad moves, bad wire forms and bad reveals: a clear, typed error and no change at all."""

from __future__ import annotations

import random

import msgpack
import pytest
from engine_helpers import draw, lay, slots_of, snapshot, table_for
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandState,
    IllegalMove,
    IllegalMoveCode,
    LayDown,
    LocalTable,
    Move,
    RevealError,
    TakeDiscard,
    TurnUpFirst,
    legal_moves,
    move_from_wire,
)


def _assert_rejected(t: LocalTable, move: Move, code: IllegalMoveCode) -> None:
    """The move is refused with `code` on every view, and no view changes.

    As a session would, the cards the move shows are first revealed publicly (only those the
    mover holds: nobody can reveal another player's card).
    """
    views: list[HandState] = [t.referee, *t.views]
    ref = t.referee
    for s in ref.exposed_by(move):
        if 0 <= s < ref.n and ref.where[s] == move.seat:
            for v in views:
                v.reveal(s, ref.known[s], public=True)
    before = [(v.state_hash(), snapshot(v)) for v in views]
    for v in views:
        with pytest.raises(IllegalMove) as e:
            v.push(move)
        assert e.value.code is code, e.value
        assert e.value.seat == move.seat
        assert e.value.message
    assert [(v.state_hash(), snapshot(v)) for v in views] == before


def test_move_by_the_wrong_player() -> None:
    t = table_for("us")
    seat = t.referee.turn
    other = (seat + 1) % 4
    _assert_rejected(t, DrawStock(other), IllegalMoveCode.WRONG_PLAYER)
    draw(t)
    _assert_rejected(t, Discard(other, t.referee.hands[other][0]), IllegalMoveCode.WRONG_PLAYER)


def test_discard_of_a_slot_the_player_does_not_hold() -> None:
    t = table_for("us")
    seat = draw(t)
    other = (seat + 1) % 4
    _assert_rejected(t, Discard(seat, t.referee.hands[other][0]), IllegalMoveCode.NOT_HELD)
    _assert_rejected(t, Discard(seat, t.referee.stock[-1]), IllegalMoveCode.NOT_HELD)
    _assert_rejected(t, Discard(seat, 106), IllegalMoveCode.NOT_HELD)  # no such slot in 104


def test_meld_with_cards_of_another_hand_is_rejected_everywhere() -> None:
    t = table_for("us", hands={1: "KS KH 9C", 2: "KD"})
    draw(t)
    ks, kh = slots_of(t.referee, 1, "KS KH")
    kd = slots_of(t.referee, 2, "KD")[0]
    _assert_rejected(t, LayDown(1, ((ks, kh, kd),)), IllegalMoveCode.NOT_HELD)


def test_moves_in_the_wrong_phase() -> None:
    t = table_for("us")
    seat = t.referee.turn
    _assert_rejected(t, Discard(seat, t.referee.hands[seat][0]), IllegalMoveCode.WRONG_PHASE)
    draw(t)
    _assert_rejected(t, DrawStock(seat), IllegalMoveCode.WRONG_PHASE)
    _assert_rejected(t, TakeDiscard(seat), IllegalMoveCode.WRONG_PHASE)


def test_illegal_meld_is_rejected_and_names_the_reason() -> None:
    t = table_for("us", hands={1: "3S 5S 9H KS KH KD AS AH AD"})
    draw(t)
    bad = slots_of(t.referee, 1, "3S 5S 9H")
    good = slots_of(t.referee, 1, "KS KH KD")
    _assert_rejected(t, LayDown(1, (good, bad)), IllegalMoveCode.ILLEGAL_MELD)
    _assert_rejected(t, LayDown(1, (good, good)), IllegalMoveCode.DUPLICATE_SLOT)
    _assert_rejected(t, LayDown(1, ()), IllegalMoveCode.ILLEGAL_MELD)
    with pytest.raises(IllegalMove) as e:
        t.referee.push(LayDown(1, (bad,)))
    assert "3S" in e.value.message


def test_addition_to_a_missing_meld_and_illegal_addition() -> None:
    t = table_for("us", hands={1: "KS KH KD AS AH AD 5C 9H"})
    draw(t)
    lay(t, 1, "KS KH KD", "AS AH AD")
    five = slots_of(t.referee, 1, "5C")
    _assert_rejected(t, AddToMeld(1, 2, five), IllegalMoveCode.NO_SUCH_MELD)
    _assert_rejected(t, AddToMeld(1, 0, five), IllegalMoveCode.ILLEGAL_MELD)
    _assert_rejected(t, AddToMeld(1, 0, ()), IllegalMoveCode.DUPLICATE_SLOT)


def test_a_hidden_card_cannot_be_melded_on_a_view_that_has_not_seen_it() -> None:
    t = table_for("us", hands={1: "KS KH KD AS AH AD"})
    draw(t)
    slots = slots_of(t.referee, 1, "KS KH KD AS AH AD")
    move = LayDown(1, (slots[:3], slots[3:]))
    view0 = t.views[0]
    before = (view0.state_hash(), snapshot(view0))
    with pytest.raises(IllegalMove) as e:
        view0.push(move)
    assert e.value.code is IllegalMoveCode.UNKNOWN_CARD
    assert (view0.state_hash(), snapshot(view0)) == before
    t.push(move)  # after the public reveal it is fine everywhere
    assert len({v.state_hash() for v in t.views}) == 1


def test_nothing_is_accepted_after_the_hand_ends() -> None:
    t = table_for("italian", face_up="9D")
    ref = t.referee
    while not ref.ended:
        seat = ref.turn
        t.push(DrawStock(seat))
        if not ref.ended:
            t.push(Discard(seat, ref.hands[seat][-1]))
    _assert_rejected(t, DrawStock(ref.turn), IllegalMoveCode.HAND_OVER)


def test_turn_up_first_outside_the_first_choice() -> None:
    t = table_for("classic", face_up="9D")
    _assert_rejected(t, TurnUpFirst(t.referee.turn), IllegalMoveCode.NO_FIRST_CARD)
    draw(t)
    _assert_rejected(t, TurnUpFirst(t.referee.turn), IllegalMoveCode.NO_FIRST_CARD)


# ---------------------------------------------------------------- reveals


def test_reveal_that_contradicts_what_the_view_knows() -> None:
    t = table_for("us")
    view = t.views[1]
    slot = view.hands[1][0]
    card = view.known[slot]
    with pytest.raises(RevealError):
        view.reveal(slot, (card + 1) % 104)
    other_slot = view.hands[1][1]
    with pytest.raises(RevealError):
        view.reveal(t.referee.stock[-1], view.known[other_slot], public=True)
    view.reveal(slot, card)  # the same again is fine


def test_private_reveal_of_a_slot_outside_the_viewers_hand() -> None:
    t = table_for("us")
    view = t.views[1]
    with pytest.raises(RevealError):
        view.reveal(t.referee.hands[2][0], t.referee.known[t.referee.hands[2][0]])
    with pytest.raises(RevealError):
        view.reveal(500, 3)
    with pytest.raises(RevealError):
        view.reveal(t.referee.stock[-1], 104)  # no jokers in a 104-card deck


# ---------------------------------------------------------------- wire forms


MOVES = [
    DrawStock(0),
    TakeDiscard(3),
    TakeDiscard(2, (40, 7, 107)),
    TurnUpFirst(1),
    LayDown(2, ((1, 2, 3), (7, 8, 9, 10))),
    LayDown(2, ((1, 2, 3),), (2,)),
    AddToMeld(1, 4, (17,)),
    AddToMeld(1, 0, (17, 18), 1),
    Discard(0, 107),
]


@pytest.mark.parametrize("move", MOVES)
def test_wire_round_trip(move: Move) -> None:
    wire = move.to_wire()
    assert all(type(x) is int for x in wire)
    assert move_from_wire(wire) == move
    assert move_from_wire(tuple(wire)) == move
    packed = msgpack.packb(wire)
    assert move_from_wire(msgpack.unpackb(packed)) == move
    assert len(packed) <= 2 + len(wire)  # small ints are one byte each


@pytest.mark.parametrize(
    "garbage",
    [
        None, 5, "DrawStock", b"\x00\x01", [], [0], [6, 0], [0, 4], [0, -1], [True, 0],
        [0, 0, 1], [5, 0], [5, 0, 108], [5, 0, 1.0], [5, 0, "1"], [4, 0, 0], [4, 0, 0, 3],
        [3, 0], [3, 0, 1], [3, 0, 1, 3, 0, 1, 2], [3, 0, 1, 2, 0, 1, 2], [3, 0, 2, 3, 0, 1, 2, 3],
        [3, 0, 1, 3, 0, 1, 2, 3, 9], [3, 0, 0], [3, 0, 1, 3, 5, 1, 2, 3], {"k": 1},
        [5, 0, [1]], [0, 0] * 400,
    ],
)
def test_garbage_wire_forms_are_bad_wire(garbage: object) -> None:
    with pytest.raises(IllegalMove) as e:
        move_from_wire(garbage)
    assert e.value.code is IllegalMoveCode.BAD_WIRE


def test_duplicate_slots_on_the_wire() -> None:
    for wire in (
        [3, 1, 1, 3, 0, 4, 4, 5],
        [3, 1, 2, 3, 0, 1, 2, 3, 3, 0, 3, 4, 5],
        [4, 1, 0, 0, 9, 9],
    ):
        with pytest.raises(IllegalMove) as e:
            move_from_wire(wire)
        assert e.value.code is IllegalMoveCode.DUPLICATE_SLOT
        assert e.value.seat == 1


_atoms = st.one_of(
    st.integers(-3, 120), st.booleans(), st.none(), st.text(max_size=3), st.floats()
)


@given(st.one_of(_atoms, st.lists(st.one_of(st.integers(-2, 110), _atoms), max_size=30)))
def test_any_object_decodes_to_a_move_or_a_clear_error(obj: object) -> None:
    try:
        move = move_from_wire(obj)
    except IllegalMove as e:
        assert e.code in (IllegalMoveCode.BAD_WIRE, IllegalMoveCode.DUPLICATE_SLOT)
        return
    assert move_from_wire(move.to_wire()) == move


@given(st.integers(0, 2**32), st.lists(st.integers(0, 107), min_size=1, max_size=6))
def test_random_moves_mid_game_are_applied_or_rejected_without_trace(
    seed: int, slots: list[int]
) -> None:
    rng = random.Random(seed)
    t = table_for("classic", face_up="9D")
    for _ in range(rng.randint(0, 30)):
        if t.ended:
            return
        moves = legal_moves(t.views[t.referee.turn])
        t.push(rng.choice(moves))
    if t.ended:
        return
    seat = rng.choice([t.referee.turn, rng.randint(0, 3)])
    candidates: list[Move] = [
        DrawStock(seat),
        TakeDiscard(seat),
        TurnUpFirst(seat),
        Discard(seat, slots[0]),
        AddToMeld(seat, rng.randint(0, 3), tuple(dict.fromkeys(slots))),
        LayDown(seat, (tuple(dict.fromkeys(slots)),)),
    ]
    ref = t.referee
    for move in candidates:
        sim = ref.copy()
        before = (sim.state_hash(), snapshot(sim))
        try:
            sim.push(move)
        except IllegalMove:
            assert (sim.state_hash(), snapshot(sim)) == before
