"""The levels' habits, move by move: the normal level never hoards the pile (a take lays a
card of it down in that turn, always), never fails an opening, keeps its wilds and starves the
opponents' melds; the easy level is the same player with a beginner's lapses, which show."""

from __future__ import annotations

import random

import pytest
from bot_helpers import PRESET_NAMES, play_table
from test_bot_moves import _fits_opponents, _snapshot

from buraco_p2p.bots import Bot, EasyBot, HeuristicBot, NormalBot, StrongBot
from buraco_p2p.cards import face_of
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    HandState,
    LayDown,
    LocalTable,
    Move,
    TakeDiscard,
    legal_moves,
)
from buraco_p2p.rules import get_preset, is_wildcard_face


def _pile_use(preset: str, make: type[Bot], seeds: range) -> tuple[int, int]:
    """Pile takes by seats 0 and 2 (the `make` side, against normal bots), and how many laid
    a card of the taken pile (or its twin from the other deck) down before that turn's
    discard."""
    bots: list[Bot] = [make(), NormalBot(), make(), NormalBot()]
    takes = used = 0
    taken: set[int] = set()

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal takes, used, taken
        if seat % 2:
            return
        if isinstance(move, TakeDiscard):
            takes += 1
            taken = {view.codes[view.known[s]] for s in view.pile}
        elif isinstance(move, LayDown | AddToMeld) and taken:
            slots = {s for m in move.melds for s in m} if isinstance(move, LayDown) else move.slots
            if taken.intersection(view.codes[view.known[s]] for s in slots):
                used += 1
                taken = set()
        elif isinstance(move, Discard):
            taken = set()

    for seed in seeds:
        play_table(get_preset(preset), bots, seed, watch)
    return takes, used


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_pile_the_normal_level_takes_is_used_that_turn(preset: str) -> None:
    takes, used = _pile_use(preset, NormalBot, range(4))
    assert takes >= 10
    assert used == takes


@pytest.mark.parametrize("preset", ["us", "classic", "playingcards"])
def test_the_normal_level_never_fails_an_opening(preset: str) -> None:
    opened = 0
    for seed in range(4):
        ref = play_table(get_preset(preset), [NormalBot() for _ in range(4)], seed).referee
        assert ref.failed == [0, 0]
        opened += sum(ref.opened)
    assert opened > 0


@pytest.mark.parametrize("make", [NormalBot, EasyBot])
def test_a_wild_is_discarded_only_when_every_choice_is_wild(make: type[Bot]) -> None:
    discards = 0

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal discards
        if not isinstance(move, Discard):
            return
        discards += 1
        if is_wildcard_face(face_of(view.known[move.slot])):
            options = [m for m in legal_moves(view) if isinstance(m, Discard)]
            assert all(is_wildcard_face(face_of(view.known[m.slot])) for m in options)

    for seed, preset in enumerate(PRESET_NAMES):
        play_table(get_preset(preset), [make() for _ in range(4)], seed, watch)
    assert discards > 100


def _feeding(make: type[Bot], preset: str, seeds: range) -> tuple[float, int]:
    """Share of seats 0 and 2's discards that an opposing meld could take, when they had a
    choice that fed nobody."""
    bots: list[Bot] = [make(), HeuristicBot(), make(), HeuristicBot()]
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
def test_easy_feeds_the_opponents_melds_where_normal_does_not(preset: str) -> None:
    normal, n = _feeding(NormalBot, preset, range(6))
    easy, e = _feeding(EasyBot, preset, range(6))
    assert n > 20 and e > 20
    assert normal < 0.05
    assert easy > 2 * normal and easy > 0.05  # the lapses are there, and not every move


@pytest.mark.parametrize("make", [NormalBot, EasyBot, lambda: StrongBot(think=None, samples=2)])
def test_choosing_a_move_changes_nothing_and_repeats(make: type[Bot]) -> None:
    """A level only looks: its view is untouched, and the same random state gives the same
    move (the easy level's lapses included)."""
    bots: list[Bot] = [make() for _ in range(4)]
    checked = 0

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal checked
        if checked % 3 == 0:
            before = _snapshot(view)
            first = bots[seat].choose_move(view, random.Random(checked))
            assert _snapshot(view) == before
            assert bots[seat].choose_move(view, random.Random(checked)) == first
        checked += 1

    play_table(get_preset("us"), bots, 3, watch)
    assert checked > 50
