"""Bad moves, bad wire forms and bad reveals: a clear, typed error and no change at all."""

from __future__ import annotations

import random

import msgpack
import pytest
from engine_helpers import draw, lay, slots_of, snapshot, table_for
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandSetup,
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
from buraco_p2p.rules import PRESETS, get_preset


def _assert_rejected(t: LocalTable, move: Move, code: IllegalMoveCode) -> None:
    """The move is refused with `code` on every view, and no view changes.

    As a session would, every view is first asked which cards the move shows: a move refused
    there shows none (every view refuses it alike); otherwise the cards it names, all in the
    mover's hand, are revealed publicly before the move.
    """
    views: list[HandState] = [t.referee, *t.views]
    ref = t.referee
    try:
        exposed = ref.exposed_by(move)
    except IllegalMove as e:
        assert e.code is code, e
        for v in views:
            with pytest.raises(IllegalMove) as refused:
                v.exposed_by(move)
            assert refused.value.code is code
        exposed = ()
    assert all(ref.where[s] == move.seat == ref.turn for s in exposed)
    for s in exposed:
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


# ---------------------------------------------------------------- what a move may show


def _first_choice_table() -> LocalTable:
    t = table_for("us")
    draw(t)
    assert t.referee.phase.value == "first_choice"
    return t


def test_a_discard_out_of_turn_shows_nothing() -> None:
    t = table_for("classic", face_up="9D")
    draw(t)
    ref = t.referee
    other = ref.next_seat[ref.turn]
    victim = ref.hands[ref.next_seat[other]][0]
    _assert_rejected(t, Discard(other, victim), IllegalMoveCode.WRONG_PLAYER)
    with pytest.raises(IllegalMove) as e:
        ref.exposed_by(Discard(other, victim))
    assert e.value.code is IllegalMoveCode.WRONG_PLAYER


@pytest.mark.parametrize("preset", ["classic", "fechado"])
def test_a_pot_slot_named_to_justify_a_take_shows_nothing(preset: str) -> None:
    t = table_for(preset)
    ref = t.referee
    first = draw(t)
    t.push(Discard(first, ref.hands[first][0]))
    seat = ref.turn
    pot_slot = ref.layout.pots[0][0]
    code = (
        IllegalMoveCode.NOT_HELD if ref.params.must_meld_top else IllegalMoveCode.PILE_NOT_JUSTIFIED
    )
    _assert_rejected(t, TakeDiscard(seat, (ref.hands[seat][0], pot_slot)), code)


def test_a_lay_down_naming_stock_and_pot_slots_shows_nothing() -> None:
    t = table_for("classic", face_up="9D")
    seat = draw(t)
    ref = t.referee
    move = LayDown(seat, ((ref.hands[seat][0], ref.stock[-1], ref.layout.pots[0][0]),))
    _assert_rejected(t, move, IllegalMoveCode.NOT_HELD)


def test_turn_up_first_by_another_seat_does_not_show_the_drawn_card() -> None:
    t = _first_choice_table()
    ref = t.referee
    for seat in range(4):
        if seat != ref.turn:
            _assert_rejected(t, TurnUpFirst(seat), IllegalMoveCode.WRONG_PLAYER)
    assert ref.exposed_by(TurnUpFirst(ref.turn)) == (ref.first_slot,)


@pytest.mark.parametrize(
    "move",
    [
        Discard(1, "3"),  # type: ignore[arg-type]
        Discard(True, 3),  # type: ignore[arg-type]
        LayDown(1, [(1, 2, 3)]),  # type: ignore[arg-type]
        LayDown(1, ((1, 2, None),)),  # type: ignore[arg-type]
        LayDown(1, ((1, 2, 3),), [0]),  # type: ignore[arg-type]
        AddToMeld(1, "0", (1,)),  # type: ignore[arg-type]
        AddToMeld(1, 0, [1]),  # type: ignore[arg-type]
        AddToMeld(1, 0, (1,), None),  # type: ignore[arg-type]
        TakeDiscard(1, (1.0,)),  # type: ignore[arg-type]
        TakeDiscard(None),  # type: ignore[arg-type]
        "DrawStock",
        None,
    ],
)
def test_moves_built_with_wrong_python_types_are_bad_wire(move: object) -> None:
    t = table_for("classic", face_up="9D")
    for v in (t.referee, *t.views):
        for call in (v.exposed_by, v.push, v.check):
            with pytest.raises(IllegalMove) as e:
                r = call(move)  # type: ignore[arg-type]
                if isinstance(r, IllegalMove):
                    raise r
            assert e.value.code is IllegalMoveCode.BAD_WIRE


def _hostile_slots(ref: HandState, rng: random.Random, seat: int) -> list[int]:
    """Slots from everywhere: any hand, the pots, the stock's top and depth, the pile, the
    table, and outside the deck."""
    places: list[list[int]] = [list(h) for h in ref.hands]
    places += [list(p) for p in ref.layout.pots]
    places += [ref.stock[-1:], list(ref.stock), list(ref.pile)]
    places += [[s for tm in team for s in tm.slots] for team in ref.melds]
    places.append([-1, ref.n, 107, 108, 500, -(2**70), 2**70])
    places.append(list(ref.hands[seat]))
    out = []
    for _ in range(rng.randint(1, 6)):
        place = [p for p in places if p]
        out.append(rng.choice(rng.choice(place)))
    return out


def _hostile_moves(ref: HandState, rng: random.Random) -> list[Move]:
    seat = rng.choice([ref.turn, rng.randrange(4)])
    slots = _hostile_slots(ref, rng, seat)
    distinct = tuple(dict.fromkeys(slots))
    return [
        DrawStock(seat),
        TurnUpFirst(seat),
        TakeDiscard(seat, distinct[: rng.randint(0, len(distinct))]),
        Discard(seat, slots[0]),
        AddToMeld(seat, rng.randint(-1, 3), distinct, rng.randint(-1, 3)),
        AddToMeld(seat, 0, tuple(slots)),
        LayDown(seat, (distinct,)),
        LayDown(seat, (tuple(slots),)),
        LayDown(seat, (distinct[:3], distinct[3:]), (rng.randint(0, 3), 0)),
    ]


def _probe(t: LocalTable, move: Move) -> None:
    """No view shows a slot the mover does not hold; all views judge alike; a move refused
    before its cards are shown is refused by `push` with the same code and changes nothing."""
    ref = t.referee
    verdicts = set()
    for v in (ref, *t.views):
        try:
            verdicts.add(v.exposed_by(move))
        except IllegalMove as e:
            assert e.seat == move.seat
            verdicts.add(e.code)  # type: ignore[arg-type]
    assert len(verdicts) == 1, (move, verdicts)
    verdict = verdicts.pop()
    if isinstance(verdict, tuple):
        assert move.seat == ref.turn
        assert all(ref.where[s] == move.seat for s in verdict), (move, verdict)
        return
    sim = ref.copy()
    before = (sim.state_hash(), snapshot(sim))
    with pytest.raises(IllegalMove) as e:
        sim.push(move)
    assert e.value.code is verdict
    assert (sim.state_hash(), snapshot(sim)) == before


def _hostile_hand(preset: str, seed: int, probes: int) -> int:
    """Play a random hand of `preset`, probing hostile moves at random points; returns how
    many moves were probed."""
    rng = random.Random(seed)
    setup = HandSetup(get_preset(preset), rng.randrange(4), (rng.randrange(0, 3000, 5), 0), 30)
    t = LocalTable.shuffled(setup, rng)
    probed = 0
    while not t.ended and probed < probes:
        if rng.random() < 0.3:
            for move in _hostile_moves(t.referee, rng):
                _probe(t, move)
                probed += 1
        moves = legal_moves(t.views[t.referee.turn])
        melds = [m for m in moves if isinstance(m, LayDown | AddToMeld)]
        t.push(rng.choice(melds if melds and rng.random() < 0.7 else moves))
    return probed


@pytest.mark.parametrize("preset", sorted(PRESETS))
@settings(max_examples=4)
@given(seed=st.integers(0, 2**32))
def test_a_hostile_move_from_any_seat_shows_only_the_movers_own_cards(
    preset: str, seed: int
) -> None:
    _hostile_hand(preset, seed, probes=200)


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_hostile_moves_soak(preset: str) -> None:
    rng = random.Random(f"hostile-{preset}")
    assert sum(_hostile_hand(preset, rng.randrange(2**32), 2000) for _ in range(60)) > 1000
