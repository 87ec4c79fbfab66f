"""Tables of two, three and six: a whole practice hand by keys at each count, the seats in
their places, the scores per match side, the three-player side change shown."""

from __future__ import annotations

import asyncio

import pytest
from ui_helpers import ENTER, my_turn_or_end, play_turn, running, until

from buraco_p2p.rules import RuleSet, get_preset
from buraco_p2p.ui.seating import min_size, places


def rules_for(players: int) -> RuleSet:
    return get_preset("classic").with_overrides({"players": players})


async def one_hand(rules: RuleSet, seed: int) -> list[str]:
    """Play a hand by keys; return the chat lines the table posted during it."""
    cols, rows = min_size(rules.players)
    async with running(rules, seed=seed, cols=cols, rows=rows) as r:
        c = r.app.client
        await until(lambda: c.my_turn(), "the first turn")
        lines = r.screen().splitlines()
        assert len(lines) == rows and all(len(line) == cols for line in lines)
        p = places(rules.players, 0)
        for seat in p.top:
            assert c.snap.seats[seat].nick in lines[2]
        for seat in (*p.left, *p.right):
            assert any(c.snap.seats[seat].nick in line for line in lines[3:-8])
        scores = lines[1]
        for m in range(len(c.snap.scores)):
            assert f" {c.snap.scores[m]}" in scores
        turns = 0
        while not c.snap.hand_over:
            await my_turn_or_end(r)
            if c.snap.hand_over:
                break
            await play_turn(r)
            turns += 1
            assert turns < 300
        await until(lambda: "is over" in r.screen(), "the hand-end panel")
        text = r.screen()
        assert "hand total" in text and "match total" in text
        result = c.snap.history[-1]
        total = next(line for line in text.splitlines() if "hand total" in line)
        assert [int(x) for x in total.split()[2:]] == list(result.totals)
        chat = [line.text for line in c.snap.chat]
        await r.press(ENTER)
        await r.press("q")
        await r.press("y")
        await asyncio.wait_for(r.task, 10)
        return chat


@pytest.mark.parametrize("players", [2, 6])
def test_a_whole_hand_at_two_and_six(players: int) -> None:
    asyncio.run(one_hand(rules_for(players), seed=5))


def test_three_players_and_the_side_change() -> None:
    rules = rules_for(3)
    for seed in range(1, 8):
        chat = asyncio.run(one_hand(rules, seed=seed))
        if any(line.startswith("sides changed:") for line in chat):
            change = next(line for line in chat if line.startswith("sides changed:"))
            assert "plays alone" in change and "play together" in change
            return
    raise AssertionError("no hand of these seeds took a first pot")
