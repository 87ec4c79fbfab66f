"""The rule parameters the engine's hot path reads, flattened from a `RuleSet` once per rule set.

Move validation then touches only ints, bools and tuples.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from buraco_p2p.rules import (
    Direction,
    DiscardStart,
    GoingOut,
    OpeningCount,
    RuleSet,
    StockOut,
)


class FirstDraw(IntEnum):
    """How the discard pile starts."""

    PEEK = 0  # no pile; the first player may turn the first stock card up and draw another
    FACE_UP = 1  # one card turned face up at the deal
    PLAIN = 2  # no pile; the first player simply draws


# Face codes (Card.code) of the wild cards: the four deuces and the joker.
WILD_CODES: Final = frozenset({1, 14, 27, 40, 52})

_FIRST_DRAW: Final = {
    DiscardStart.FIRST_PLAYER_PEEK: FirstDraw.PEEK,
    DiscardStart.FACE_UP: FirstDraw.FACE_UP,
    DiscardStart.NONE: FirstDraw.PLAIN,
}


@dataclass(frozen=True, slots=True)
class Params:
    deck_size: int
    first_draw: FirstDraw
    clockwise: bool
    one_set_per_rank: bool
    need_clean_buraco: bool
    going_out_needs_pot: bool
    empty_hand_needs_going_out: bool
    pot_in_flight: bool
    no_discard_single_taken: bool
    must_meld_top: bool
    wild_going_out: bool
    stock_out_uses_pot: bool
    go_out_by_discard_only: bool
    opening_by_turn: bool
    pot_played_by_discard: bool

    @classmethod
    def of(cls, rules: RuleSet) -> Params:
        return cls(
            deck_size=rules.deck_size,
            first_draw=_FIRST_DRAW[rules.discard_start],
            clockwise=rules.play_direction is Direction.CLOCKWISE,
            one_set_per_rank=rules.one_set_per_rank,
            need_clean_buraco=rules.going_out is GoingOut.CLEAN_BURACO,
            going_out_needs_pot=rules.going_out_needs_pot,
            empty_hand_needs_going_out=rules.empty_hand_needs_going_out,
            pot_in_flight=rules.pot_in_flight,
            no_discard_single_taken=not rules.may_discard_lone_taken_card,
            must_meld_top=rules.must_meld_top_discard,
            wild_going_out=rules.discard_wild_to_go_out,
            stock_out_uses_pot=rules.stock_out is StockOut.POT_BECOMES_STOCK,
            go_out_by_discard_only=rules.go_out_by_discard_only,
            opening_by_turn=rules.initial_meld_counts is OpeningCount.TURN,
            pot_played_by_discard=rules.pot_played_by_discard,
        )
