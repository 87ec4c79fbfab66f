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
