"""Scores recomputed from a recorded log (replayed move by move, scored by the rules layer)
equal the engine's totals, and a match's score is the sum of its hands."""

from __future__ import annotations

import random

import pytest
from bot_helpers import PRESET_NAMES
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_p2p.bots import (
    Bot,
    HeuristicBot,
    RandomBot,
    play_hand,
    play_match,
    replay,
    rescore,
)
from buraco_p2p.engine import HandSetup, move_from_wire
from buraco_p2p.rules import get_preset

MIXED: list[Bot] = [HeuristicBot(), RandomBot(), HeuristicBot(), RandomBot()]


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_rescored_match_equals_engine_totals(preset: str) -> None:
    rules = get_preset(preset).with_overrides({"target_score": 1500})
    record = play_match(rules, [HeuristicBot()] * 4, random.Random(11))
    assert record.winner is not None
    scores = [0, 0]
    for hand in record.hands:
        assert rescore(hand) == hand.result.totals
        scores = [scores[0] + hand.result.totals[0], scores[1] + hand.result.totals[1]]
    assert tuple(scores) == record.scores
    assert max(scores) >= rules.target_score
    assert scores[record.winner] > scores[1 - record.winner]


@settings(max_examples=15)
@given(
    preset=st.sampled_from(PRESET_NAMES),
    seed=st.integers(min_value=0, max_value=2**32),
    dealer=st.integers(min_value=0, max_value=3),
    cut=st.sampled_from([None, 22, 23]),
    team_scores=st.sampled_from([(0, 0), (1600, 0), (0, 2500)]),
)
def test_rescore_from_log_equals_engine_for_any_hand(
    preset: str, seed: int, dealer: int, cut: int | None, team_scores: tuple[int, int]
) -> None:
    rules = get_preset(preset)
    rng = random.Random(seed)
    perm = list(range(rules.deck_size))
    rng.shuffle(perm)
    setup = HandSetup(rules, dealer, team_scores, cut, 3)
    rngs = [random.Random(rng.getrandbits(32)) for _ in range(4)]
    record = play_hand(setup, perm, MIXED, rngs)
    assert rescore(record) == record.result.totals
    # The log also survives its wire form and replays to the same end.
    again = replay(record)
    wired = replay(
        type(record)(
            setup,
            record.permutation,
            tuple(move_from_wire(m.to_wire()) for m in record.moves),
            record.result,
        )
    )
    assert again.ended and wired.state_hash() == again.state_hash()
    if cut == 22 and rules.cut_22_bonus:
        cutter_team = (dealer - 1) % 4 % 2
        assert record.result.line(cutter_team, "cut_22") == rules.cut_22_bonus


def test_a_tampered_log_does_not_rescore() -> None:
    rules = get_preset("us")
    rng = random.Random(3)
    perm = list(range(rules.deck_size))
    rng.shuffle(perm)
    record = play_hand(HandSetup(rules, 0), perm, MIXED, [random.Random(i) for i in range(4)])
    truncated = type(record)(record.setup, record.permutation, record.moves[:-1], record.result)
    with pytest.raises(ValueError, match="does not end"):
        rescore(truncated)
