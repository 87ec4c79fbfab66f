"""Bots: players that see only their own seat's view and act only through the move API.

- `Bot`: the protocol, `choose_move(view, rng) -> Move` (the random source is passed in).
- `RandomBot`: a uniformly random legal move; `HeuristicBot`: melds, clean buracos, the pile
  when it pays, safe discards, going out.
- `make_bot(name)`, `BOT_NAMES`: bots by name, as the CLI spells them.
- `play_hand`, `play_match`: self-play in one process (`arena`), `rescore` to recheck a
  recorded hand's score from its log.

Example::

    import random
    from buraco_p2p.bots import make_bot, play_match
    from buraco_p2p.rules import get_preset

    bots = [make_bot("heuristic"), make_bot("random")] * 2   # seats 0..3: team 0 heuristic
    record = play_match(get_preset("us"), bots, random.Random(7))
    print(record.scores, record.winner)
"""

from buraco_p2p.bots.arena import (
    HandDidNotEnd,
    HandRecord,
    MatchRecord,
    play_hand,
    play_match,
    replay,
    rescore,
)
from buraco_p2p.bots.base import Bot, NoMoveError
from buraco_p2p.bots.heuristic import HeuristicBot
from buraco_p2p.bots.random_bot import RandomBot

BOT_NAMES = ("heuristic", "random")


def make_bot(name: str) -> Bot:
    """A bot by name; an unknown name is a `ValueError` listing the known ones."""
    if name == "heuristic":
        return HeuristicBot()
    if name == "random":
        return RandomBot()
    raise ValueError(f"unknown bot {name!r} (bots: {', '.join(BOT_NAMES)})")


__all__ = [
    "BOT_NAMES",
    "Bot",
    "HandDidNotEnd",
    "HandRecord",
    "HeuristicBot",
    "MatchRecord",
    "NoMoveError",
    "RandomBot",
    "make_bot",
    "play_hand",
    "play_match",
    "replay",
    "rescore",
]
