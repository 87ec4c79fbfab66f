"""Views, reveals and the wild-end choice carried by moves."""

from __future__ import annotations

import random

import pytest
from engine_helpers import draw, lay, slots_of, table_for

from buraco_p2p.engine import (
    Discard,
    DrawStock,
    HandSetup,
    IllegalMove,
    IllegalMoveCode,
    LayDown,
    LocalTable,
    PlayerView,
    RefereeView,
    Reveal,
    RevealError,
    RevealRequest,
    TakeDiscard,
    TurnUpFirst,
    legal_moves,
    reveal_from_wire,
)
from buraco_p2p.engine.oracle import clear_public_melds
from buraco_p2p.rules import IllegalMeld, get_preset


def test_reveal_wire_round_trip_and_garbage() -> None:
    for r in (Reveal(3, 17), Reveal(107, 0, True)):
        assert reveal_from_wire(r.to_wire()) == r
    for bad in (None, [1, 2], [1, 2, 3], [1, 2, True], [-1, 2, 0], [1, 108, 0], [1.0, 2, 0]):
        with pytest.raises(RevealError):
            reveal_from_wire(bad)


def test_apply_reveal_is_reveal() -> None:
    t = table_for("us")
    view = PlayerView(t.referee.setup, 2)
    slot = t.referee.hands[2][0]
    view.apply(Reveal(slot, t.referee.known[slot]))
    assert view.card(slot) == t.referee.known[slot]
    assert slot not in view.public


def test_a_player_view_knows_nothing_it_was_not_told() -> None:
    view = PlayerView(HandSetup(get_preset("us"), 0), 1)
    assert all(view.card(s) is None for s in range(104))
    assert view.state_hash() == RefereeView(HandSetup(get_preset("us"), 0), range(104)).state_hash()


def test_sample_referee_agrees_with_everything_the_view_knows() -> None:
    t = table_for("classic", face_up="9D", hands={1: "KS KH KD AS AH AD 9C"})
    draw(t)
    lay(t, 1, "KS KH KD", "AS AH AD")
    view = t.views[2]
    sim = view.sample_referee(random.Random(1))
    assert isinstance(sim, RefereeView) and sim.viewer is None
    assert sorted(sim.known) == list(range(108))
    for s in range(108):
        if view.card(s) is not None:
            assert sim.known[s] == view.known[s]
    assert sim.state_hash() == view.state_hash()
    other = view.sample_referee(random.Random(2))
    assert other.known != sim.known
    # The simulation plays on without touching the view.
    before = view.state_hash()
    sim.push(legal_moves(sim)[0])
    assert view.state_hash() == before


def test_wild_at_the_low_end_when_the_player_asks() -> None:
    t = table_for("classic", face_up="9D", hands={1: "7S 8S 9S JK 5C 5D AS AH AD"})
    draw(t)
    run = slots_of(t.referee, 1, "7S 8S 9S JK")
    aces = slots_of(t.referee, 1, "AS AH AD")
    t.push(LayDown(1, (run, aces), (1, 0)))
    m = t.referee.melds[1][0].meld
    assert m.start == 6 and m.wild_index == 0  # JK stands for the 6
    assert len({v.state_hash() for v in t.views}) == 1


def test_italian_wild_may_not_take_the_low_end() -> None:
    t = table_for("italian", face_up="9D", hands={3: "7S 8S JK 5C"})
    draw(t)
    run = slots_of(t.referee, 3, "7S 8S JK")
    with pytest.raises(IllegalMove) as e:
        t.push(LayDown(3, (run,), (1,)))
    assert e.value.code is IllegalMoveCode.ILLEGAL_MELD
    t.push(LayDown(3, (run,)))
    assert t.referee.melds[1][0].meld.start == 7  # 7-8-W is 7-8-9


def test_generator_offers_both_ends_only_where_the_player_may_choose() -> None:
    hand = "7S 8S 9S JK KH KD KC AS AH AD 4C"
    for preset, expect_low in (("classic", True), ("italian", False)):
        seat = 1 if preset == "classic" else 3
        t = table_for(preset, face_up="9D", hands={seat: hand})
        draw(t)
        lows = [
            m for m in legal_moves(t.views[seat]) if isinstance(m, LayDown) and any(m.wild_ends)
        ]
        assert bool(lows) == expect_low
        for m in lows:
            t.referee.copy().push(m)


def test_each_move_asks_for_the_reveals_a_session_owes() -> None:
    rules = get_preset("us")
    ref = RefereeView(HandSetup(rules, 0), list(range(104)))
    deal = ref.deal_reveals()
    assert len(deal) == 44 and all(r.seat is not None for r in deal)
    assert {r.slot for r in deal if r.seat == 1} == set(ref.hands[1])
    top = ref.stock[-1]
    assert ref.push(DrawStock(1)) == (RevealRequest(top, 1),)
    nxt = ref.stock[-1]
    assert ref.exposed_by(TurnUpFirst(1)) == (top,)
    assert ref.push(TurnUpFirst(1)) == (RevealRequest(nxt, 1),)
    assert ref.push(Discard(1, nxt)) == ()
    assert ref.push(TakeDiscard(2)) == ()  # the pile is public already
    classic = RefereeView(HandSetup(get_preset("classic"), 0), list(range(108)))
    face_up = classic.layout.face_up
    assert face_up is not None and RevealRequest(face_up, None) in classic.deal_reveals()


@pytest.mark.parametrize(
    "setup",
    [
        HandSetup(get_preset("us"), 4),
        HandSetup(get_preset("us"), 0, (0,)),  # type: ignore[arg-type]
        HandSetup(get_preset("us"), 0, (0, 0), 104),
        HandSetup(get_preset("us"), 0, (0, 0), 0),
        HandSetup(get_preset("us"), 0, (0, 0), None, -1),
    ],
)
def test_impossible_setups_are_refused(setup: HandSetup) -> None:
    with pytest.raises(ValueError):
        PlayerView(setup, 0)


def test_a_referee_needs_a_real_permutation() -> None:
    setup = HandSetup(get_preset("us"), 0)
    for perm in ([0] * 104, list(range(103)), list(range(108))):
        with pytest.raises(ValueError):
            RefereeView(setup, perm)


def test_check_and_is_legal_leave_the_view_untouched() -> None:
    t = table_for("us")
    ref = t.referee
    before = ref.state_hash()
    assert ref.is_legal(DrawStock(1)) and not ref.is_legal(DrawStock(2))
    err = ref.check(Discard(1, ref.hands[1][0]))
    assert err is not None and err.code is IllegalMoveCode.WRONG_PHASE
    assert ref.state_hash() == before and ref.moves == []


def _faces_in_cache(view: PlayerView) -> set[int]:
    """Every face code the view's meld cache holds, in keys and in cached melds."""
    o = view.oracle
    codes: set[int] = set()
    for (key, _end), r in o._eval.items():
        codes.update(key)
        if not isinstance(r, IllegalMeld):
            codes.update(f.code for f in r.faces)
    for (meld_key, added, _end), r in o._ext.items():
        codes.update(meld_key[2])
        codes.update(added)
        if not isinstance(r, IllegalMeld):
            codes.update(f.code for f in r.faces)
    for _meld, key in o._keys.values():
        codes.update(key[2])
    return codes


def _codes_known(view: PlayerView) -> set[int]:
    return {c % 52 if c < 104 else 52 for c in view.known if c >= 0}


@pytest.mark.parametrize("preset", ["us", "italian", "fechado"])
def test_two_views_in_one_process_learn_nothing_from_each_other(preset: str) -> None:
    """Each seat's player generates its moves from its own view, in one process: no view's
    meld cache holds a face that view has not seen, so none can read another's hand."""
    rng = random.Random(f"two-views-{preset}")
    for _ in range(3):
        t = LocalTable.shuffled(HandSetup(get_preset(preset), rng.randrange(4)), rng)
        assert len({id(v.oracle) for v in (t.referee, *t.views)}) == 5
        while not t.ended:
            view = t.views[t.referee.turn]
            t.push(rng.choice(legal_moves(view)))
        for v in t.views:
            assert _faces_in_cache(v) <= _codes_known(v), v.viewer


def _faces_in_public_cache(view: PlayerView) -> set[int]:
    """Every face code the shared public meld cache holds, in keys and in cached melds."""
    o = view.oracle._public
    codes: set[int] = set()
    for (key, _end), r in o.eval.items():
        codes.update(key)
        if not isinstance(r, IllegalMeld):
            codes.update(f.code for f in r.faces)
    for (meld_key, added, _end), r in o.ext.items():
        codes.update(meld_key[2])
        codes.update(added)
        if not isinstance(r, IllegalMeld):
            codes.update(f.code for f in r.faces)
    for _meld, key in o.keys.values():
        codes.update(key[2])
    return codes


@pytest.mark.parametrize("preset", ["us", "italian", "fechado"])
def test_the_shared_meld_cache_holds_only_public_faces(preset: str) -> None:
    """The views of a table share one cache of the melds pushed moves show: after every move
    it holds no face that is not public at that table, however much the players probe."""
    rng = random.Random(f"public-cache-{preset}")
    clear_public_melds()
    checked = 0
    for _ in range(2):
        t = LocalTable.shuffled(HandSetup(get_preset(preset), rng.randrange(4)), rng)
        ref = t.referee
        assert len({id(v.oracle._public) for v in (ref, *t.views)}) == 1
        while not t.ended:
            view = t.views[ref.turn]
            t.push(rng.choice(legal_moves(view)))
            if t.ended:
                break
            shown = {ref.codes[ref.known[s]] for s in ref.public}
            assert _faces_in_public_cache(ref) <= shown
            checked += 1
        clear_public_melds()  # the next hand's public cards are others
    assert checked > 20


def test_a_pushed_meld_is_checked_once_for_the_players_views() -> None:
    """A lay-down its cards were shown for is checked once for the players' views, in the
    shared cache; no player's own cache learns it. A move checked before its cards are shown
    (`check` on the mover's own view) stays in that view's cache alone."""
    clear_public_melds()
    t = table_for("us", hands={1: "3S 4S 5S KS KH KD 9H"})
    draw(t)
    ref = t.referee
    mover = t.views[1]
    meld = slots_of(ref, 1, "3S 4S 5S")
    key = (tuple(sorted(ref.codes[ref.known[s]] for s in meld)), 0)
    assert mover.check(LayDown(1, (meld,))) is None
    assert key in mover.oracle._eval
    assert key not in mover.oracle._public.eval
    lay(t, 1, "3S 4S 5S")
    assert key in ref.oracle._public.eval
    assert all(key not in v.oracle._eval for v in t.views if v is not mover)
