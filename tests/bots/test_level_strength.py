"""The levels stand in order: the normal level beats the frozen baseline and hoards the pile
less; the easy level loses to the normal one yet plays far better than random moves (its
mistakes are a person's, not noise). Duplicate deals from fixed seeds, so the figures repeat;
the benchmark (benchmarks/bots.py) measures the same over hundreds of hands."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from buraco_p2p.bots import Bot, EasyBot, HeuristicBot, NormalBot, RandomBot
from buraco_p2p.bots.duel import PileTakes, play_duel
from buraco_p2p.rules import RuleSet, get_preset

TABLES = {"us at four": ("us", 4), "italian at two": ("italian", 2)}
DEALS = {"us at four": 16, "italian at two": 40}  # heads up the edge is smaller


def rules(name: str) -> RuleSet:
    preset, players = TABLES[name]
    return get_preset(preset).with_overrides({"players": players})


def duel(
    name: str, a: Callable[[], Bot], b: Callable[[], Bot], deals: int
) -> tuple[float, PileTakes, PileTakes]:
    result = play_duel(rules(name), a, b, deals, seed=11)
    return result.win_rate()[0], result.piles(0), result.piles(1)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_normal_beats_the_baseline_and_hoards_the_pile_less(name: str) -> None:
    wins, normal, baseline = duel(name, NormalBot, HeuristicBot, DEALS[name])
    assert wins > 0.5
    assert normal.takes > 0 and baseline.takes > 0
    assert normal.rate < baseline.rate


def test_easy_loses_to_normal_but_beats_random_play() -> None:
    against_normal, _, _ = duel("us at four", EasyBot, NormalBot, 16)
    against_random, _, _ = duel("us at four", EasyBot, RandomBot, 6)
    assert against_normal < 0.5
    assert against_random > 0.9
