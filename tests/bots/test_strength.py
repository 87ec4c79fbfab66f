"""The heuristic bot beats the random bot (team of two against team of two, seats alternated).

The default run plays a modest sample; the 200-match figure lives in benchmarks/engine.py and
in the slow test below."""

from __future__ import annotations

import random

import pytest
from bot_helpers import PRESET_NAMES

from buraco_p2p.bots import Bot, HeuristicBot, RandomBot, play_match
from buraco_p2p.rules import get_preset


def heuristic_wins(matches: int, seed: int, target: int | None = None) -> int:
    heuristic, rand = HeuristicBot(), RandomBot()
    wins = 0
    for i in range(matches):
        rules = get_preset(PRESET_NAMES[i % len(PRESET_NAMES)])
        if target is not None:
            rules = rules.with_overrides({"target_score": target})
        team = (i // len(PRESET_NAMES)) % 2
        pair: list[Bot] = [heuristic, rand] if team == 0 else [rand, heuristic]
        record = play_match(rules, pair * 2, random.Random(seed + i))
        wins += record.winner == team
    return wins


def test_heuristic_team_beats_random_team() -> None:
    # Short matches make upsets likelier, so this sample is a harder test than full ones.
    assert heuristic_wins(20, seed=500, target=1000) >= 18


@pytest.mark.slow
def test_heuristic_team_beats_random_team_over_200_full_matches() -> None:
    assert heuristic_wins(200, seed=10_000) > 180


def heuristic_side_wins(players: int, matches: int, seed: int, target: int) -> int:
    """Matches won by the heuristic bots' match side at a table of `players`: one player
    against one or two random ones at two and three, a team against two teams at six."""
    heuristic, rand = HeuristicBot(), RandomBot()
    sides = 2 if players == 2 else 3
    wins = 0
    for i in range(matches):
        rules = get_preset(PRESET_NAMES[i % len(PRESET_NAMES)]).with_overrides(
            {"players": players, "target_score": target}
        )
        side = i % sides
        bots: list[Bot] = [heuristic if s % sides == side else rand for s in range(players)]
        wins += play_match(rules, bots, random.Random(seed + i)).winner == side
    return wins


@pytest.mark.parametrize("players", [2, 3, 6])
def test_heuristic_side_beats_random_sides_at_every_player_count(players: int) -> None:
    assert heuristic_side_wins(players, 10, seed=700, target=1500) >= 8
