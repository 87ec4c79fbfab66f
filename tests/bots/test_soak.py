"""Many bot hands in every preset: nothing but `IllegalMove` ever comes out of the engine,
the five views stay in step, and every card stays accounted for."""

from __future__ import annotations

import random

import pytest
from bot_helpers import PRESET_NAMES, play_table

from buraco_p2p.bots import Bot, HeuristicBot, RandomBot
from buraco_p2p.engine import IllegalMove, LocalTable, Move, move_from_wire
from buraco_p2p.engine.hand import HandState
from buraco_p2p.rules import RuleSet, get_preset


def _mutant(move: Move, rng: random.Random, deck_size: int = 108) -> object:
    """A move's wire form with one item changed (often illegal, sometimes garbage)."""
    wire: list[object] = list(move.to_wire())
    i = rng.randrange(len(wire))
    wire[i] = rng.choice([rng.randrange(-2, deck_size + 2), None, "x", True, 1.5, [1]])
    return wire


def soak(preset: str | RuleSet, bots: list[Bot], seeds: range) -> int:
    """Play hands; at every move also try a mutated move on a copy of the referee, which
    must either apply or raise `IllegalMove`. Returns the number of mutants rejected."""
    rules = get_preset(preset) if isinstance(preset, str) else preset
    rejected = 0
    fuzz = random.Random(len(seeds))

    def watch(table: LocalTable, seat: int, view: HandState, move: Move) -> None:
        nonlocal rejected
        sim = table.referee.copy()
        try:
            wire = _mutant(move, fuzz, rules.deck_size)
            sim.push(move_from_wire(wire, players=rules.players, deck_size=rules.deck_size))
        except IllegalMove:
            rejected += 1

    for seed in seeds:
        table = play_table(rules, bots, seed, watch)
        ref = table.referee
        digest = ref.state_hash()
        assert all(v.state_hash() == digest for v in table.views)
        places = [s for hand in ref.hands for s in hand]
        places += ref.pile + ref.stock
        places += [s for team in ref.melds for tm in team for s in tm.slots]
        places += [
            s for i, pot in enumerate(ref.layout.pots) if ref.pot_owner[i] == -1 for s in pot
        ]
        assert sorted(places) == list(range(rules.deck_size))
    return rejected


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_heuristic_hands_raise_nothing_but_illegal_move(preset: str) -> None:
    assert soak(preset, [HeuristicBot() for _ in range(4)], range(4)) > 100


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_mixed_hands_raise_nothing_but_illegal_move(preset: str) -> None:
    bots: list[Bot] = [HeuristicBot(), RandomBot(), HeuristicBot(), RandomBot()]
    assert soak(preset, bots, range(2)) > 50


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_thousands_of_heuristic_hands(preset: str) -> None:
    soak(preset, [HeuristicBot() for _ in range(4)], range(100, 1100))


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_thousands_of_random_hands(preset: str) -> None:
    soak(preset, [RandomBot() for _ in range(4)], range(100, 1100))


@pytest.mark.parametrize("players", [2, 3, 6])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_hands_at_every_player_count_raise_nothing_but_illegal_move(
    preset: str, players: int
) -> None:
    rules = get_preset(preset).with_overrides({"players": players})
    bots: list[Bot] = [HeuristicBot() if s % 2 else RandomBot() for s in range(players)]
    assert soak(rules, bots, range(1)) > 10


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 6])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_hundreds_of_hands_at_every_player_count(preset: str, players: int) -> None:
    rules = get_preset(preset).with_overrides({"players": players})
    soak(rules, [HeuristicBot() for _ in range(players)], range(100, 300))
