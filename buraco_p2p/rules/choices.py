"""The vocabulary of the rules: the errors, and the choices a rule may take.

Every point where the sources disagree and the answer is not a number is one of these
enumerations; the presets (`buraco_p2p.rules.presets`) pick one member of each, the wire form
carries the member's value, and the engine branches on the member. They live apart from
`RuleSet` so that the parsing of values and the range checks can name them without importing
the class that uses them.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from functools import partial
from typing import Final

from buraco_p2p.cards import ACE, KING

__all__ = [
    "FACE_SET_RANKS",
    "HALF_TARGET",
    "SET_RANKS_ALLOWED",
    "AceMode",
    "BuracoShape",
    "Direction",
    "DiscardStart",
    "DiscardTake",
    "End",
    "GoingOut",
    "MeldKind",
    "OpeningCount",
    "PotUnplayed",
    "RuleError",
    "RuleOverrideError",
    "StockOut",
    "WildEnd",
]


class RuleError(ValueError):
    """A rule set, preset name, override or wire form that cannot be used."""


class RuleOverrideError(RuleError):
    """A `KEY=VALUE` override with an unknown key or a value the key does not accept."""

    def __init__(self, message: str, *, key: str, value: object = None) -> None:
        super().__init__(message)
        self.key = key
        self.value = value

    def __reduce__(self) -> tuple[Callable[..., RuleOverrideError], tuple[str]]:
        # The default rebuilds an exception from `args` alone, without the keyword arguments.
        return partial(type(self), key=self.key, value=self.value), (str(self),)


class MeldKind(StrEnum):
    RUN = "run"
    SET = "set"


class WildEnd(StrEnum):
    """Where a wild that is not filling a gap may stand in a run."""

    EITHER = "either"  # the player picks the low or the high end
    HIGH = "high"  # Italian: the high end, unless the run already ends in a top ace


class End(StrEnum):
    """One end of a run, as a player's choice for a wild."""

    LOW = "low"
    HIGH = "high"


class AceMode(StrEnum):
    LOW_OR_HIGH = "low_or_high"
    LOW_ONLY = "low_only"
    HIGH_ONLY = "high_only"


class BuracoShape(StrEnum):
    """Which melds of `buraco_length`+ cards count as a buraco."""

    RUN = "run"
    RUN_OR_SET = "run_or_set"


class GoingOut(StrEnum):
    """The buraco a team needs on the table before a player may go out."""

    CLEAN_BURACO = "clean_buraco"
    ANY_BURACO = "any_buraco"


class PotUnplayed(StrEnum):
    """A pot taken when the hand ends before any of its cards was played."""

    PENALTY = "penalty"  # minus the penalty; its cards are not counted
    COUNT = "count"  # its cards count as cards left in hand
    PENALTY_AND_COUNT = "penalty_and_count"  # both


class OpeningCount(StrEnum):
    """What must reach the initial meld minimum."""

    TURN = "turn"  # the card points of every meld laid down in the team's opening turn
    ONE_MELD = "one_meld"  # one meld alone


class DiscardStart(StrEnum):
    FIRST_PLAYER_PEEK = "first_player_peek"  # no pile; first player may keep or turn the top
    FACE_UP = "face_up"  # one card turned face up at the deal
    NONE = "none"  # no pile; first player just draws


class DiscardTake(StrEnum):
    WHOLE_PILE = "whole_pile"


class StockOut(StrEnum):
    POT_BECOMES_STOCK = "pot_becomes_stock"  # next untaken pot becomes the stock, else hand ends
    HAND_ENDS = "hand_ends"  # the hand ends once the last stock card's turn is over


class Direction(StrEnum):
    CLOCKWISE = "clockwise"
    COUNTER_CLOCKWISE = "counter_clockwise"


HALF_TARGET: Final = "half_target"
SET_RANKS_ALLOWED: Final = frozenset({ACE, *range(3, KING + 1)})
FACE_SET_RANKS: Final = frozenset({ACE, 11, 12, KING})
