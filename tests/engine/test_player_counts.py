"""Tables of two, three and six: rules, layout, sides, the three-player side change, and
properties of random hands at every player count."""

from __future__ import annotations

import dataclasses
import random

import pytest
from engine_helpers import add, discard, draw, lay, table_for
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_p2p.bots import HeuristicBot, rescore
from buraco_p2p.bots.arena import HandRecord
from buraco_p2p.cards import face_of, id_text
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandSetup,
    IllegalMove,
    IllegalMoveCode,
    LocalTable,
    Match,
    RevealError,
    deal_layout,
    legal_moves,
    match_sides,
    move_from_wire,
    play_order,
    pot_take_order,
    reveal_from_wire,
    sides_at_deal,
)
from buraco_p2p.engine.hand import POT_IS_STOCK, POT_UNTAKEN, HandState
from buraco_p2p.rules import PRESETS, RuleError, RuleSet, get_preset, parse_overrides

COUNTS = (2, 3, 4, 6)
PRESET_NAMES = tuple(PRESETS)


def rules_for(preset: str, players: int, *extra: str) -> RuleSet:
    return get_preset(preset).with_overrides(parse_overrides([f"players={players}", *extra]))


# ----------------------------------------------------------------------------- rules


@pytest.mark.parametrize(
    ("preset", "players", "deck", "pots", "teams", "cut"),
    [
        ("us", 2, 104, (11, 11), 2, 22),
        ("classic", 2, 108, (11, 11), 2, 22),
        ("classic", 3, 108, (11, 18), 3, 29),
        ("us", 3, 104, (11, 18), 3, 29),
        ("classic", 4, 108, (11, 11), 2, 22),
        ("classic", 6, 162, (11, 11, 11), 3, 33),
        ("us", 6, 156, (11, 11, 11), 3, 33),
    ],
)
def test_a_player_count_sets_deck_pots_teams_and_cut(
    preset: str, players: int, deck: int, pots: tuple[int, ...], teams: int, cut: int
) -> None:
    r = rules_for(preset, players)
    assert (r.players, r.deck_size, r.pot_sizes, r.teams, r.cut_bonus_size) == (
        players,
        deck,
        pots,
        teams,
        cut,
    )
    assert r.stock_size == deck - 11 * players - sum(pots)
    assert RuleSet.from_wire(r.to_wire()) == r
    if players != 4:
        assert r.digest() != get_preset(preset).digest()
        assert r.to_wire()["players"] == players


def test_six_players_may_play_two_teams_of_three() -> None:
    r = rules_for("classic", 6, "teams=2")
    assert r.teams == 2 and r.deck_size == 162
    assert sides_at_deal(r) == ((0, 2, 4), (1, 3, 5))
    assert sides_at_deal(rules_for("classic", 6)) == ((0, 3), (1, 4), (2, 5))
    assert r.digest() != rules_for("classic", 6).digest()
    assert pot_take_order(r) == (0, 1)  # the third pot is nobody's


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        (["players=5"], "players"),
        (["players=0"], "players"),
        (["players=1"], "players"),
        (["players=8"], "players"),
        (["teams=2"], "teams"),
        (["players=4", "teams=2"], "teams"),
        (["players=2", "teams=3"], "teams"),
        (["players=6", "teams=4"], "teams"),
        (["players=6", "deck_size=108"], "deck_size"),
        (["players=2", "deck_size=162"], "deck_size"),
        (["players=3", "pots=1"], "pots"),
        (["hands=-1"], "hands"),
        (["minutes=-5"], "minutes"),
    ],
)
def test_bad_player_counts_are_refused(overrides: list[str], key: str) -> None:
    with pytest.raises(RuleError) as e:
        get_preset("classic").with_overrides(parse_overrides(overrides))
    assert key in str(e.value)
    assert "\n" not in str(e.value)


def test_a_wire_form_with_a_bad_player_count_is_refused() -> None:
    wire = get_preset("classic").to_wire()
    for players, teams in ((5, 2), (6, 2), (4, 3), (3, 2)):
        bad = dict(wire, players=players, teams=teams)
        with pytest.raises(RuleError):
            RuleSet.from_wire(bad)


def test_back_to_four_restores_the_two_pack_deck() -> None:
    six = rules_for("classic", 6)
    assert six.with_overrides({"players": 4}) == get_preset("classic")


# ----------------------------------------------------------------------------- layout


@pytest.mark.parametrize("players", COUNTS)
@pytest.mark.parametrize("preset", ["us", "classic"])
def test_the_layout_deals_every_slot_once(preset: str, players: int) -> None:
    r = rules_for(preset, players)
    lay_ = deal_layout(r)
    assert len(lay_.hands) == players and all(len(h) == r.hand_size for h in lay_.hands)
    assert tuple(len(p) for p in lay_.pots) == r.pot_sizes
    slots = [s for h in lay_.hands for s in h] + [s for p in lay_.pots for s in p]
    slots += list(lay_.stock) + ([] if lay_.face_up is None else [lay_.face_up])
    assert sorted(slots) == list(range(r.deck_size))
    # One card at a time in play order: slot k to position k mod players.
    assert all(s % players == k for k, h in enumerate(lay_.hands) for s in h)


@pytest.mark.parametrize("players", COUNTS)
def test_play_order_visits_every_seat_from_the_dealers_neighbour(players: int) -> None:
    for dealer in range(players):
        cw = play_order(dealer, True, players)
        ccw = play_order(dealer, False, players)
        assert sorted(cw) == sorted(ccw) == list(range(players))
        assert cw[0] == (dealer + 1) % players and cw[-1] == dealer
        assert ccw[0] == (dealer - 1) % players and ccw[-1] == dealer
    with pytest.raises(ValueError):
        play_order(players, True, players)


def test_three_pack_card_ids() -> None:
    assert [id_text(i, 162) for i in (0, 52, 104, 155, 156, 161)] == [
        "AS",
        "AS#2",
        "AS#3",
        "KC#3",
        "JK",
        "JK#6",
    ]
    assert face_of(104) == face_of(156, 162)  # a joker in two packs, a joker in three
    assert face_of(104, 156) == face_of(0)
    faces = [face_of(i, 162) for i in range(162)]
    assert all(faces.count(f) == 3 for f in faces if not f.is_joker)
    assert sum(f.is_joker for f in faces) == 6


def test_move_and_reveal_wire_bounds_follow_the_table() -> None:
    assert move_from_wire([5, 5, 161], players=6, deck_size=162).seat == 5
    for bad in ([5, 6, 1], [5, 0, 162]):
        with pytest.raises(IllegalMove) as e:
            move_from_wire(bad, players=6, deck_size=162)
        assert e.value.code is IllegalMoveCode.BAD_WIRE
    with pytest.raises(IllegalMove):
        move_from_wire([0, 4])  # four seats by default
    with pytest.raises(IllegalMove):
        move_from_wire([0, 2], players=2)
    assert reveal_from_wire([161, 160, 1], 162).card_id == 160
    with pytest.raises(RevealError, match=r"0\.\.107"):
        reveal_from_wire([120, 1, 0])


# ----------------------------------------------------------------------------- sides


def test_two_players_are_each_a_side() -> None:
    r = rules_for("fechado", 2)
    t = LocalTable.shuffled(HandSetup(r, 1), random.Random(3))
    ref = t.referee
    assert ref.sides == ((0,), (1,)) and [ref.side_of(s) for s in (0, 1)] == [0, 1]
    assert ref.partners(0) == () and len(ref.melds) == 2 and ref.setup.team_scores == (0, 0)
    assert [len(h) for h in ref.hands] == [11, 11]


def test_six_players_in_three_teams_share_melds_with_the_opposite_seat() -> None:
    r = rules_for("italian", 6)
    t = LocalTable.shuffled(HandSetup(r, 0), random.Random(5))
    ref = t.referee
    assert ref.sides == ((0, 3), (1, 4), (2, 5))
    assert ref.partners(4) == (1,) and ref.side_of(5) == 2
    assert len(ref.melds) == 3 and len(ref.layout.pots) == 3
    assert ref.setup.team_scores == (0, 0, 0)


def three_player_table() -> LocalTable:
    """Italian rules, three players, four-card hands. Dealer 0 and counter-clockwise play:
    seat 2 plays first, then 1, then 0."""
    r = rules_for("italian", 3, "hand_size=4")
    return table_for(
        r,
        dealer=0,
        hands={2: "QH QS QD 7D", 1: "3S 4S 5S 9D", 0: "3H 4H 5H QC"},
        stock="KD JC KS QC 6H",
        face_up="9C",
    )


def test_the_three_player_side_change_joins_the_partners() -> None:
    t = three_player_table()
    ref = t.referee
    assert ref.order == (2, 1, 0)
    assert ref.sides == ((0,), (1,), (2,)) and ref.side_change is None
    assert ref.pot_order == (1, 0) and [len(p) for p in ref.layout.pots] == [11, 18]
    draw(t)
    lay(t, 2, "QH QS QD")
    discard(t, 2, "KD")
    draw(t)
    lay(t, 1, "3S 4S 5S")
    discard(t, 1, "JC")
    draw(t)
    lay(t, 0, "3H 4H 5H")
    discard(t, 0, "KS")
    assert [len(m) for m in ref.melds] == [1, 1, 1] and ref.opened == [True] * 3
    assert ref.side_change is None
    hash_before = ref.state_hash()
    draw(t)  # seat 2: QC
    add(t, 2, 0, "QC")
    discard(t, 2, "7D")  # the hand is empty: seat 2 takes the 18-card pot and plays alone
    change = ref.side_change
    assert change is not None and (change.solo, change.partners) == (2, (0, 1))
    assert ref.sides == ((0, 1), (2,))
    assert [ref.side_of(s) for s in range(3)] == [0, 0, 1]
    assert ref.partners(0) == (1,) and ref.partners(2) == ()
    # The partners' melds are one side's now, the lower seat's first.
    assert [str(tm.meld.faces[0]) for tm in ref.melds[0]] == ["3H", "3S"]
    assert ref.team_pot == [-1, 1] and ref.pot_owner == [POT_UNTAKEN, 1]
    assert ref.pot_taker == [-1, 2] and len(ref.hands[2]) == 18
    for v in t.views:
        assert v.side_change == change and v.sides == ref.sides
        assert v.state_hash() == ref.state_hash() != hash_before
    # Seat 1 now adds to the run seat 0 laid down, and empties its hand: the partners take the
    # 11-card pot.
    assert ref.turn == 1
    draw(t)  # 6H
    add(t, 1, 0, "6H")
    assert ref.melds[0][0].meld.size == 4
    discard(t, 1, "9D")
    assert ref.team_pot == [0, 1] and ref.pot_owner == [0, 1] and ref.pot_taker == [1, 2]
    assert len(ref.hands[1]) == 11
    rng = random.Random(4)
    for _ in range(2000):
        if t.ended:
            break
        seat = ref.turn
        t.push(rng.choice(legal_moves(t.views[seat])))
    assert t.ended
    result = t.result()
    assert result.sides == ((0, 1), (2,))
    a, b = result.totals
    assert result.match_points == (a, a, b)
    record = HandRecord(ref.setup, tuple(ref.known), tuple(ref.moves), result)
    assert rescore(record) == result.totals


def test_at_three_the_pots_become_the_stock_eleven_first() -> None:
    r = rules_for("classic", 3, "hand_size=15")
    t = table_for(r, dealer=1)
    ref = t.referee
    small, big = ref.layout.pots
    assert (len(small), len(big)) == (11, 18)
    for _ in range(200):
        if ref.pot_owner[0] == POT_IS_STOCK:
            break
        seat = draw(t)
        t.push(Discard(seat, ref.hands[seat][-1]))  # the card just drawn
    assert ref.pot_owner == [POT_IS_STOCK, POT_UNTAKEN]
    assert sorted(ref.stock) == sorted(small)
    for _ in range(200):
        if ref.pot_owner[1] == POT_IS_STOCK:
            break
        seat = draw(t)
        t.push(Discard(seat, ref.hands[seat][-1]))
    assert sorted(ref.stock) == sorted(big) and not ref.ended


# ----------------------------------------------------------------------------- properties


def _conserved(ref: HandState) -> None:
    """Every slot is in exactly one place: a hand, the stock, the pile, a meld, an untaken pot."""
    places = [s for h in ref.hands for s in h] + list(ref.stock) + list(ref.pile)
    places += [s for side in ref.melds for tm in side for s in tm.slots]
    places += [s for i, pot in enumerate(ref.layout.pots) if ref.pot_owner[i] == POT_UNTAKEN
               for s in pot]  # fmt: skip
    assert sorted(places) == list(range(ref.n))


@pytest.mark.parametrize("players", [2, 3, 6])
@settings(max_examples=6, deadline=None)
@given(
    preset=st.sampled_from(PRESET_NAMES),
    seed=st.integers(0, 2**32),
    teams=st.sampled_from([2, 3]),
)
def test_random_hands_keep_cards_turns_views_and_scores_in_order(
    players: int, preset: str, seed: int, teams: int
) -> None:
    extra = [f"teams={teams}"] if players == 6 else []
    rules = rules_for(preset, players, *extra)
    rng = random.Random(seed)
    dealer = rng.randrange(players)
    cut = rng.randint(1, rules.deck_size - 1)
    t = LocalTable.shuffled(HandSetup(rules, dealer, cut=cut), rng)
    ref = t.referee
    assert ref.turn == play_order(dealer, ref.params.clockwise, players)[0]
    _conserved(ref)
    for _ in range(3000):
        if t.ended:
            break
        seat = ref.turn
        before = ref.state_hash()
        # No seat moves out of turn, whatever it sends.
        other = (seat + 1 + rng.randrange(players - 1)) % players
        with pytest.raises(IllegalMove) as e:
            t.views[other].push(DrawStock(other))
        assert e.value.code is IllegalMoveCode.WRONG_PLAYER
        assert ref.state_hash() == before
        moves = legal_moves(t.views[seat])
        assert moves and all(m.seat == seat for m in moves)
        move = rng.choice(moves)
        # The same move sent by another seat is refused alike on every view.
        for view in (ref, t.views[other]):
            err = view.check(dataclasses.replace(move, seat=other))
            assert err is not None and err.code is IllegalMoveCode.WRONG_PLAYER
        assert ref.state_hash() == before
        was_play = ref.phase.value
        t.push(move)
        _conserved(ref)
        if not t.ended and ref.turn != seat:
            assert ref.turn == ref.next_seat[seat] and was_play != "draw"
        assert {v.state_hash() for v in t.views} == {ref.state_hash()}
        if players == 6 and teams == 2:
            assert ref.pot_owner[2] in (POT_UNTAKEN, POT_IS_STOCK)
        if players == 3 and ref.side_change is None:
            assert ref.sides == ((0,), (1,), (2,)) and all(p < 0 for p in ref.team_pot)
    assert t.ended
    result = t.result()
    assert result.sides == ref.sides
    assert all(sum(x.points for x in lines) == total
               for lines, total in zip(result.lines, result.totals, strict=True))  # fmt: skip
    record = HandRecord(ref.setup, tuple(ref.known), tuple(ref.moves), result)
    assert rescore(record) == result.totals
    assert len(result.match_points) == match_sides(rules)
    for seat in range(players):
        side_total = result.totals[result.side_of(seat)]
        assert result.match_points[seat % match_sides(rules)] == side_total


# ----------------------------------------------------------------------------- match


def _finish(match: Match, rng: random.Random) -> None:
    while not match.over and match.hand_number < 50:
        rules = match.rules
        t = LocalTable.shuffled(match.next_setup(cut=rng.randint(1, rules.deck_size - 1)), rng)
        while not t.ended:
            t.push(rng.choice(legal_moves(t.views[t.referee.turn])))
        match.record(t.result())


@pytest.mark.parametrize("players", COUNTS)
def test_a_match_keeps_one_score_per_player_or_team_and_rotates_the_deal(players: int) -> None:
    rules = rules_for("italian", players, "target_score=300")
    match = Match(rules, first_dealer=players - 1)
    assert len(match.scores) == match_sides(rules)
    rng = random.Random(players)
    dealers = []
    scores_seen = [tuple(match.scores)]
    while not match.over and match.hand_number < 50:
        dealers.append(match.dealer)
        setup = match.next_setup(cut=None)
        assert setup.team_scores == scores_seen[-1]
        t = LocalTable.shuffled(setup, rng)
        while not t.ended:
            t.push(rng.choice(legal_moves(t.views[t.referee.turn])))
        result = t.result()
        match.record(result)
        prev = scores_seen[-1]
        assert tuple(match.scores) == tuple(
            p + x for p, x in zip(prev, result.match_points, strict=True)
        )
        scores_seen.append(tuple(match.scores))
    assert match.over and match.winner is not None
    assert match.scores[match.winner] == max(match.scores) >= 300
    assert dealers == [(players - 1 + k) % players for k in range(len(dealers))]


def test_a_match_of_n_hands_ends_after_n_hands() -> None:
    rules = rules_for("italian", 2, "hands=2", "target_score=100")
    match = Match(rules)
    rng = random.Random(1)
    _finish(match, rng)
    # The target plays no part: only a tie after two hands would add one.
    assert match.hand_number == 2 or match.scores[0] == match.scores[1]
    assert match.over and match.winner == max(range(2), key=lambda i: match.scores[i])


def test_a_timed_match_ends_with_the_hand_in_progress_when_time_is_up() -> None:
    rules = rules_for("italian", 3, "minutes=30")
    match = Match(rules)
    rng = random.Random(2)
    assert not match.over
    with pytest.raises(ValueError):
        Match(get_preset("italian")).time_up()  # no time limit
    setup = match.next_setup()
    match.time_up()  # during the first hand
    assert not match.over
    t = LocalTable.shuffled(setup, rng)
    while not t.ended:
        t.push(rng.choice(legal_moves(t.views[t.referee.turn])))
    match.record(t.result())
    tied = sorted(match.scores)[-1] == sorted(match.scores)[-2]
    assert match.over != tied
    if not tied:
        assert match.winner == match.scores.index(max(match.scores))
        with pytest.raises(ValueError):
            match.next_setup()


def test_time_up_between_hands_ends_the_match_at_once() -> None:
    rules = rules_for("classic", 6, "minutes=10")
    match = Match(rules)
    _finish_one(match, random.Random(9))
    assert not match.over
    match.time_up()
    leaders = [x for x in match.scores if x == max(match.scores)]
    assert match.over == (len(leaders) == 1)


def _finish_one(match: Match, rng: random.Random) -> None:
    t = LocalTable.shuffled(match.next_setup(), rng)
    while not t.ended:
        t.push(rng.choice(legal_moves(t.views[t.referee.turn])))
    match.record(t.result())


def test_the_cut_bonus_follows_the_player_count() -> None:
    rules = rules_for("classic", 3)
    for cut, paid in ((29, True), (22, False)):
        t = LocalTable.shuffled(HandSetup(rules, 0, cut=cut), random.Random(cut))
        while not t.ended:
            t.push(random.Random(1).choice(legal_moves(t.views[t.referee.turn])))
        r = t.result()
        cutter = r.side_of(2)  # the dealer's right-hand player at three: seat 2
        assert r.line(cutter, "cut_22") == (100 if paid else 0)
        assert sum(r.line(i, "cut_22") for i in range(len(r.sides))) == (100 if paid else 0)


def test_after_the_side_change_a_bot_plays_on_its_partners_meld() -> None:
    t = three_player_table()
    ref = t.referee
    for seat, cards in ((2, "QH QS QD"), (1, "3S 4S 5S"), (0, "3H 4H 5H")):
        draw(t)
        lay(t, seat, cards)
        discard(t, seat, {2: "KD", 1: "JC", 0: "KS"}[seat])
    draw(t)
    add(t, 2, 0, "QC")
    discard(t, 2, "7D")
    assert ref.side_change is not None and ref.turn == 1
    draw(t)  # 6H: it fits only the run seat 0 laid down before the change
    view = t.views[1]
    assert view.partners(1) == (0,)
    move = HeuristicBot().choose_move(view, random.Random(0))
    assert move == AddToMeld(1, 0, (ref.hands[1][-1],))
