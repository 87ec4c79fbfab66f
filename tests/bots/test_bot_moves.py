"""Bots push only moves the generator offers, from their own view, and play by their rules."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from bot_helpers import PRESET_NAMES, play_table

from buraco_p2p.bots import Bot, HeuristicBot, RandomBot
from buraco_p2p.cards import face_of
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    EndReason,
    HandState,
    LayDown,
    LocalTable,
    Move,
    Phase,
    TakeDiscard,
    legal_moves,
    team_of,
)
from buraco_p2p.rules import get_preset, is_wildcard_face

BOTS: dict[str, type[HeuristicBot] | type[RandomBot]] = {
    "heuristic": HeuristicBot,
    "random": RandomBot,
}


def _empties_hand(view: HandState, move: Move) -> bool:
    n = len(view.hands[view.turn])
    if isinstance(move, LayDown):
        return sum(len(m) for m in move.melds) == n
    if isinstance(move, AddToMeld):
        return len(move.slots) == n
    return isinstance(move, Discard) and n == 1


def _goes_out(view: HandState, move: Move) -> bool:
    if not _empties_hand(view, move):
        return False
    sim = view.copy()
    sim.push(move)
    return sim.end_reason is EndReason.WENT_OUT


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("kind", sorted(BOTS))
def test_bots_push_only_generated_moves_from_their_own_view(preset: str, kind: str) -> None:
    bots: list[Bot] = [BOTS[kind]() for _ in range(4)]
    checked = 0

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal checked
        assert view is table.views[seat] and view.viewer == seat
        assert move.seat == seat
        assert move in legal_moves(view)
        checked += 1

    for seed in range(2):
        table = play_table(get_preset(preset), bots, seed, watch)
        assert table.ended
    assert checked > 50


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_heuristic_goes_out_whenever_a_legal_move_does(preset: str) -> None:
    bots: list[Bot] = [HeuristicBot() for _ in range(4)]
    chances = 0

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal chances
        if view.phase is Phase.DRAW:
            return
        if any(_goes_out(view, m) for m in legal_moves(view)):
            chances += 1
            assert _goes_out(view, move), f"{move} does not go out"

    ends = []
    for seed in range(6):
        ends.append(play_table(get_preset(preset), bots, seed, watch).referee.end_reason)
    assert chances == ends.count(EndReason.WENT_OUT)


@pytest.mark.parametrize("preset", ["us", "classic", "playingcards"])
def test_heuristic_never_makes_a_failed_initial_meld(preset: str) -> None:
    bots: list[Bot] = [HeuristicBot() for _ in range(4)]
    opened = 0
    for seed in range(4):
        ref = play_table(get_preset(preset), bots, seed).referee
        assert ref.failed == [0, 0]
        opened += sum(ref.opened)
    assert opened > 0


def _fits_opponents(view: HandState, slot: int) -> bool:
    code = face_of(view.known[slot]).code
    opp = view.melds[1 - team_of(view.turn)]
    return any(view.oracle.try_extend(tm.meld, (code,)) is not None for tm in opp)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_heuristic_discards_a_wild_only_when_every_choice_is_wild(preset: str) -> None:
    bots: list[Bot] = [HeuristicBot() for _ in range(4)]
    discards = 0

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal discards
        if not isinstance(move, Discard):
            return
        discards += 1
        if is_wildcard_face(face_of(view.known[move.slot])):
            options = [m for m in legal_moves(view) if isinstance(m, Discard)]
            assert all(is_wildcard_face(face_of(view.known[m.slot])) for m in options)

    for seed in range(3):
        play_table(get_preset(preset), bots, seed, watch)
    assert discards > 20


def _feeding_rate(kind: str, preset: str, seeds: range) -> tuple[float, int]:
    """Share of a bot's discards (team 0) that an opposing meld could take, when it had a
    choice that fed nobody."""
    bots: list[Bot] = [BOTS[kind](), HeuristicBot(), BOTS[kind](), HeuristicBot()]
    fed = chances = 0

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal fed, chances
        if seat % 2 or not isinstance(move, Discard):
            return
        options = [m.slot for m in legal_moves(view) if isinstance(m, Discard)]
        if all(_fits_opponents(view, s) for s in options) or not view.melds[1]:
            return
        chances += 1
        fed += _fits_opponents(view, move.slot)

    for seed in seeds:
        play_table(get_preset(preset), bots, seed, watch)
    return fed / max(chances, 1), chances


@pytest.mark.parametrize("preset", ["us", "italian"])
def test_heuristic_feeds_opposing_melds_far_less_than_random(preset: str) -> None:
    heuristic, n_h = _feeding_rate("heuristic", preset, range(4))
    rand, n_r = _feeding_rate("random", preset, range(4))
    assert n_h > 20 and n_r > 20
    assert heuristic < 0.05
    assert rand > 3 * heuristic


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_heuristic_takes_the_pile_when_it_can_use_it(preset: str) -> None:
    """It takes the pile in every preset, and nearly always melds a card of it that turn."""
    bots: list[Bot] = [HeuristicBot() for _ in range(4)]
    takes = used = 0
    taken: set[int] = set()

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal takes, used, taken
        if isinstance(move, TakeDiscard):
            takes += 1
            taken = set(view.pile)
        elif isinstance(move, LayDown | AddToMeld) and taken:
            slots = {s for m in move.melds for s in m} if isinstance(move, LayDown) else move.slots
            if taken.intersection(slots):
                used += 1
                taken = set()
        elif isinstance(move, Discard):
            taken = set()

    for seed in range(5):
        play_table(get_preset(preset), bots, seed, watch)
    assert takes >= 20
    assert used >= 0.75 * takes


def _snapshot(view: HandState) -> tuple[object, ...]:
    return (
        view.state_hash(),
        tuple(view.known),
        tuple(tuple(h) for h in view.hands),
        tuple(view.pile),
        tuple(view.stock),
        len(view.moves),
    )


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_choosing_a_move_changes_nothing_and_repeats(preset: str) -> None:
    """A bot only looks: its view is untouched, and the same random state gives the same move."""
    bots: list[Bot] = [HeuristicBot(), RandomBot(), HeuristicBot(), RandomBot()]
    checked = 0

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal checked
        before = _snapshot(view)
        rng = random.Random(checked)
        first = bots[seat].choose_move(view, rng)
        assert _snapshot(view) == before
        assert bots[seat].choose_move(view, random.Random(checked)) == first
        checked += 1

    play_table(get_preset(preset), bots, 3, watch)
    assert checked > 50


def test_random_bot_is_uniform_over_the_legal_moves() -> None:
    bots: list[Bot] = [HeuristicBot() for _ in range(4)]
    views: list[HandState] = []

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        if len(views) < 3 and view.phase is Phase.PLAY and len(legal_moves(view)) >= 8:
            views.append(view.copy())

    play_table(get_preset("classic"), bots, 8, watch)
    assert len(views) == 3
    rng = random.Random(1)
    for view in views:
        moves = legal_moves(view)
        draws = 400 * len(moves)
        counts = Counter(RandomBot().choose_move(view, rng) for _ in range(draws))
        assert set(counts) == set(moves)
        # Each count is Binomial(draws, 1/k): mean 400, sd < 20; 6 sd either side.
        assert all(280 <= c <= 520 for c in counts.values())
