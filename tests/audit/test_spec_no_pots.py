"""docs/rules.md, "No pots (`pots=0`)": no pot is dealt, no side scores `pot_not_taken` or
`pot_unplayed`, a player goes out without a pot, the sides never change at three players, and
the hand ends when the stock runs out. Hands played to their end by the heuristic bot."""

from __future__ import annotations

import random

import pytest

from buraco_p2p.bots import make_bot
from buraco_p2p.engine import HandSetup, LocalTable
from buraco_p2p.rules import get_preset


@pytest.mark.parametrize("players", [2, 3, 4, 6])
@pytest.mark.parametrize("preset", ["classic", "italian", "fechado"])
def test_hands_without_pots(preset: str, players: int) -> None:
    rules = get_preset(preset).with_overrides({"players": players, "pots": 0})
    bot = make_bot("heuristic")
    went_out = 0
    for seed in range(4):
        rng = random.Random(seed)
        table = LocalTable.shuffled(HandSetup(rules, dealer=seed % players, cut=37), rng)
        assert table.referee.layout.pots == ()
        while not table.ended:
            table.push(bot.choose_move(table.views[table.referee.turn], rng))
        state = table.views[0].public_state()
        assert state[9] == [] and state[20] == []  # no pot, no side change
        result = table.result()
        for side in range(len(result.lines)):
            assert result.line(side, "pot_not_taken") == 0
            assert result.line(side, "pot_unplayed") == 0
        went_out += result.went_out is not None
        if result.went_out is None:
            assert state[7] == []  # the stock ran out: the hand's end
    assert went_out >= 1, "a hand of these seeds goes out, with no pot to take"
