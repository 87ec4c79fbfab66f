"""Every level plays whole hands and matches under every preset at 2, 3, 4 and 6 seats with
moves the engine accepts, and its logs verify: replayed move by move on a fresh referee and
scored again by the rules layer, and, through the session with all cryptography on, checked
by the auditor. The default run plays a hand per table size and a logged hand per level; the
full sweep (whole matches, every preset and size) is among the slow tests."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from bot_helpers import PRESET_NAMES

from buraco_p2p.audit import verify_bytes
from buraco_p2p.bots import (
    LEVELS,
    Bot,
    EasyBot,
    NormalBot,
    StrongBot,
    make_bot,
    make_level,
    play_hand,
    play_match,
    replay,
    rescore,
)
from buraco_p2p.bots.selfplay import session_match
from buraco_p2p.engine import HandSetup, match_sides, random_permutation
from buraco_p2p.logfile import encode_log
from buraco_p2p.rules import RuleSet, get_preset

# The strong level at a small search: its moves are the search's choice among legal moves
# whatever the size, and a test needs only that the choice is made and legal.
MAKERS: dict[str, Callable[[], Bot]] = {
    "easy": EasyBot,
    "normal": NormalBot,
    "strong": lambda: StrongBot(think=None, samples=2, horizon=4),
}
SIZES = (2, 3, 4, 6)


def table(preset: str, players: int, **more: int) -> RuleSet:
    return get_preset(preset).with_overrides({"players": players, **more})


def check_hand_logs(hands: tuple[object, ...]) -> None:
    """Each hand's log replays with every move validated again, to the recorded score."""
    for record in hands:
        ref = replay(record)  # type: ignore[arg-type]
        assert ref.ended
        assert rescore(record) == record.result.totals  # type: ignore[arg-type,attr-defined]


def test_the_levels_are_made_by_name() -> None:
    assert LEVELS == ("easy", "normal", "strong")
    assert [make_level(level).name for level in LEVELS] == list(LEVELS)
    assert make_bot("heuristic").name == "heuristic"  # the frozen baseline keeps its name
    with pytest.raises(ValueError, match="levels: easy, normal, strong"):
        make_level("expert")


@pytest.mark.parametrize("level", LEVELS)
def test_each_level_plays_a_hand_at_every_table_size(level: str) -> None:
    for k, players in enumerate(SIZES):
        rules = table(PRESET_NAMES[k % len(PRESET_NAMES)], players)
        rng = random.Random(f"levels/{level}/{players}")
        setup = HandSetup(rules, rng.randrange(players), (0,) * match_sides(rules))
        bots = [MAKERS[level]() for _ in range(players)]
        rngs = [random.Random(rng.getrandbits(64)) for _ in range(players)]
        record = play_hand(setup, random_permutation(rules, rng), bots, rngs)
        check_hand_logs((record,))


@pytest.mark.parametrize("level", LEVELS)
def test_a_logged_hand_at_each_level_verifies(level: str) -> None:
    rules = table("classic", 2)
    log = session_match(rules, [MAKERS[level]() for _ in range(2)], seed=3, hands=1)
    verdict = verify_bytes(encode_log([e.wire for e in log]), partial=True)
    assert verdict.code == 0, verdict


@pytest.mark.slow
@pytest.mark.parametrize("players", SIZES)
@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("level", LEVELS)
def test_whole_matches_at_every_level_preset_and_size(
    level: str, preset: str, players: int
) -> None:
    rules = table(preset, players)
    record = play_match(rules, [MAKERS[level]() for _ in range(players)], random.Random(players))
    assert record.winner is not None
    check_hand_logs(record.hands)
    log = session_match(rules, [MAKERS[level]() for _ in range(players)], seed=players, hands=1)
    verdict = verify_bytes(encode_log([e.wire for e in log]), partial=True)
    assert verdict.code == 0, verdict
