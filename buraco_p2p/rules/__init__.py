"""The rules layer: presets as data, meld validation, scoring. Pure and deterministic.

The engine and every other layer import from here; the private modules may move. Inside:
`choices` (the errors and the enumerations a rule may take), `values` (a rule's typed, wire
and text forms), `ranges` (the bounds and what a player count implies), `ruleset` (`RuleSet`,
its wire form, digest and overrides), `presets` (the presets as data), `melds`, `scoring`.
"""

from buraco_p2p.cards import Card, CardParseError, format_cards, parse_card, parse_cards
from buraco_p2p.rules.choices import (
    HALF_TARGET,
    AceMode,
    BuracoShape,
    Direction,
    DiscardStart,
    DiscardTake,
    End,
    GoingOut,
    MeldKind,
    OpeningCount,
    PotUnplayed,
    RuleError,
    RuleOverrideError,
    StockOut,
    WildEnd,
)
from buraco_p2p.rules.melds import (
    MELD_ERROR_CODES,
    IllegalMeld,
    Meld,
    check_new_meld,
    evaluate_meld,
    extend_meld,
    has_going_out_buraco,
    is_wildcard_face,
)
from buraco_p2p.rules.presets import PRESETS, get_preset
from buraco_p2p.rules.ruleset import OVERRIDABLE, RuleSet, parse_override, parse_overrides
from buraco_p2p.rules.scoring import (
    LINE_NAMES,
    ScoreLine,
    buraco_bonuses,
    card_points,
    cards_points,
    melds_points,
    score_team_hand,
    total,
)

__all__ = [
    "HALF_TARGET",
    "LINE_NAMES",
    "MELD_ERROR_CODES",
    "OVERRIDABLE",
    "PRESETS",
    "AceMode",
    "BuracoShape",
    "Card",
    "CardParseError",
    "Direction",
    "DiscardStart",
    "DiscardTake",
    "End",
    "GoingOut",
    "IllegalMeld",
    "Meld",
    "MeldKind",
    "OpeningCount",
    "PotUnplayed",
    "RuleError",
    "RuleOverrideError",
    "RuleSet",
    "ScoreLine",
    "StockOut",
    "WildEnd",
    "buraco_bonuses",
    "card_points",
    "cards_points",
    "check_new_meld",
    "evaluate_meld",
    "extend_meld",
    "format_cards",
    "get_preset",
    "has_going_out_buraco",
    "is_wildcard_face",
    "melds_points",
    "parse_card",
    "parse_cards",
    "parse_override",
    "parse_overrides",
    "score_team_hand",
    "total",
]
