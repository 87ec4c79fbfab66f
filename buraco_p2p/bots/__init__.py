"""Bots: players that see only their own seat's view and act only through the move API.

- `Bot`: the protocol, `choose_move(view, rng) -> Move` (the random source is passed in).
- The levels a person chooses (`LEVELS`, `make_level`): `EasyBot` (a beginner's habits and
  lapses), `NormalBot` (a partner that plays for its side) and `StrongBot` (searches sampled
  deals with the normal level playing them out, under a time budget per move).
- `HeuristicBot` ("heuristic"): the rule-of-thumb player the levels grew from, frozen as the
  baseline they are measured by; `RandomBot`: a uniformly random legal move.
- `make_bot(name)`, `BOT_NAMES`: bots by name, as the CLI spells them.
- `play_hand`, `play_match`: self-play in one process (`arena`), `rescore` to recheck a
  recorded hand's score from its log; `duel`: two players over duplicate deals.

Example::

    import random
    from buraco_p2p.bots import make_bot, play_match
    from buraco_p2p.rules import get_preset

    bots = [make_bot("normal"), make_bot("heuristic")] * 2   # seats 0..3: team 0 normal
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
from buraco_p2p.bots.baseline import HeuristicBot
from buraco_p2p.bots.easy import EasyBot
from buraco_p2p.bots.levels import (
    BOT_NAMES,
    DEFAULT_LEVEL,
    LEVELS,
    level_label,
    make_bot,
    make_level,
)
from buraco_p2p.bots.normal import NormalBot
from buraco_p2p.bots.random_bot import RandomBot
from buraco_p2p.bots.strong import DEFAULT_SAMPLES, DEFAULT_THINK, StrongBot

__all__ = [
    "BOT_NAMES",
    "DEFAULT_LEVEL",
    "DEFAULT_SAMPLES",
    "DEFAULT_THINK",
    "LEVELS",
    "Bot",
    "EasyBot",
    "HandDidNotEnd",
    "HandRecord",
    "HeuristicBot",
    "MatchRecord",
    "NoMoveError",
    "NormalBot",
    "RandomBot",
    "StrongBot",
    "level_label",
    "make_bot",
    "make_level",
    "play_hand",
    "play_match",
    "replay",
    "rescore",
]
