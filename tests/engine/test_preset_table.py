"""The preset table (the product decisions), row by row, played through the engine.

Each test builds the exact situation with a chosen deal and plays it on a `LocalTable`, so the
rule is proved by the moves and the hand score, not only by the `RuleSet` value. Rows already
played elsewhere (tests/engine/test_hand_rules.py) are not repeated here; these fill the
row/preset combinations those leave out.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from engine_helpers import add, build_perm, discard, draw, lay, slots_of, table_for

from buraco_p2p.cards import face_of, parse_cards
from buraco_p2p.engine import (
    GO_OUT,
    Discard,
    DrawStock,
    EndReason,
    HandResult,
    HandSetup,
    IllegalMove,
    IllegalMoveCode,
    LayDown,
    LocalTable,
    Match,
    Phase,
    RefereeView,
    ScoreLine,
    TakeDiscard,
    TurnUpFirst,
    deal_layout,
    legal_moves,
)
from buraco_p2p.engine.hand import POT_IS_STOCK
from buraco_p2p.rules import LINE_NAMES, evaluate_meld, get_preset

PRESETS = ("us", "classic", "playingcards", "italian", "fechado")
CLOCKWISE = {"us": True, "classic": True, "playingcards": False, "italian": False, "fechado": True}


def _first(dealer: int, preset: str) -> int:
    return (dealer + (1 if CLOCKWISE[preset] else -1)) % 4


def _second(dealer: int, preset: str) -> int:
    return (dealer + (2 if CLOCKWISE[preset] else -2)) % 4


def _play_out(t: LocalTable, stop: Callable[[], bool] | None = None) -> None:
    """Every player draws from the stock and discards the card drawn, until `stop` or the end."""
    ref = t.referee
    while not ref.ended and not (stop is not None and stop()):
        seat = ref.turn
        if _phase(t) is Phase.DRAW:
            t.push(DrawStock(seat))
        if not ref.ended:
            t.push(Discard(seat, ref.hands[seat][-1]))


def _phase(t: LocalTable) -> Phase:
    """The referee's phase, read through a call so that type checkers do not pin it."""
    return t.referee.phase


def _lines(t: LocalTable, team: int) -> dict[str, int]:
    r = t.result()
    return {x.name: x.points for x in r.lines[team]}


# ---------------------------------------------------------------- initial meld minimum


@pytest.mark.parametrize("preset", ["us", "classic"])
def test_initial_meld_minimum_us_classic_75_from_1500_played(preset: str) -> None:
    # Dealer 0: seat 1 (team 1, 1500 points) plays first, then seat 2 (team 0, 0 points).
    t = table_for(
        preset,
        scores=(0, 1500),
        hands={1: "KH KD KC QH QD QC AS AH AD 9S 9H", 2: "JH JD JC 3S 4S 5S 6S 9C"},
    )
    ref = t.referee
    draw(t)
    lay(t, 1, "KH KD KC", "QH QD QC")  # 60 < 75 so far: shown, kept in the hand
    assert ref.opened == [False, False] and ref.failed[1] == 0 and ref.melds[1] == []
    assert len(ref.opening) == 2 and ref.opening_points() == 60
    assert ref.initial_minimum(1) == 75 and ref.initial_minimum(0) == 50
    lay(t, 1, "AS AH AD")  # 105 >= 75 with the melds shown before in the turn (000:149-150)
    assert ref.opened == [False, True] and len(ref.melds[1]) == 3 and ref.failed[1] == 0
    discard(t, 1, "9S")
    draw(t)
    lay(t, 2, "JH JD JC", "3S 4S 5S 6S")  # exactly 50 for a team under 1500
    assert ref.opened == [True, True] and ref.failed[0] == 0


@pytest.mark.parametrize("preset", ["us", "classic"])
def test_initial_meld_failed_attempt_raises_the_minimum_for_the_partner_too(preset: str) -> None:
    t = table_for(preset, hands={1: "3S 4S 5S 9C", 3: "KH KD KC QH QD QC 9D"})
    ref = t.referee
    draw(t)
    lay(t, 1, "3S 4S 5S")  # 15 < 50
    discard(t, 1, "9C")
    draw(t)
    t.push(Discard(2, ref.hands[2][-1]))
    draw(t)
    assert ref.initial_minimum(1) == 65
    lay(t, 3, "KH KD KC", "QH QD QC")  # 60 < 65: the partner's failure counted
    discard(t, 3, "9D")  # the turn ends under the minimum
    assert not ref.opened[1] and ref.failed[1] == 2 and ref.initial_minimum(1) == 80
    # Per hand: the next hand of the match starts again from 50.
    m = Match(get_preset(preset))
    m.record(_synthetic(m.next_setup(), 10, 10))
    nxt = LocalTable(m.next_setup(), list(range(ref.n)))
    assert nxt.referee.initial_minimum(1) == 50 and nxt.referee.failed == [0, 0]


def test_initial_meld_playingcards_75_once_the_team_has_half_the_target() -> None:
    # Counter-clockwise: dealer 1, seat 0 (team 0, 1500 of 3000) first, then seat 3 (1499).
    t = table_for(
        "playingcards",
        dealer=1,
        scores=(1500, 1499),
        hands={0: "9S TS JS QS KS AS 8S 3H 4H 5H 9C", 3: "3D 4D 5D 9H"},
    )
    ref = t.referee
    assert draw(t) == 0
    lay(t, 0, "9S TS JS QS KS AS")  # 65 < 75
    assert ref.opened == [False, False] and ref.failed[0] == 1
    assert ref.initial_minimum(0) == 75  # no step per failed attempt in this preset
    lay(t, 0, "8S 9S TS JS QS KS AS")  # 75
    assert ref.opened == [True, False]
    discard(t, 0, "9C")
    assert draw(t) == 3
    lay(t, 3, "3D 4D 5D")  # 15 points: no minimum below half the target
    assert ref.opened == [True, True]


# ---------------------------------------------------------------- start of the discard pile


@pytest.mark.parametrize("preset", ["us", "playingcards"])
def test_start_of_pile_us_playingcards_kept_card_ends_the_draw(preset: str) -> None:
    t = table_for(preset, stock="KH 5C")
    seat = draw(t)
    assert _phase(t) is Phase.FIRST_CHOICE
    with pytest.raises(IllegalMove) as e:
        t.push(DrawStock(seat))  # keeping the first card: no second draw
    assert e.value.code is IllegalMoveCode.WRONG_PHASE
    assert TurnUpFirst(seat) in legal_moves(t.views[seat])


@pytest.mark.parametrize("preset", ["us", "playingcards"])
def test_start_of_pile_us_playingcards_turned_up_card_may_be_taken_next(preset: str) -> None:
    t = table_for(preset, stock="KH 5C 7D")
    ref = t.referee
    seat = draw(t)
    t.push(TurnUpFirst(seat))
    discard(t, seat, "5C")
    nxt = ref.turn
    assert [str(ref.face(s)) for s in ref.pile] == ["KH", "5C"]
    t.push(TakeDiscard(nxt))
    assert [str(ref.face(s)) for s in ref.hands[nxt][-2:]] == ["KH", "5C"]
    assert str(ref.face(ref.stock[-1])) == "7D"  # the stock was not touched


# ---------------------------------------------------------------- taking the discard pile


def test_italian_may_discard_a_taken_card_when_the_pile_held_more_than_one() -> None:
    t = table_for("italian", face_up="9D", hands={3: "KC"}, stock="4H")
    ref = t.referee
    assert draw(t) == 3
    discard(t, 3, "KC")
    t.push(TakeDiscard(2))
    assert [str(ref.face(s)) for s in ref.hands[2][-2:]] == ["9D", "KC"]
    assert ref.taken_single == -1
    discard(t, 2, "KC")  # two cards were taken: either may go back
    assert ref.turn == 1


def test_italian_only_card_just_taken_may_be_discarded_on_a_later_turn() -> None:
    t = table_for("italian", face_up="9D")
    ref = t.referee
    seat = ref.turn
    t.push(TakeDiscard(seat))
    t.push(Discard(seat, ref.hands[seat][0]))
    for _ in range(3):
        s = draw(t)
        t.push(Discard(s, ref.hands[s][-1]))
    draw(t)
    discard(t, seat, "9D")
    assert ref.turn != seat


# ---------------------------------------------------------------- pots


def _opening(preset: str) -> tuple[str, str, str, str]:
    """(first hand, first drawn card, second hand, second drawn card) for seats that open by
    melding every card: sets of aces and kings (>= 50) where the preset needs them."""
    if preset in ("us", "classic"):
        return "AS AH AD KC", "AC", "KS KH KD KC", "KH"
    return "3S 4S 5S KC", "6S", "3H 4H 5H 6H", "7H"


@pytest.mark.parametrize("preset", PRESETS)
def test_emptying_a_hand_before_the_pot_discard_then_in_flight_second_pot(preset: str) -> None:
    h1, d1, h2, d2 = _opening(preset)
    rules = get_preset(preset).with_overrides({"hand_size": 4})
    first, second = _first(0, preset), _second(0, preset)
    t = table_for(rules, hands={first: h1, second: h2}, stock=f"{d1} {d2}")
    ref = t.referee
    pot0, pot1 = (list(p) for p in ref.layout.pots)
    assert draw(t) == first
    lay(t, first, " ".join([*h1.split()[:3], d1]))
    discard(t, first, "KC")  # empties the hand with a discard: the pot waits for the next turn
    assert ref.team_pot[first & 1] == 0 and ref.pot_owner == [first & 1, -1]
    assert ref.hands[first] == pot0 and ref.turn == second and _phase(t) is Phase.DRAW
    assert draw(t) == second
    lay(t, second, f"{h2} {d2}")  # empties the hand by melding: the pot comes in flight
    assert ref.pot_owner == [first & 1, second & 1] and ref.team_pot[second & 1] == 1
    assert ref.hands[second] == pot1 and ref.turn == second and _phase(t) is Phase.PLAY
    assert all(t.views[second].card(s) is not None for s in pot1)
    assert all(t.views[first].card(s) is None for s in pot1)
    t.push(Discard(second, pot1[0]))
    assert ref.turn != second


# ---------------------------------------------------------------- going out and its score

# Per preset: opening cards, the pot, the pot's melds, the going-out discard, and the going-out
# team's expected score lines (melds, buracos, going_out).
GOING_OUT = {
    "us": (
        "AS AH AD",
        "AC",
        "3H 4H 5H 6H 7H 8H 9H KC KD KS 2D",
        ("3H 4H 5H 6H 7H 8H 9H", "KC KD KS"),
        "2D",
        (60 + 45 + 30, 200, 100),
    ),
    "classic": (
        "AS AH AD",
        "AC",
        "3H 4H 5H 6H 7H 8H 9H KC KD KS 2D",
        ("3H 4H 5H 6H 7H 8H 9H", "KC KD KS"),
        "2D",
        (60 + 45 + 30, 200, 100),
    ),
    "playingcards": (
        "3S 4S 5S",
        "6S",
        "3H 4H 5H 6H 7H 8H 9H 8C 9C TC 2D",
        ("3H 4H 5H 6H 7H 8H 9H", "8C 9C TC"),
        "2D",
        (20 + 45 + 30, 200, 100),
    ),
    "italian": (
        "3S 4S 5S",
        "6S",
        "3H 4H 5H 6H 7H 8H JK 8C 9C TC 5D",
        ("3H 4H 5H 6H 7H 8H JK", "8C 9C TC"),
        "5D",
        (20 + 65 + 30, 100, 100),
    ),
    "fechado": (
        "3S 4S 5S",
        "6S",
        "3H 4H 5H 6H 7H 8H 9H 8C 9C TC 2D",
        ("3H 4H 5H 6H 7H 8H 9H", "8C 9C TC"),
        "2D",
        (20 + 45 + 30, 200, 100),
    ),
}


@pytest.mark.parametrize("preset", PRESETS)
def test_going_out_bonus_100_and_never_took_pot_minus_100(preset: str) -> None:
    hand, drawn, pot, melds, last, (meld_pts, buracos, bonus) = GOING_OUT[preset]
    rules = get_preset(preset).with_overrides({"hand_size": 3})
    seat = _first(0, preset)
    t = table_for(rules, hands={seat: hand}, stock=drawn, pots=(pot, ""))
    ref = t.referee
    draw(t)
    lay(t, seat, f"{hand} {drawn}")  # opens and empties the hand: the pot comes in flight
    for m in melds:
        lay(t, seat, m)
    discard(t, seat, last)
    assert ref.ended and ref.end_reason is EndReason.WENT_OUT and ref.went_out == seat
    team = seat & 1
    got = _lines(t, team)
    assert (got["melds"], got["buracos"], got["going_out"]) == (meld_pts, buracos, bonus)
    assert got["pot_not_taken"] == 0 and got["pot_unplayed"] == 0
    assert ref.hands[seat] == []
    pts = rules.face_points

    def left(team: int) -> int:
        faces = [f for x in (team, team + 2) for s in ref.hands[x] if (f := ref.face(s))]
        return sum(pts[f.code] for f in faces)

    assert got["hand_penalty"] == -left(team) < 0  # the partner's three cards
    other = _lines(t, 1 - team)
    assert other["going_out"] == 0 and other["pot_not_taken"] == -100
    assert other["hand_penalty"] == -left(1 - team) < 0
    assert t.result().totals[team] == meld_pts + buracos + bonus - left(team)


def test_going_out_us_with_a_clean_set_buraco() -> None:
    rules = get_preset("us").with_overrides({"hand_size": 3})
    t = table_for(
        rules, hands={1: "AS AH AD"}, stock="AC", pots=("KC KD KS KH KC KD KS 3H 4H 5H 9C", "")
    )
    draw(t)
    lay(t, 1, "AS AH AD AC")
    lay(t, 1, "KC KD KS KH KC KD KS", "3H 4H 5H")  # seven kings: a clean buraco
    discard(t, 1, "9C")
    assert t.referee.ended and t.referee.went_out == 1
    assert _lines(t, 1)["buracos"] == 200 and _lines(t, 1)["going_out"] == 100


@pytest.mark.parametrize("preset", ["us", "classic", "playingcards"])
def test_going_out_by_discarding_a_wild_allowed(preset: str) -> None:
    # The going-out test above discards 2D for these presets; here the legal-move generator
    # must also offer keeping a lone deuce to go out with.
    hand, drawn, pot, melds, last, _ = GOING_OUT[preset]
    rules = get_preset(preset).with_overrides({"hand_size": 3})
    seat = _first(0, preset)
    t = table_for(rules, hands={seat: hand}, stock=drawn, pots=(pot, ""))
    draw(t)
    lay(t, seat, f"{hand} {drawn}")
    lay(t, seat, melds[0])
    ref = t.referee
    keep_deuce = [set(slots_of(ref, seat, melds[1]))]
    offered = [
        m
        for m in legal_moves(t.views[seat])
        if isinstance(m, LayDown) and [set(x) for x in m.melds] == keep_deuce
    ]
    assert (
        offered
        and ref.last_card_problem(
            seat, slots_of(ref, seat, last)[0], [tm.meld for tm in ref.melds[seat & 1]]
        )
        is None
    )


@pytest.mark.parametrize("preset", ["playingcards", "italian"])
def test_team_with_pot_but_no_going_out_buraco_may_not_empty_its_hand(preset: str) -> None:
    # playingcards needs a clean buraco (a dirty one is not enough); italian needs any buraco.
    rules = get_preset(preset).with_overrides({"hand_size": 3})
    seat = _first(0, preset)
    pot = (
        "3H 4H 5H 6H 7H 8H 2D 8C 9C TC 5D"
        if preset == "playingcards"
        else "3H 4H 5H 6H 8C 9C TC JC QC KC 5D"
    )
    t = table_for(rules, hands={seat: "3S 4S 5S"}, stock="6S", pots=(pot, ""))
    draw(t)
    lay(t, seat, "3S 4S 5S 6S")
    first = "3H 4H 5H 6H 7H 8H 2D" if preset == "playingcards" else "3H 4H 5H 6H"
    lay(t, seat, first)
    ref = t.referee
    with pytest.raises(IllegalMove) as e:
        lay(t, seat, "8C 9C TC" if preset == "playingcards" else "8C 9C TC JC QC KC")
    assert e.value.code is IllegalMoveCode.CANNOT_EMPTY_HAND
    assert not ref.ended


# ---------------------------------------------------------------- pot taken but unplayed


@pytest.mark.parametrize(
    ("preset", "hand", "drawn", "opening"),
    [
        ("classic", "AS AH AD KC", "AC", "AS AH AD AC"),
        ("playingcards", "3S 4S 5S KC", "6S", "3S 4S 5S 6S"),
    ],
)
def test_pot_taken_but_unplayed_minus_100_cards_not_counted(
    preset: str, hand: str, drawn: str, opening: str
) -> None:
    rules = get_preset(preset).with_overrides({"hand_size": 4})
    seat = _first(0, preset)
    t = table_for(rules, hands={seat: hand}, stock=drawn)
    ref = t.referee
    draw(t)
    lay(t, seat, opening)
    discard(t, seat, "KC")  # the pot is taken
    team = seat & 1
    # The taker then only draws and discards the card drawn: the pot stays unplayed.
    _play_out(t)
    assert ref.end_reason is EndReason.STOCK_EXHAUSTED and ref.pot_unplayed(team)
    got = _lines(t, team)
    assert got["pot_unplayed"] == -100 and got["pot_not_taken"] == 0
    pot = set(ref.layout.pots[0])
    assert pot <= set(ref.hands[seat])
    pts = rules.face_points
    left = [s for x in (team, team + 2) for s in ref.hands[x] if s not in pot]
    assert got["hand_penalty"] == -sum(pts[f.code] for s in left if (f := ref.face(s)))


def test_pot_discarded_from_counts_as_played() -> None:
    # us: one card of the pot discarded is enough for the pot not to be "unplayed".
    rules = get_preset("us").with_overrides({"hand_size": 4})
    t = table_for(rules, hands={1: "AS AH AD KC"}, stock="AC")
    ref = t.referee
    draw(t)
    lay(t, 1, "AS AH AD AC")
    discard(t, 1, "KC")
    _play_out(t, stop=lambda: ref.turn == 1)
    draw(t)
    t.push(Discard(1, ref.layout.pots[0][0]))
    assert not ref.pot_unplayed(1)
    _play_out(t)
    assert _lines(t, 1)["pot_unplayed"] == 0


def test_fechado_pot_only_discarded_from_is_not_played() -> None:
    # 004:34, 004:73: a pot "not used in any game on the table" is penalised; a discard is no
    # game on the table.
    rules = get_preset("fechado").with_overrides({"hand_size": 4})
    t = table_for(rules, hands={1: "AS AH AD KC"}, stock="AC")
    ref = t.referee
    draw(t)
    lay(t, 1, "AS AH AD AC")
    discard(t, 1, "KC")  # the pot is taken
    _play_out(t, stop=lambda: ref.turn == 1)
    draw(t)
    t.push(Discard(1, ref.layout.pots[0][0]))
    assert ref.pot_unplayed(1)
    _play_out(t)
    assert _lines(t, 1)["pot_unplayed"] == -100


# ---------------------------------------------------------------- stock runs out


def test_stock_out_italian_hand_ends_both_teams_never_took_the_pot() -> None:
    t = table_for("italian", face_up="9D")
    ref = t.referee
    _play_out(t)
    assert ref.end_reason is EndReason.STOCK_EXHAUSTED and ref.pot_owner == [-1, -1]
    for team in (0, 1):
        got = _lines(t, team)
        assert got["going_out"] == 0 and got["pot_not_taken"] == -100


def test_stock_out_italian_last_turn_may_still_take_the_pot_and_then_ends() -> None:
    rules = get_preset("italian").with_overrides({"hand_size": 3})
    perm = build_perm(rules, 0, hands={3: "3S 4S KC"}, face_up="9D")
    layout = deal_layout(rules)
    last = layout.stock[-1]  # 73 stock cards, seats 3, 2, 1, 0 in turn: seat 3 draws the last
    mine = set(layout.hands[0])
    src = next(
        s
        for s in range(rules.deck_size)
        if s not in mine and s != layout.face_up and str(face_of(perm[s])) == "5S"
    )
    perm[last], perm[src] = perm[src], perm[last]
    t = LocalTable(HandSetup(rules, 0), perm)
    ref = t.referee
    _play_out(t, stop=lambda: len(ref.stock) == 1)
    assert ref.turn == 3 and len(ref.hands[3]) == 3
    draw(t)
    assert ref.last_turn and _phase(t) is Phase.PLAY
    lay(t, 3, "3S 4S 5S")
    discard(t, 3, "KC")  # empties the hand: the pot is taken, and the turn, the last, is over
    assert ref.ended and ref.end_reason is EndReason.STOCK_EXHAUSTED and ref.went_out == -1
    assert ref.team_pot == [-1, 0] and ref.hands[3] == list(layout.pots[0])
    got = _lines(t, 1)
    assert got["going_out"] == 0 and got["pot_not_taken"] == 0 and got["pot_unplayed"] == 0
    pts = rules.face_points
    left = [f for x in (1, 3) for s in ref.hands[x] if (f := ref.face(s)) is not None]
    assert len(left) == 11 + 3 and got["hand_penalty"] == -sum(pts[f.code] for f in left)
    assert _lines(t, 0)["pot_not_taken"] == -100


@pytest.mark.parametrize("preset", ["us", "classic", "playingcards", "fechado"])
def test_stock_out_pot_becomes_stock_after_one_team_took_its_pot(preset: str) -> None:
    h1, d1, _, _ = _opening(preset)
    rules = get_preset(preset).with_overrides({"hand_size": 4})
    first = _first(0, preset)
    t = table_for(rules, hands={first: h1}, stock=d1)
    ref = t.referee
    draw(t)
    lay(t, first, " ".join([*h1.split()[:3], d1]))
    discard(t, first, "KC")
    assert ref.pot_owner == [first & 1, -1]
    _play_out(t, stop=lambda: ref.pot_owner[1] != -1)
    assert ref.pot_owner[1] == POT_IS_STOCK and sorted(ref.stock) == sorted(ref.layout.pots[1])
    # No pot is left for the other team: it may not go out, even with a clean buraco, so it
    # may not empty a hand (for fechado, decided between 004:24 and 004:32 in docs/rules.md).
    other = 1 - (first & 1)
    buraco = evaluate_meld(parse_cards("3S 4S 5S 6S 7S 8S 9S"), rules)
    assert buraco.is_buraco and buraco.clean
    assert ref.emptying_outcome(other, [buraco]) == -1
    assert ref.emptying_outcome(first, [buraco]) == GO_OUT
    _play_out(t)
    assert ref.end_reason is EndReason.STOCK_EXHAUSTED and ref.went_out == -1
    mine, theirs = _lines(t, first & 1), _lines(t, 1 - (first & 1))
    assert mine["pot_not_taken"] == 0 and theirs["pot_not_taken"] == -100
    assert mine["going_out"] == 0 and theirs["going_out"] == 0


# ---------------------------------------------------------------- cut of 22


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("dealer", [1, 2])
def test_cut_of_22_bonus_goes_to_the_cutters_team(preset: str, dealer: int) -> None:
    bonus = 100 if preset in ("us", "classic") else 0
    cutter_team = ((dealer - 1) % 4) & 1  # the opponent on the dealer's right
    rules = get_preset(preset)
    for cut, expect in ((22, bonus), (23, 0)):
        t = table_for(rules, dealer=dealer, cut=cut)
        _play_out(t)
        assert _lines(t, cutter_team)["cut_22"] == expect
        assert _lines(t, 1 - cutter_team)["cut_22"] == 0


# ---------------------------------------------------------------- direction, dealer


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_play_direction_and_first_player(preset: str, dealer: int) -> None:
    t = table_for(preset, dealer=dealer)
    step = 1 if CLOCKWISE[preset] else -1
    seen = []
    for _ in range(5):
        seat = draw(t)
        seen.append(seat)
        t.push(Discard(seat, t.referee.hands[seat][-1]))
    assert seen == [(dealer + step * k) % 4 for k in range(1, 6)]


def _synthetic(setup: HandSetup, a: int, b: int) -> HandResult:
    def lines(points: int) -> tuple[ScoreLine, ...]:
        return tuple(ScoreLine(n, points if n == "melds" else 0) for n in LINE_NAMES)

    return HandResult(setup, EndReason.STOCK_EXHAUSTED, None, (lines(a), lines(b)))


@pytest.mark.parametrize("preset", PRESETS)
def test_dealer_passes_clockwise_and_first_player_follows(preset: str) -> None:
    rules = get_preset(preset)
    m = Match(rules, first_dealer=2)
    dealers, firsts = [], []
    for _ in range(5):
        setup = m.next_setup()
        t = LocalTable(setup, list(range(rules.deck_size)))
        dealers.append(setup.dealer)
        firsts.append(t.referee.turn)
        m.record(_synthetic(setup, 0, 0))
    assert dealers == [2, 3, 0, 1, 2]
    assert firsts == [_first(d, preset) for d in dealers]


# ---------------------------------------------------------------- long clean runs


@pytest.mark.parametrize(
    ("preset", "run", "bonus"),
    [
        ("playingcards", "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", 1000),
        ("fechado", "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", 1000),
        ("playingcards", "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", 500),
        ("fechado", "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", 500),
        ("playingcards", "AS 2H 3S 4S 5S 6S 7S 8S 9S TS JS QS KS", 100),
        ("fechado", "AS 2H 3S 4S 5S 6S 7S 8S 9S TS JS QS KS", 100),
        ("us", "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", 200),
        ("classic", "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", 200),
        ("italian", "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", 200),
    ],
)
def test_clean_13_14_card_run_bonus_in_the_hand_score(preset: str, run: str, bonus: int) -> None:
    size = len(run.split())
    rules = get_preset(preset).with_overrides({"hand_size": size})
    seat = _first(0, preset)
    t = table_for(rules, hands={seat: run}, stock="9H")
    ref = t.referee
    draw(t)
    lay(t, seat, run)
    meld = ref.melds[seat & 1][0].meld
    assert meld.size == size and meld.clean == (bonus != 100)
    discard(t, seat, "9H")  # empties the hand: the pot is taken
    _play_out(t)
    assert _lines(t, seat & 1)["buracos"] == bonus


def test_clean_run_grown_to_14_cards_on_the_table_earns_1000() -> None:
    rules = get_preset("fechado").with_overrides({"hand_size": 13})
    t = table_for(
        rules, hands={1: "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS", 3: "AS 9C"}, stock="9H 9D 9S"
    )
    ref = t.referee
    draw(t)
    lay(t, 1, "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    assert ref.melds[1][0].meld.bonus == 500
    discard(t, 1, "9H")
    assert draw(t) == 2
    t.push(Discard(2, ref.hands[2][-1]))
    assert draw(t) == 3
    add(t, 3, 0, "AS")
    assert ref.melds[1][0].meld.size == 14 and ref.melds[1][0].meld.bonus == 1000
    discard(t, 3, "9C")
    _play_out(t)
    assert _lines(t, 1)["buracos"] == 1000


# ---------------------------------------------------------------- melds


def _check_meld(preset: str, text: str) -> IllegalMoveCode | None:
    """What the engine says to the first player laying `text` down as one meld."""
    seat = _first(0, preset)
    t = table_for(preset, hands={seat: text})
    draw(t)
    ref = t.referee
    err = ref.check(LayDown(seat, (slots_of(ref, seat, text),)))
    return None if err is None else err.code


MELD_CASES = [
    # (meld, presets where it is legal)
    ("5S 5H 5D", {"italian", "fechado"}),
    ("3C 3D 3C", {"italian"}),  # fechado: the suits of a set differ (004:48)
    ("3C 3D 3H", {"italian", "fechado"}),
    ("KS KH KD", {"us", "classic", "italian", "fechado"}),
    ("AS AH AD 2C", {"us", "classic", "italian", "fechado"}),
    ("JS JH 2D JC", {"us", "classic", "italian", "fechado"}),
    ("9S 9H 9D", {"italian", "fechado"}),
    ("2S 2H 2D", set()),
    ("3S 4S 5S", set(PRESETS)),
    ("3S 2H 5S 6S", set(PRESETS)),
    ("3S 2H 2D 6S", set()),  # two wilds
    ("AS 2S 3S 2H", set(PRESETS)),  # a natural deuce and a wild one
    ("QS KS AS", set(PRESETS)),
    ("KS AS 2S 3S", set()),  # no turning the corner
    ("3H 4H 5D", set()),
]
JOKER_CASES = [
    ("3S JK 5S", {"classic", "playingcards", "italian", "fechado"}),
    ("3S JK 2H 6S", set()),  # a joker and a wild deuce: never
    ("AS 2S 3S JK", {"classic", "playingcards", "italian", "fechado"}),
]


@pytest.mark.parametrize(
    ("preset", "meld", "legal"),
    [(p, m, ok) for m, ok in MELD_CASES for p in PRESETS]
    + [(p, m, ok) for m, ok in JOKER_CASES for p in PRESETS if p != "us"],  # us: no jokers
)
def test_melds_row_per_preset_laid_down(preset: str, meld: str, legal: set[str]) -> None:
    got = _check_meld(preset, meld)
    if preset in legal:
        assert got is None
    else:
        assert got is IllegalMoveCode.ILLEGAL_MELD


@pytest.mark.parametrize("preset", ["us", "classic", "fechado"])
def test_sets_per_rank_per_team_one(preset: str) -> None:
    seat = _first(0, preset)
    t = table_for(preset, hands={seat: "KS KH KD KC KS KH AS AH AD 9C"})
    ref = t.referee
    draw(t)
    with pytest.raises(IllegalMove) as e:
        lay(t, seat, "KS KH KD", "KC KS KH")
    assert e.value.code is IllegalMoveCode.DUPLICATE_SET
    lay(t, seat, "KS KH KD", "AS AH AD")
    with pytest.raises(IllegalMove) as e:
        lay(t, seat, "KC KS KH")
    assert e.value.code is IllegalMoveCode.DUPLICATE_SET
    extra = "KC" if get_preset(preset).set_suits_differ else "KC KS KH"
    add(t, seat, 0, extra)
    assert ref.melds[seat & 1][0].meld.size == 3 + len(extra.split())


@pytest.mark.parametrize(
    ("preset", "target"),
    [("us", 3000), ("classic", 2000), ("playingcards", 3000), ("italian", 2000), ("fechado", 3000)],
)
def test_target_score_ends_the_match(preset: str, target: int) -> None:
    m = Match(get_preset(preset))
    m.record(_synthetic(m.next_setup(), target - 1, 0))
    assert not m.over
    m.record(_synthetic(m.next_setup(), 1, 0))
    assert (m.over, m.winner) == (True, 0)


# ---------------------------------------------------------------- wild at an end of a run


@pytest.mark.parametrize("preset", PRESETS)
def test_wild_at_an_end_of_a_run_either_end_or_italian_high(preset: str) -> None:
    seat = _first(0, preset)
    t = table_for(preset, hands={seat: "7S 8S 2H 7D 8D 2C 9C"})
    ref = t.referee
    draw(t)
    low_run, high_run = slots_of(ref, seat, "7S 8S 2H"), slots_of(ref, seat, "7D 8D 2C")
    both = LayDown(seat, (low_run, high_run), (1, 2))  # 50 points or more in every preset
    err = ref.check(both)
    if preset == "italian":
        assert err is not None and err.code is IllegalMoveCode.ILLEGAL_MELD
        t.push(LayDown(seat, (low_run, high_run)))
        assert [tm.meld.start for tm in ref.melds[1]] == [7, 7]  # 7-8-W is 7-8-9
        return
    t.push(both)
    runs = [tm.meld for tm in ref.melds[seat & 1]]
    assert [(m.start, m.wild_index) for m in runs] == [(6, 0), (7, 2)]


@pytest.mark.parametrize("preset", PRESETS)
def test_wild_at_an_end_goes_low_under_a_top_ace(preset: str) -> None:
    seat = _first(0, preset)
    t = table_for(preset, scores=(0, 0), hands={seat: "QS KS AS 2H JD QD KD AD 9C"})
    ref = t.referee
    draw(t)
    # Q-K-A-W (35..45 points) with J-Q-K-A of diamonds: 50 or more for every preset.
    lay(t, seat, "QS KS AS 2H", "JD QD KD AD")
    m = ref.melds[seat & 1][0].meld
    assert (m.start, m.wild_index, m.size) == (11, 0, 4)  # the wild stands for the jack


# ---------------------------------------------------------------- going out by discarding a wild


def _italian_down_to_a_wild() -> tuple[LocalTable, LayDown]:
    """Italian: seat 3 has its pot and a buraco; every team meld already holds a wild, and the
    lay-down returned would leave only the 2D, which could neither be discarded (going out
    with a wild) nor melded."""
    rules = get_preset("italian").with_overrides({"hand_size": 3})
    t = table_for(
        rules,
        face_up="9D",
        hands={3: "3S 4S 5S"},
        stock="6S",
        pots=("7S 8S 9S JK 9H 9H 2C 4C 4D JK 2D", ""),
    )
    draw(t)
    lay(t, 3, "3S 4S 5S 6S")  # the pot, in flight
    add(t, 3, 0, "7S 8S 9S JK")  # 3S..9S and a joker: a dirty buraco, enough in italian
    ref = t.referee
    melds = (slots_of(ref, 3, "9H 9H 2C"), slots_of(ref, 3, "4C 4D JK"))
    return t, LayDown(3, melds)


def test_italian_meld_keeping_only_a_wild_is_refused_on_every_view() -> None:
    t, move = _italian_down_to_a_wild()
    ref = t.referee
    deuce = slots_of(ref, 3, "2D")[0]
    # With one card left the turn can only end by showing it, so the move shows it now ...
    assert deuce in ref.exposed_by(move)
    with pytest.raises(IllegalMove) as e:
        t.push(move)
    # ... and every view can tell it is a wild that could not go out.
    assert e.value.code is IllegalMoveCode.CANNOT_EMPTY_HAND and "wild" in e.value.message
    assert len({v.state_hash() for v in (ref, *t.views)}) == 1
    assert len(ref.hands[3]) == 7 and not ref.ended
    assert legal_moves(t.views[3])  # the player is not stuck
    lay(t, 3, "9H 9H 2C")
    discard(t, 3, "4C")
    assert ref.turn == 2


def test_last_card_is_shown_only_where_a_wild_may_not_go_out() -> None:
    t, move = _italian_down_to_a_wild()
    ref = t.referee
    assert len(ref.exposed_by(move)) == 7
    assert len(ref.exposed_by(LayDown(3, move.melds[:1]))) == 3  # five cards would be left
    rules = get_preset("fechado").with_overrides({"hand_size": 4})
    t = table_for(rules, hands={1: "3S 4S 5S 2D"}, stock="6S")
    draw(t)
    run = slots_of(t.referee, 1, "3S 4S 5S 6S")
    assert t.referee.exposed_by(LayDown(1, (run,))) == run


def test_kept_last_card_is_revealed_before_the_move_like_the_melded_ones() -> None:
    rules = get_preset("italian").with_overrides({"hand_size": 3})
    t = table_for(
        rules,
        face_up="9D",
        hands={3: "3S 4S 5S"},
        stock="6S",
        pots=("7S 8S 9S JK 9H 9H 2C 4C 4D 4H 5D", ""),
    )
    draw(t)
    lay(t, 3, "3S 4S 5S 6S")
    add(t, 3, 0, "7S 8S 9S JK")
    ref = t.referee
    move = LayDown(3, (slots_of(ref, 3, "9H 9H 2C"), slots_of(ref, 3, "4C 4D 4H")))
    five = slots_of(ref, 3, "5D")[0]
    assert ref.exposed_by(move)[-1] == five
    # A view told only about the melded cards cannot judge the move.
    blind = t.views[0].copy()
    for s in ref.exposed_by(move)[:-1]:
        blind.reveal(s, ref.known[s], public=True)
    with pytest.raises(IllegalMove) as e:
        blind.push(move)
    assert e.value.code is IllegalMoveCode.UNKNOWN_CARD
    # A referee replaying the log on its own ends in the same public state as the views.
    replay = RefereeView(ref.setup, ref.known)
    t.push(move)
    for m in ref.moves:
        replay.push(m)
    assert five in ref.public and t.views[0].card(five) == ref.known[five]
    assert len({v.state_hash() for v in (replay, ref, *t.views)}) == 1
    discard(t, 3, "5D")
    assert ref.ended and ref.went_out == 3
