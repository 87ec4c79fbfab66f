"""Shared helpers for the bot tests: a hand played bot by bot on a `LocalTable`."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from buraco_p2p.bots import Bot
from buraco_p2p.engine import HandSetup, HandState, LocalTable, Move, random_permutation
from buraco_p2p.rules import RuleSet

PRESET_NAMES = ("us", "classic", "playingcards", "italian", "fechado")

# Called before each move with the table, the seat to move, its view and the chosen move.
Watcher = Callable[[LocalTable, int, HandState, Move], None]


def setup_for(rules: RuleSet, rng: random.Random) -> HandSetup:
    cut = rng.randint(1, rules.deck_size - 1) if rules.cut_22_bonus else None
    return HandSetup(rules, rng.randrange(rules.players), (), cut, 0)


def play_table(
    rules: RuleSet,
    bots: Sequence[Bot],
    seed: int,
    watch: Watcher | None = None,
    max_moves: int = 20_000,
) -> LocalTable:
    """Play one hand; every bot decides from its own `PlayerView` only."""
    rng = random.Random(seed)
    setup = setup_for(rules, rng)
    table = LocalTable(setup, random_permutation(rules, rng))
    rngs = [random.Random(rng.getrandbits(64)) for _ in range(rules.players)]
    for _ in range(max_moves):
        if table.ended:
            return table
        seat = table.referee.turn
        view = table.views[seat]
        move = bots[seat].choose_move(view, rngs[seat])
        if watch is not None:
            watch(table, seat, view, move)
        table.push(move)
    raise AssertionError(f"hand did not end within {max_moves} moves")
