"""Properties over random legal play of whole hands, in every preset."""

from __future__ import annotations

import random

import pytest
from engine_helpers import random_hand
from hypothesis import example, given, settings
from hypothesis import strategies as st

from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    HandSetup,
    HandState,
    IllegalMove,
    LayDown,
    LocalTable,
    Move,
    PlayerView,
    RefereeView,
    TakeDiscard,
    legal_moves,
    random_permutation,
    score_hand,
)
from buraco_p2p.engine.hand import PILE, POT, STOCK, TABLE
from buraco_p2p.rules import PRESETS, RuleError, RuleSet, get_preset
from buraco_p2p.rules.ranges import RANGES

PRESET_NAMES = sorted(PRESETS)


def _table(preset: str, seed: int) -> tuple[LocalTable, random.Random]:
    rng = random.Random(seed)
    rules = get_preset(preset)
    setup = HandSetup(rules, rng.randrange(4), (rng.randrange(0, 2000, 5), 0), rng.randint(1, 60))
    return LocalTable.shuffled(setup, rng), rng


def _check_accounting(v: HandState) -> None:
    """Every slot is in exactly one place, and `where` agrees with the places."""
    places: dict[int, int] = {}

    def put(slots: list[int] | tuple[int, ...], loc: int) -> None:
        for s in slots:
            assert s not in places, f"slot {s} is in two places"
            places[s] = loc

    for seat in range(4):
        put(v.hands[seat], seat)
    put(v.stock, STOCK)
    put(v.pile, PILE)
    for i, pot in enumerate(v.layout.pots):
        if v.pot_owner[i] == -1:
            put(pot, POT + i)
    for team in (0, 1):
        for tm in v.melds[team]:
            put(tm.slots, TABLE + team)
    assert sorted(places) == list(range(v.n))
    assert all(v.where[s] == loc for s, loc in places.items())
    # The faces on the table are the faces of the slots the melds are made of.
    for team in (0, 1):
        for tm in v.melds[team]:
            assert sorted(f.code for f in tm.meld.faces) == sorted(
                v.known[s] % 52 if v.known[s] < 104 else 52 for s in tm.slots
            )


@pytest.mark.parametrize("preset", PRESET_NAMES)
@settings(max_examples=4)
@given(seed=st.integers(0, 2**32))
def test_every_card_is_accounted_for_in_every_reachable_state(preset: str, seed: int) -> None:
    t, rng = _table(preset, seed)
    ref = t.referee
    _check_accounting(ref)
    while not ref.ended:
        moves = legal_moves(t.views[ref.turn])
        t.push(rng.choice(moves))
        _check_accounting(ref)


@pytest.mark.parametrize("preset", PRESET_NAMES)
@settings(max_examples=3)
@given(seed=st.integers(0, 2**32))
def test_all_views_agree_on_the_public_state_after_every_move(preset: str, seed: int) -> None:
    t, rng = _table(preset, seed)
    ref = t.referee
    seen = {ref.state_hash()}
    while not ref.ended:
        moves = legal_moves(t.views[ref.turn])
        melds = [m for m in moves if isinstance(m, LayDown | AddToMeld)]
        t.push(rng.choice(melds if melds and rng.random() < 0.7 else moves))
        hashes = {v.state_hash() for v in (ref, *t.views)}
        assert len(hashes) == 1
        assert not hashes & seen  # every move changes the public state, never back
        seen |= hashes
    # Each player view knows exactly its own cards, the public ones, and nothing else.
    for v in t.views:
        for s in range(v.n):
            if v.known[s] >= 0:
                assert v.known[s] == ref.known[s]


@pytest.mark.parametrize("preset", PRESET_NAMES)
@settings(max_examples=3)
@given(seed=st.integers(0, 2**32))
def test_replaying_the_log_on_fresh_views_gives_the_same_state_and_score(
    preset: str, seed: int
) -> None:
    t, rng = _table(preset, seed)
    log = random_hand(t, rng)
    ref = t.referee
    # The log replayed on a fresh referee: same public state, same score.
    again = RefereeView(ref.setup, ref.known)
    for m in log:
        again.push(m)
    assert again.state_hash() == ref.state_hash()
    assert score_hand(again) == t.result()
    # The log replayed on a fresh player view fed only what a session would feed it.
    for seat in range(4):
        fresh = PlayerView(ref.setup, seat)
        for r in ref.deal_reveals():
            if r.seat is None or r.seat == seat:
                fresh.reveal(r.slot, ref.known[r.slot], public=r.seat is None)
        for m in log:
            for s in fresh.exposed_by(m):
                fresh.reveal(s, ref.known[s], public=True)
            for r in fresh.push(m):
                if r.seat is None or r.seat == seat:
                    fresh.reveal(r.slot, ref.known[r.slot], public=r.seat is None)
        assert fresh.state_hash() == ref.state_hash() == t.views[seat].state_hash()
        assert score_hand(fresh) == t.result()


@pytest.mark.parametrize("preset", PRESET_NAMES)
@settings(max_examples=3)
@given(seed=st.integers(0, 2**32))
def test_scores_recomputed_from_the_final_table_equal_the_engines(
    preset: str, seed: int
) -> None:
    t, rng = _table(preset, seed)
    random_hand(t, rng)
    ref = t.referee
    rules = ref.rules
    pts = rules.face_points
    r = t.result()

    def face_points(slots: list[int] | tuple[int, ...]) -> int:
        return sum(pts[ref.known[s] % 52 if ref.known[s] < 104 else 52] for s in slots)

    for team in (0, 1):
        melded = [s for tm in ref.melds[team] for s in tm.slots]
        assert r.line(team, "melds") == face_points(melded)
        bonus = 0
        for tm in ref.melds[team]:
            m = tm.meld
            bonus += rules.buraco_bonus(m.kind, m.size, m.clean)
        assert r.line(team, "buracos") == bonus
        went_out = ref.went_out >= 0 and ref.went_out % 2 == team
        assert r.line(team, "going_out") == (100 if went_out else 0)
        assert r.line(team, "pot_not_taken") == (0 if ref.team_pot[team] >= 0 else -100)
        in_hands = [s for seat in (team, team + 2) for s in ref.hands[seat]]
        # A pot none of whose cards left the taker's hand is unplayed; where a discard does
        # not play it, a pot none of whose cards is in the team's melds.
        pot = set(ref.layout.pots[ref.team_pot[team]]) if ref.team_pot[team] >= 0 else set()
        if rules.pot_played_by_discard:
            unplayed = bool(pot) and pot <= set(in_hands)
        else:
            unplayed = bool(pot) and pot.isdisjoint(melded)
        mode = rules.pot_unplayed.value
        if unplayed and mode == "penalty":
            in_hands = [s for s in in_hands if s not in pot]
        penalty = -100 if unplayed and mode in ("penalty", "penalty_and_count") else 0
        assert r.line(team, "pot_unplayed") == penalty
        assert r.line(team, "hand_penalty") == -face_points(in_hands)
        assert r.totals[team] == sum(x.points for x in r.lines[team])


@pytest.mark.parametrize("preset", PRESET_NAMES)
@settings(max_examples=2)
@given(seed=st.integers(0, 2**32))
def test_every_generated_move_is_legal(preset: str, seed: int) -> None:
    t, rng = _table(preset, seed)
    ref = t.referee
    while not ref.ended:
        moves = legal_moves(t.views[ref.turn])
        assert moves
        assert legal_moves(ref) == moves  # the referee offers the same moves
        for m in moves:
            sim = ref.copy()
            sim.push(m)  # raises if the generator offered an illegal move
        t.push(rng.choice(moves))


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_random_play_hits_no_error_but_illegal_move(preset: str) -> None:
    rng = random.Random(preset)
    for _ in range(6):
        t, _ = _table(preset, rng.randrange(2**32))
        random_hand(t, rng, meld_bias=rng.random())
        assert t.ended
    # Random discards pushed at every point are applied or refused without a trace.
    t, _ = _table(preset, 1)
    ref = t.referee
    while not ref.ended:
        seat = ref.turn
        for _ in range(3):
            junk = Discard(rng.randrange(4), rng.randrange(ref.n))
            sim = ref.copy()
            before = sim.state_hash()
            try:
                sim.push(junk)
            except IllegalMove:
                assert sim.state_hash() == before and sim.moves == ref.moves
            else:
                assert junk in legal_moves(ref)
        t.push(rng.choice(legal_moves(t.views[seat])))


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_random_play_soak(preset: str) -> None:
    rng = random.Random(f"soak-{preset}")
    for _ in range(300):
        t, _ = _table(preset, rng.randrange(2**32))
        random_hand(t, rng, meld_bias=rng.random())
        assert t.ended
        assert len({v.state_hash() for v in (t.referee, *t.views)}) == 1


def test_random_permutation_uses_the_given_rng() -> None:
    rules = get_preset("classic")
    a = random_permutation(rules, random.Random(5))
    assert a == random_permutation(rules, random.Random(5))
    assert a != random_permutation(rules, random.Random(6))
    assert sorted(a) == list(range(108))


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_cheap_prefilters_do_not_change_the_generated_moves(
    preset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import buraco_p2p.engine.legal as legal

    rng = random.Random(f"prefilter-{preset}")
    t, _ = _table(preset, rng.randrange(2**32))
    ref = t.referee
    states = 0
    while not ref.ended:
        fast = legal_moves(ref)
        with monkeypatch.context() as m:
            m.setattr(legal, "_may_take", lambda meld, code: True)
            m.setattr(legal, "_may_join", lambda meld, code: True)
            m.setattr(legal, "_top_may_go_down", lambda view, seat, top: True)
            slow = legal_moves(ref)
        assert set(fast) == set(slow)
        states += 1
        melds = [x for x in fast if isinstance(x, LayDown | AddToMeld)]
        t.push(rng.choice(melds if melds and rng.random() < 0.7 else fast))
    assert states > 20


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [
        ("us", {"pots": 1}),
        ("classic", {"pots": 0}),
        ("italian", {"pots": 1, "hand_size": 9}),
        ("fechado", {"pot_size": 7, "going_out": "any_buraco"}),
        ("playingcards", {"going_out_needs_pot": False, "pot_in_flight": False}),
        ("us", {"empty_hand_needs_going_out": False}),
    ],
)
def test_random_play_under_overridden_rules(preset: str, overrides: dict[str, object]) -> None:
    rules = get_preset(preset).with_overrides(overrides)
    rng = random.Random(f"{preset}-{sorted(overrides.items())}")
    ends = set()
    for _ in range(4):
        setup = HandSetup(rules, rng.randrange(4), (0, 0), rng.randint(1, 60))
        t = LocalTable.shuffled(setup, rng)
        random_hand(t, rng)
        _check_accounting(t.referee)
        assert len({v.state_hash() for v in (t.referee, *t.views)}) == 1
        r = t.result()
        ends.add(r.end_reason)
        if not t.referee.layout.pots:
            assert r.line(0, "pot_not_taken") == r.line(1, "pot_not_taken") == 0
    assert ends


def _verdict(view: HandState, ref: HandState, move: Move) -> str:
    """Push `move` on a copy of `view` after the public reveals a session would make."""
    sim = view.copy()
    try:
        exposed = sim.exposed_by(move)
    except IllegalMove as e:
        return e.code.value
    for s in exposed:
        assert ref.where[s] == move.seat == ref.turn  # only the mover's own cards are shown
        sim.reveal(s, ref.known[s], public=True)
    try:
        sim.push(move)
    except IllegalMove as e:
        return e.code.value
    return "ok"


@pytest.mark.parametrize("preset", PRESET_NAMES)
@settings(max_examples=2)
@given(seed=st.integers(0, 2**32))
def test_every_view_judges_every_move_alike(preset: str, seed: int) -> None:
    """Legality depends only on public information: what the referee accepts, every player
    view accepts too (and the reverse), for legal moves and for junk alike."""
    t, rng = _table(preset, seed)
    ref = t.referee
    steps = 0
    while not ref.ended and steps < 120:
        seat = ref.turn
        hand = list(ref.hands[seat])
        legal = legal_moves(t.views[seat])
        probes: list[Move] = rng.sample(legal, min(4, len(legal)))
        for _ in range(4):
            k = rng.randint(1, min(5, len(hand)))
            pick = tuple(rng.sample(hand, k))
            probes.append(LayDown(seat, (pick,)))
            probes.append(AddToMeld(seat, rng.randrange(3), pick))
            probes.append(Discard(seat, rng.choice(hand)))
            probes.append(TakeDiscard(seat, pick[: rng.randint(0, len(pick))]))
        for move in probes:
            verdicts = {_verdict(v, ref, move) for v in (ref, *t.views)}
            assert len(verdicts) == 1, (move, verdicts)
        t.push(rng.choice(legal))
        steps += 1


def _play_with_any_accepted_lay_down(t: LocalTable, rng: random.Random) -> int:
    """Random play that also pushes any lay-down the rules accept, those under the initial
    minimum included (not offered by `legal_moves`); returns how many of those were pushed."""
    ref = t.referee
    odd = 0
    while not ref.ended:
        seat = ref.turn
        hand = list(ref.hands[seat])
        if ref.phase.value != "draw" and len(hand) > 3 and rng.random() < 0.5:
            for _ in range(20):
                pick = tuple(rng.sample(hand, 3))
                move = LayDown(seat, (pick,))
                if ref.check(move) is None:
                    t.push(move)
                    odd += 1
                    break
        moves = legal_moves(t.views[seat])
        assert moves, f"player {seat} has no legal move"
        t.push(rng.choice(moves))
        assert len({v.state_hash() for v in (ref, *t.views)}) == 1
    return odd


@pytest.mark.parametrize("preset", ["us", "classic", "playingcards"])
@settings(max_examples=3)
@given(seed=st.integers(0, 2**32))
def test_openings_built_over_several_lay_downs_keep_every_view_in_step(
    preset: str, seed: int
) -> None:
    rng = random.Random(seed)
    setup = HandSetup(get_preset(preset), rng.randrange(4), (rng.choice([0, 1500]), 0), 30)
    t = LocalTable.shuffled(setup, rng)
    _play_with_any_accepted_lay_down(t, rng)
    _check_accounting(t.referee)
    assert score_hand(t.views[0]).totals == t.result().totals


INT64 = (-(2**63), 2**63 - 1)
_BOOL_RULES = (
    "may_discard_lone_taken_card",
    "discard_wild_to_go_out",
    "go_out_by_discard_only",
    "pot_in_flight",
    "empty_hand_needs_going_out",
    "going_out_needs_pot",
    "pot_played_by_discard",
    "set_suits_differ",
)


def _bounded_rules(rng: random.Random) -> RuleSet:
    """A preset with a few rules changed to random values within their ranges (the bounds
    themselves often), retried until the deal leaves a stock."""
    base = get_preset(rng.choice(PRESET_NAMES))
    while True:
        changes: dict[str, object] = {}
        for key in rng.sample(sorted(RANGES), rng.randint(1, 6)):
            lo, hi = RANGES[key]
            changes[key] = rng.choice([lo, hi, rng.randint(lo, hi)])
        for key in rng.sample(_BOOL_RULES, rng.randint(0, 2)):
            changes[key] = rng.random() < 0.5
        try:
            return base.with_overrides(changes)
        except RuleError:
            continue


def _hand_under_bounded_rules(seed: int) -> None:
    """Every reachable state has a legal move for the seat to move (`random_hand` asserts it),
    and every score, in the hand and in the match after it, fits the 64-bit integers of the
    state hash."""
    rng = random.Random(seed)
    rules = _bounded_rules(rng)
    scores = (rng.choice([0, -50_000, rules.target_score - 1]), rng.randint(-5000, 5000))
    setup = HandSetup(rules, rng.randrange(4), scores, rng.randint(1, 60))
    t = LocalTable.shuffled(setup, rng)
    random_hand(t, rng, meld_bias=rng.random())
    totals = t.result().totals
    after = (scores[0] + totals[0], scores[1] + totals[1])
    assert all(INT64[0] <= x <= INT64[1] for x in (*totals, *after)), (rules, totals)
    nxt = HandSetup(rules, (setup.dealer + 1) % 4, after, None if setup.cut is None else 30, 1)
    LocalTable.shuffled(nxt, rng).referee.state_hash()  # packs the scores


# Derandomized: the same 25 seeds every run, so a rule combination that stalls shows up in
# the soak below (or a deliberate search), never as a random failure of the default suite.
@settings(max_examples=25, derandomize=True)
@given(seed=st.integers(0, 2**32))
@example(seed=1185)
def test_bounded_rules_never_stall_a_hand_nor_overflow_a_score(seed: int) -> None:
    _hand_under_bounded_rules(seed)


def test_a_hand_run_empty_is_never_refilled_with_a_wild_it_may_not_go_out_with() -> None:
    """Seed 1185 once drew italian with `empty_hand_needs_going_out` off: a player ran empty
    before the team's buraco, drew a deuce from the stock once the partner had completed it,
    and could neither discard it (no going out on a wild) nor meld it (no meld took a second
    wild, and melding the last card may not go out there). That combination is refused."""
    italian = get_preset("italian")
    assert italian.discard_wild_to_go_out is False
    with pytest.raises(RuleError, match="empty_hand_needs_going_out"):
        italian.with_overrides({"empty_hand_needs_going_out": False})
    with pytest.raises(RuleError, match="empty_hand_needs_going_out"):
        RuleSet.from_wire({**italian.to_wire(), "empty_hand_needs_going_out": False})
    with pytest.raises(RuleError, match="empty_hand_needs_going_out"):
        get_preset("us").with_overrides(
            {"empty_hand_needs_going_out": False, "discard_wild_to_go_out": False}
        )
    # Either rule alone is still playable.
    both = {"empty_hand_needs_going_out": False, "discard_wild_to_go_out": True}
    assert italian.with_overrides(both).empty_hand_needs_going_out is False
    us_no_wild_out = get_preset("us").with_overrides({"discard_wild_to_go_out": False})
    assert us_no_wild_out.discard_wild_to_go_out is False
    # The seed that stalled now plays its hand to the end.
    _hand_under_bounded_rules(1185)


@pytest.mark.slow
def test_bounded_rules_soak() -> None:
    rng = random.Random("bounded-rules")
    for _ in range(1500):
        _hand_under_bounded_rules(rng.randrange(2**32))
