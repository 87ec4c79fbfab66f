"""The values a hand is described with: its setup, its phases and end reasons, where a slot
lies, a meld on a side's table, the three-player side change, and how many scores a match keeps.

Kept apart from the state machine so that every layer of the hand, the scoring, the match and
the move generator can name them without importing the machine itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final

from buraco_p2p.rules import Meld, RuleSet

# Locations of a slot: 0..5 the hand of that seat, then these.
STOCK: Final = 8
PILE: Final = 9
TABLE: Final = 10  # 10..12: the melds of side 0..2
POT: Final = 16  # 16..18: the pots

POT_UNTAKEN: Final = -1
POT_IS_STOCK: Final = -2

# What emptying a hand does.
TAKE_POT: Final = 0
GO_OUT: Final = 1
EMPTY: Final = 2  # only where the rules let a hand run empty without going out


class Phase(Enum):
    DRAW = "draw"  # the player to move must draw from the stock or take the pile
    FIRST_CHOICE = "first_choice"  # first card drawn (us, playingcards): keep it or turn it up
    PLAY = "play"  # meld, add, discard
    ENDED = "ended"


class EndReason(Enum):
    WENT_OUT = "went_out"
    STOCK_EXHAUSTED = "stock_exhausted"


@dataclass(frozen=True, slots=True)
class HandSetup:
    """Everything a hand depends on besides the shuffle: agreed by all peers before the deal.

    `team_scores` are the match totals before this hand, one per match side (per team at four
    and six, per player at two and three; empty: all zero); they set the initial-meld minimum.
    `cut` is the size of the cut from joint randomness (None where the preset has no cut).
    """

    rules: RuleSet
    dealer: int
    team_scores: tuple[int, ...] = ()
    cut: int | None = None
    hand_number: int = 0

    def __post_init__(self) -> None:
        if self.team_scores == () and isinstance(self.rules, RuleSet):
            object.__setattr__(self, "team_scores", (0,) * match_sides(self.rules))


@dataclass(frozen=True, slots=True)
class SideChange:
    """At three players: `solo` took the first pot and plays alone from `turn` (the count of
    turns played when it happened); `partners` are one side from then on."""

    solo: int
    partners: tuple[int, int]
    turn: int


def match_sides(rules: RuleSet) -> int:
    """How many scores a match keeps: one per player at two and three, one per team at four
    and six. Seat `s` scores in match side `s % match_sides(rules)`."""
    return rules.players if rules.players in (2, 3) else rules.teams


@dataclass(frozen=True, slots=True)
class TableMeld:
    """A meld on a team's table: the rules' `Meld` value and the slots it is made of."""

    meld: Meld
    slots: tuple[int, ...]


def team_of(seat: int) -> int:
    """The team of a seat at a four-player table; other counts ask `view.side_of(seat)`."""
    return seat & 1
