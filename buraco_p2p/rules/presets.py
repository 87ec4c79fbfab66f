"""The presets as data: one `RuleSet` per way people play Buraco, each value from a source.

docs/rules.md cites the source line of every value. The presets are "us", "classic",
"playingcards", "italian" and "fechado"; only the values that differ from `RuleSet`'s
defaults are written out.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from buraco_p2p.rules.choices import (
    FACE_SET_RANKS,
    HALF_TARGET,
    SET_RANKS_ALLOWED,
    BuracoShape,
    Direction,
    DiscardStart,
    GoingOut,
    OpeningCount,
    PotUnplayed,
    RuleError,
    StockOut,
    WildEnd,
)
from buraco_p2p.rules.ruleset import RuleSet

__all__ = ["PRESETS", "get_preset"]

PRESETS: Final[Mapping[str, RuleSet]] = MappingProxyType(
    {
        "us": RuleSet(
            name="us",
            deck_size=104,
            set_ranks=FACE_SET_RANKS,
            wild_end=WildEnd.EITHER,
            points_joker=30,
            points_deuce=20,
            buraco_shape=BuracoShape.RUN_OR_SET,
            clean_run_length_bonus=(),
            initial_meld_min=50,
            initial_meld_min_vulnerable=75,
            vulnerable_from=1500,
            initial_meld_failed_step=15,
            going_out=GoingOut.CLEAN_BURACO,
            discard_wild_to_go_out=True,
            pot_unplayed=PotUnplayed.PENALTY,
            target_score=3000,
            discard_start=DiscardStart.FIRST_PLAYER_PEEK,
            may_discard_lone_taken_card=True,
            must_meld_top_discard=False,
            stock_out=StockOut.POT_BECOMES_STOCK,
            cut_22_bonus=100,
            play_direction=Direction.CLOCKWISE,
        ),
        "classic": RuleSet(
            name="classic",
            deck_size=108,
            set_ranks=FACE_SET_RANKS,
            wild_end=WildEnd.EITHER,
            points_joker=30,
            points_deuce=20,
            buraco_shape=BuracoShape.RUN_OR_SET,
            clean_run_length_bonus=(),
            initial_meld_min=50,
            initial_meld_min_vulnerable=75,
            vulnerable_from=1500,
            initial_meld_failed_step=15,
            going_out=GoingOut.CLEAN_BURACO,
            discard_wild_to_go_out=True,
            pot_unplayed=PotUnplayed.PENALTY,
            target_score=2000,
            discard_start=DiscardStart.FACE_UP,
            may_discard_lone_taken_card=True,
            must_meld_top_discard=False,
            stock_out=StockOut.POT_BECOMES_STOCK,
            cut_22_bonus=100,
            play_direction=Direction.CLOCKWISE,
        ),
        "playingcards": RuleSet(
            name="playingcards",
            deck_size=108,
            set_ranks=frozenset(),
            wild_end=WildEnd.EITHER,
            points_joker=20,
            points_deuce=10,
            buraco_shape=BuracoShape.RUN,
            clean_run_length_bonus=((13, 500), (14, 1000)),
            initial_meld_min=0,
            initial_meld_min_vulnerable=75,
            vulnerable_from=HALF_TARGET,
            initial_meld_failed_step=0,
            initial_meld_counts=OpeningCount.ONE_MELD,
            going_out=GoingOut.CLEAN_BURACO,
            discard_wild_to_go_out=True,
            pot_unplayed=PotUnplayed.PENALTY,
            target_score=3000,
            discard_start=DiscardStart.FIRST_PLAYER_PEEK,
            may_discard_lone_taken_card=True,
            must_meld_top_discard=False,
            stock_out=StockOut.POT_BECOMES_STOCK,
            cut_22_bonus=0,
            play_direction=Direction.COUNTER_CLOCKWISE,
        ),
        "italian": RuleSet(
            name="italian",
            deck_size=108,
            set_ranks=SET_RANKS_ALLOWED,
            wild_end=WildEnd.HIGH,
            points_joker=30,
            points_deuce=20,
            buraco_shape=BuracoShape.RUN_OR_SET,
            clean_run_length_bonus=(),
            initial_meld_min=0,
            initial_meld_min_vulnerable=0,
            vulnerable_from=HALF_TARGET,
            initial_meld_failed_step=0,
            going_out=GoingOut.ANY_BURACO,
            discard_wild_to_go_out=False,
            pot_unplayed=PotUnplayed.COUNT,
            go_out_by_discard_only=True,
            target_score=2000,
            discard_start=DiscardStart.FACE_UP,
            may_discard_lone_taken_card=False,
            must_meld_top_discard=False,
            stock_out=StockOut.HAND_ENDS,
            cut_22_bonus=0,
            play_direction=Direction.COUNTER_CLOCKWISE,
        ),
        "fechado": RuleSet(
            name="fechado",
            deck_size=108,
            set_ranks=SET_RANKS_ALLOWED,
            wild_end=WildEnd.EITHER,
            points_joker=50,
            points_deuce=10,
            buraco_shape=BuracoShape.RUN_OR_SET,
            clean_run_length_bonus=((13, 500), (14, 1000)),
            initial_meld_min=0,
            initial_meld_min_vulnerable=0,
            vulnerable_from=HALF_TARGET,
            initial_meld_failed_step=0,
            going_out=GoingOut.CLEAN_BURACO,
            discard_wild_to_go_out=True,
            pot_unplayed=PotUnplayed.PENALTY_AND_COUNT,
            pot_played_by_discard=False,
            set_suits_differ=True,
            target_score=3000,
            discard_start=DiscardStart.NONE,
            may_discard_lone_taken_card=True,
            must_meld_top_discard=True,
            stock_out=StockOut.POT_BECOMES_STOCK,
            cut_22_bonus=0,
            play_direction=Direction.CLOCKWISE,
        ),
    }
)


def get_preset(name: str) -> RuleSet:
    """The named preset; an unknown name is a RuleError listing the valid ones."""
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise RuleError(f"unknown rule preset {name!r} (presets: {', '.join(PRESETS)})") from None
