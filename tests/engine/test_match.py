"""The match: dealer rotation, scores across hands, the target and the end."""

from __future__ import annotations

import random

import pytest
from engine_helpers import random_hand

from buraco_p2p.engine import (
    EndReason,
    HandResult,
    HandSetup,
    LocalTable,
    Match,
    ScoreLine,
)
from buraco_p2p.rules import LINE_NAMES, get_preset


def _result(setup: HandSetup, a: int, b: int) -> HandResult:
    def lines(points: int) -> tuple[ScoreLine, ...]:
        return tuple(ScoreLine(n, points if n == "melds" else 0) for n in LINE_NAMES)

    return HandResult(setup, EndReason.WENT_OUT, 0, (lines(a), lines(b)))


def _outcome(m: Match) -> tuple[bool, int | None]:
    return m.over, m.winner


def test_dealer_passes_clockwise_and_scores_add_up() -> None:
    m = Match(get_preset("us"), first_dealer=3)
    dealers = []
    for a, b in ((100, 50), (200, -100), (-30, 400)):
        setup = m.next_setup(cut=10)
        dealers.append(setup.dealer)
        assert setup.team_scores == tuple(m.scores)
        m.record(_result(setup, a, b))
    assert dealers == [3, 0, 1]
    assert m.scores == [270, 350] and m.hand_number == 3 and not m.over


def test_scores_before_the_hand_set_the_initial_minimum() -> None:
    m = Match(get_preset("us"))
    m.record(_result(m.next_setup(), 1500, 10))
    t = LocalTable(m.next_setup(), list(range(104)))
    assert t.referee.initial_minimum(0) == 75 and t.referee.initial_minimum(1) == 50


@pytest.mark.parametrize(("preset", "target"), [("us", 3000), ("classic", 2000), ("italian", 2000)])
def test_match_ends_when_a_team_reaches_the_target(preset: str, target: int) -> None:
    m = Match(get_preset(preset))
    m.record(_result(m.next_setup(), target - 1, 0))
    assert _outcome(m) == (False, None)
    m.record(_result(m.next_setup(), 1, 5))
    assert _outcome(m) == (True, 0)
    with pytest.raises(ValueError):
        m.next_setup()


def test_a_tie_at_the_target_is_played_out() -> None:
    m = Match(get_preset("classic"))
    m.record(_result(m.next_setup(), 2100, 2100))
    assert not m.over
    m.record(_result(m.next_setup(), 0, 10))
    assert m.winner == 1


def test_higher_score_wins_when_both_pass_the_target() -> None:
    m = Match(get_preset("classic"))
    m.record(_result(m.next_setup(), 2500, 2600))
    assert m.winner == 1


def test_a_result_of_another_hand_is_refused() -> None:
    m = Match(get_preset("us"))
    setup = m.next_setup()
    m.record(_result(setup, 10, 10))
    with pytest.raises(ValueError):
        m.record(_result(setup, 10, 10))  # the same hand again
    other = HandSetup(get_preset("classic"), m.dealer, (10, 10), None, 1)
    with pytest.raises(ValueError):
        m.record(_result(other, 1, 1))
    assert m.scores == [10, 10]


def test_impossible_cut_and_dealer_are_refused() -> None:
    with pytest.raises(ValueError):
        Match(get_preset("us"), first_dealer=4)
    with pytest.raises(ValueError):
        Match(get_preset("us")).next_setup(cut=104)


@pytest.mark.parametrize("preset", ["us", "italian"])
def test_a_whole_match_of_random_hands(preset: str) -> None:
    rules = get_preset(preset).with_overrides({"target_score": 600})
    m = Match(rules, first_dealer=1)
    rng = random.Random(preset)
    while not m.over and m.hand_number < 40:
        setup = m.next_setup(cut=rng.randint(1, rules.deck_size - 1))
        t = LocalTable.shuffled(setup, rng)
        random_hand(t, rng)
        result = t.result()
        before = list(m.scores)
        m.record(result)
        assert m.scores == [before[0] + result.totals[0], before[1] + result.totals[1]]
    assert m.over
    assert max(m.scores) >= 600 and m.winner == (0 if m.scores[0] > m.scores[1] else 1)
    assert [r.setup.dealer for r in m.results] == [(1 + i) % 4 for i in range(len(m.results))]


def test_check_time_is_a_single_clock_for_a_match_in_one_process() -> None:
    timed = Match(get_preset("classic").with_overrides({"minutes": 2}))
    assert not timed.check_time(119.9) and not timed.time_is_up
    assert timed.check_time(120.0) and timed.time_is_up
    assert timed.check_time(0.0)  # once up, the time stays up
    untimed = Match(get_preset("classic"))
    assert not untimed.check_time(10**9) and not untimed.time_is_up
