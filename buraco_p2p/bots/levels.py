"""The levels a person picks (`--bot-level easy|normal|strong`) and bots by name.

`make_level(level, think)` is what every place that seats a bot calls: the full-screen and
line `play`, `host --bots`, `bot-peer` and `selfplay`. The strong level searches for `think`
seconds a move; with `think=None` it searches a fixed number of deals instead, which makes a
seeded self-play repeat move for move whatever the machine's speed.
"""

from __future__ import annotations

from typing import Final

from buraco_p2p.bots.base import Bot
from buraco_p2p.bots.baseline import HeuristicBot
from buraco_p2p.bots.easy import EasyBot
from buraco_p2p.bots.normal import NormalBot
from buraco_p2p.bots.random_bot import RandomBot
from buraco_p2p.bots.strong import DEFAULT_THINK, StrongBot, cores

LEVELS: Final = ("easy", "normal", "strong")
DEFAULT_LEVEL: Final = "normal"
# Every name `make_bot` knows: the levels, "heuristic" (the player from before the levels,
# frozen as the baseline) and random play.
BOT_NAMES: Final = (*LEVELS, "heuristic", "random")


def make_level(level: str, think: float | None = DEFAULT_THINK, samples: int | None = None) -> Bot:
    """A player of `level`; the strong one searches `think` seconds a move, or (None) a fixed
    number of deals (`samples`, by default `DEFAULT_SAMPLES`)."""
    if level == "easy":
        return EasyBot()
    if level == "normal":
        return NormalBot()
    if level == "strong":
        # with a budget, on every processor it may use (the deals are split among them)
        return StrongBot(think=think, samples=samples, workers=1 if think is None else cores())
    raise ValueError(f"unknown bot level {level!r} (levels: {', '.join(LEVELS)})")


def make_bot(name: str, think: float | None = DEFAULT_THINK) -> Bot:
    """A bot by name (`BOT_NAMES`); an unknown name is a `ValueError` listing the known ones."""
    if name in LEVELS:
        return make_level(name, think)
    if name == "heuristic":
        return HeuristicBot()
    if name == "random":
        return RandomBot()
    raise ValueError(f"unknown bot {name!r} (bots: {', '.join(BOT_NAMES)})")


def level_label(level: str | None) -> str:
    """How a bot seat is marked on screen: "bot" and its level where it is known."""
    return "bot" if not level else f"bot {level}"
