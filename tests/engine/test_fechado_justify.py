"""Fechado "justify": taking the pile shows the hand cards that meld its top card, so a take
can never leave its player holding a top card they cannot meld."""

from __future__ import annotations

import random

import pytest
from engine_helpers import discard, draw, lay, slots_of, snapshot, table_for

from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandSetup,
    IllegalMove,
    IllegalMoveCode,
    LayDown,
    LocalTable,
    Move,
    Phase,
    TakeDiscard,
    legal_moves,
    move_from_wire,
)
from buraco_p2p.rules import get_preset


def _pile_topped_with(
    top: str, hand1: str, overrides: dict[str, object] | None = None, meld_first: str = ""
) -> LocalTable:
    """Fechado, six cards a hand: player 1 (who may lay `meld_first` down), then three
    discards; player 0 discards `top` last, so player 1 faces a four-card pile."""
    rules = get_preset("fechado").with_overrides({"hand_size": 6, **(overrides or {})})
    t = table_for(rules, hands={1: hand1, 0: top}, stock="5H 9C 6D JC")
    draw(t)
    if meld_first:
        lay(t, 1, meld_first)
    discard(t, 1, "5H")
    for seat in (2, 3):
        draw(t)
        t.push(Discard(seat, t.referee.hands[seat][-1]))
    draw(t)
    discard(t, 0, top)
    return t


def _melded(move: Move) -> set[int]:
    if isinstance(move, LayDown):
        return {s for m in move.melds for s in m}
    if isinstance(move, AddToMeld):
        return set(move.slots)
    return set()


def test_a_take_whose_top_card_cannot_be_melded_is_refused_and_the_hand_goes_on() -> None:
    t = _pile_topped_with("QD", "3S 4S 7H 8H 9H KC")
    ref = t.referee
    before = (ref.state_hash(), snapshot(ref))
    with pytest.raises(IllegalMove) as e:
        t.push(TakeDiscard(1))
    assert e.value.code is IllegalMoveCode.PILE_NOT_JUSTIFIED and e.value.seat == 1
    for shown in ("KC 7H", "3S 4S"):
        with pytest.raises(IllegalMove) as e:
            t.push(TakeDiscard(1, slots_of(ref, 1, shown)))
        assert e.value.code is IllegalMoveCode.PILE_NOT_JUSTIFIED and e.value.seat == 1
    assert (ref.state_hash(), snapshot(ref)) == before
    assert legal_moves(t.views[1]) == [DrawStock(1)]
    draw(t)
    assert legal_moves(t.views[1])


def test_a_justified_take_shows_its_cards_to_every_view_and_its_meld_follows() -> None:
    t = _pile_topped_with("5S", "3S 4S 7H 8H 9H KC")
    ref = t.referee
    just = tuple(sorted(slots_of(ref, 1, "3S 4S")))
    move = TakeDiscard(1, just)
    assert legal_moves(t.views[1]) == [DrawStock(1), move]
    assert ref.exposed_by(move) == just
    assert move.to_wire() == [1, 1, *just] and move_from_wire(move.to_wire()) == move
    assert all(t.views[0].known[s] < 0 for s in just)
    t.push(move)
    for v in t.views:
        assert [v.known[s] for s in just] == [ref.known[s] for s in just]
        assert set(just) <= v.public
    assert len({v.state_hash() for v in (ref, *t.views)}) == 1
    top = ref.must_meld
    moves = legal_moves(t.views[1])
    assert moves and all(top in _melded(m) for m in moves)
    assert {*just, top} in [_melded(m) for m in moves]
    lay(t, 1, "3S 4S 5S")
    assert ref.must_meld == -1
    discard(t, 1, "KC")


def test_the_justification_is_the_takers_own_distinct_revealed_cards() -> None:
    t = _pile_topped_with("5S", "3S 4S 7H 8H 9H KC")
    ref = t.referee
    a, b = slots_of(ref, 1, "3S 4S")
    for justify, code in (
        ((a, a), IllegalMoveCode.DUPLICATE_SLOT),
        ((a, ref.hands[2][0]), IllegalMoveCode.NOT_HELD),
        ((a, ref.stock[-1]), IllegalMoveCode.NOT_HELD),
        ((a, 107), IllegalMoveCode.NOT_HELD),
    ):
        err = ref.check(TakeDiscard(1, justify))
        assert err is not None and err.code is code, justify
    # Another player's view judges only cards revealed to it: the session shows them first.
    err = t.views[0].check(TakeDiscard(1, (a, b)))
    assert err is not None and err.code is IllegalMoveCode.UNKNOWN_CARD
    assert t.views[1].check(TakeDiscard(1, (a, b))) is None


def test_the_top_card_alone_on_a_team_meld_needs_no_card_shown() -> None:
    t = _pile_topped_with("6S", "3S 4S 5S 7H 8H KC", meld_first="3S 4S 5S")
    ref = t.referee
    take = TakeDiscard(1)
    assert take in legal_moves(t.views[1])
    err = ref.check(TakeDiscard(1, slots_of(ref, 1, "7H")))
    assert err is not None and err.code is IllegalMoveCode.PILE_NOT_JUSTIFIED
    t.push(take)
    top = ref.must_meld
    assert AddToMeld(1, 0, (top,)) in legal_moves(t.views[1])
    t.push(AddToMeld(1, 0, (top,)))
    assert [str(f) for f in ref.melds[1][0].meld.faces] == ["3S", "4S", "5S", "6S"]


def test_a_justifying_meld_must_reach_the_initial_minimum_alone() -> None:
    over: dict[str, object] = {"initial_meld_min": 35, "initial_meld_failed_step": 15}
    t = _pile_topped_with("TS", "JS QS KS 7H 8H 9H", over)
    ref = t.referee
    err = ref.check(TakeDiscard(1, slots_of(ref, 1, "JS QS")))  # 30 points
    assert err is not None and err.code is IllegalMoveCode.PILE_NOT_JUSTIFIED
    assert "minimum" in err.message
    takes = [m for m in legal_moves(t.views[1]) if isinstance(m, TakeDiscard)]
    assert takes == [TakeDiscard(1, tuple(sorted(slots_of(ref, 1, "JS QS KS"))))]
    t.push(takes[0])
    # No failed attempt with the top card: it would raise the minimum over the shown meld.
    with pytest.raises(IllegalMove) as e:
        lay(t, 1, "TS JS QS")
    assert e.value.code is IllegalMoveCode.NOT_OPENED and ref.failed[1] == 0
    lay(t, 1, "TS JS QS KS")
    assert ref.opened[1]


def _pile_of_one(hand2: str, overrides: dict[str, object]) -> LocalTable:
    """Fechado: player 1 discards 5S on the empty pile; player 2 holds `hand2`."""
    rules = get_preset("fechado").with_overrides(overrides)
    pots = ("", "")[: rules.pots]
    t = table_for(rules, hands={1: "5S", 2: hand2}, stock="KH", pots=pots)
    draw(t)
    discard(t, 1, "5S")
    return t


def test_a_take_whose_meld_would_empty_the_hand_needs_emptying_to_be_allowed() -> None:
    # Before the team's pot is taken, emptying the hand takes it: the take is justified.
    t = _pile_of_one("3S 4S", {"hand_size": 2})
    ref = t.referee
    take = TakeDiscard(2, tuple(sorted(slots_of(ref, 2, "3S 4S"))))
    assert take in legal_moves(t.views[2])
    t.push(take)
    moves = legal_moves(t.views[2])
    assert len(moves) == 1 and len(_melded(moves[0])) == 3
    t.push(moves[0])
    assert ref.team_pot[0] == 0 and ref.turn == 2 and legal_moves(t.views[2])
    # With no pot to take and no clean buraco, that meld could not be played: no take.
    t = _pile_of_one("3S 4S", {"hand_size": 2, "pots": 0})
    ref = t.referee
    err = ref.check(TakeDiscard(2, slots_of(ref, 2, "3S 4S")))
    assert err is not None and err.code is IllegalMoveCode.CANNOT_EMPTY_HAND
    assert legal_moves(t.views[2]) == [DrawStock(2)]


def test_a_take_that_would_leave_one_hidden_card_shows_it_where_a_wild_may_not_go_out() -> None:
    for wild_ok in (True, False):
        over: dict[str, object] = {"hand_size": 3, "discard_wild_to_go_out": wild_ok}
        t = _pile_of_one("3S 4S 9C", over)
        ref = t.referee
        just = tuple(sorted(slots_of(ref, 2, "3S 4S")))
        kept = slots_of(ref, 2, "9C")
        take = TakeDiscard(2, just)
        assert ref.exposed_by(take) == (just if wild_ok else just + kept)
        t.push(take)
        assert (kept[0] in t.views[0].public) is not wild_ok
        assert len({v.state_hash() for v in (ref, *t.views)}) == 1


def test_no_justification_outside_fechado_and_old_wire_forms_decode() -> None:
    t = table_for("classic", face_up="9D")
    ref = t.referee
    seat = ref.turn
    err = ref.check(TakeDiscard(seat, (ref.hands[seat][0],)))
    assert err is not None and err.code is IllegalMoveCode.PILE_NOT_JUSTIFIED
    assert TakeDiscard(seat) in legal_moves(t.views[seat])
    assert move_from_wire([1, 2]) == TakeDiscard(2)
    assert move_from_wire([1, 2, 7, 3]) == TakeDiscard(2, (7, 3))
    for garbage in ([1, 2, "x"], [1, 2, 108], [1, 2, True], [1, 2, -1], [1, 2, 3.0]):
        with pytest.raises(IllegalMove) as e:
            move_from_wire(garbage)
        assert e.value.code is IllegalMoveCode.BAD_WIRE
    with pytest.raises(IllegalMove) as e:
        move_from_wire([1, 2, 5, 5])
    assert e.value.code is IllegalMoveCode.DUPLICATE_SLOT


@pytest.mark.parametrize("seed", range(4))
def test_any_accepted_take_leaves_a_legal_move(seed: int) -> None:
    """Whatever a player (or a cheating peer) shows, a take the engine accepts is followed by
    a legal move that melds the top card, and every view judges the take alike."""
    rng = random.Random(f"justify-{seed}")
    rules = get_preset("fechado").with_overrides({"hand_size": rng.choice([4, 7, 11])})
    t = LocalTable.shuffled(HandSetup(rules, rng.randrange(4)), rng)
    ref = t.referee
    accepted = 0
    while not ref.ended:
        seat = ref.turn
        if ref.phase is Phase.DRAW and ref.pile:
            hand = ref.hands[seat]
            for _ in range(12):
                k = rng.randint(0, min(4, len(hand)))
                move = TakeDiscard(seat, tuple(rng.sample(hand, k)))
                verdicts = set()
                for v in (ref, *t.views):
                    sim = v.copy()
                    for s in ref.exposed_by(move):
                        sim.reveal(s, ref.known[s], public=True)
                    verdicts.add(sim.check(move) is None)
                assert len(verdicts) == 1, move
                if verdicts == {True}:
                    accepted += 1
                    sim = ref.copy()
                    sim.push(move)
                    after = legal_moves(sim)
                    assert after and all(sim.must_meld in _melded(m) for m in after)
        moves = legal_moves(t.views[seat])
        assert moves
        melds = [m for m in moves if not isinstance(m, Discard | DrawStock)]
        t.push(rng.choice(melds if melds and rng.random() < 0.8 else moves))
    assert accepted > 0
