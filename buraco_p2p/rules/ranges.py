"""What a rule set may hold: the range of every number, and what each player count implies.

Outside these bounds a hand could stall, a match never end or a score outgrow the state hash's
integers (docs/rules.md, "Ranges"); the deck, the pots and the teams follow from the player
count (2, 3, 4 or 6). `validate` runs on every `RuleSet` as it is made, whether from a preset,
an override or a peer's wire form, so no code past it meets a rule set it cannot play.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal, Protocol

from buraco_p2p.rules.choices import HALF_TARGET, SET_RANKS_ALLOWED, RuleOverrideError
from buraco_p2p.rules.values import show

__all__ = [
    "BONUS_MAX",
    "CUT_BONUS_SIZE",
    "DEFAULT_TEAMS",
    "PLAYER_COUNTS",
    "POINTS_MAX",
    "POTS_BY_COUNT",
    "RANGES",
    "RuleValues",
    "follow_player_count",
    "validate",
]

# The sane range of every numeric rule (docs/rules.md, "Ranges"). Outside them a hand could
# stall (a one-card pot taken in flight can be neither melded nor discarded), a match never
# end or no team ever open, or a score outgrow the 64-bit integers of the state hash and the
# codec: with these bounds a hand scores well under a million points either way.
POINTS_MAX: Final = 1_000
BONUS_MAX: Final = 10_000
RANGES: Final[Mapping[str, tuple[int, int]]] = MappingProxyType(
    {
        "hand_size": (1, 15),
        "pot_size": (2, 15),
        "max_wilds": (0, 1),
        "buraco_length": (3, 14),
        "points_joker": (0, POINTS_MAX),
        "points_deuce": (0, POINTS_MAX),
        "points_ace": (0, POINTS_MAX),
        "points_8_to_k": (0, POINTS_MAX),
        "points_3_to_7": (0, POINTS_MAX),
        "bonus_clean": (0, BONUS_MAX),
        "bonus_dirty": (0, BONUS_MAX),
        "initial_meld_min": (0, 200),
        "initial_meld_min_vulnerable": (0, 200),
        "initial_meld_failed_step": (0, 50),
        "vulnerable_from": (0, 100_000),
        "target_score": (1, 100_000),
        "going_out_bonus": (0, BONUS_MAX),
        "no_pot_penalty": (0, BONUS_MAX),
        "pot_unplayed_penalty": (0, BONUS_MAX),
        "cut_22_bonus": (0, BONUS_MAX),
        "solo_pot_size": (2, 30),
        "hands": (0, 1000),
        "minutes": (0, 1440),
    }
)
_NAME: Final = re.compile(r"[A-Za-z0-9_.+-]{1,64}")

PLAYER_COUNTS: Final = (2, 3, 4, 6)
# Sides at the deal by player count (six may choose 2 instead): each player at two and three,
# two partnerships at four, three at six.
DEFAULT_TEAMS: Final = {2: 2, 3: 3, 4: 2, 6: 3}
POTS_BY_COUNT: Final = {2: 2, 3: 2, 4: 2, 6: 3}
CUT_BONUS_SIZE: Final = {2: 22, 3: 29, 4: 22, 6: 33}


class RuleValues(Protocol):
    """The rules these checks read (the numbers in `RANGES` by name). `RuleSet` is one;
    naming only these keeps this module below ruleset.py, which calls it on every rule set."""

    # fmt: off
    @property
    def name(self) -> str: ...
    @property
    def players(self) -> int: ...
    @property
    def deck_size(self) -> int: ...
    @property
    def jokers(self) -> int: ...
    @property
    def packs(self) -> int: ...
    @property
    def teams(self) -> int: ...
    @property
    def pots(self) -> int: ...
    @property
    def stock_size(self) -> int: ...
    @property
    def set_ranks(self) -> frozenset[int]: ...
    @property
    def buraco_length(self) -> int: ...
    @property
    def clean_run_length_bonus(self) -> tuple[tuple[int, int], ...]: ...
    @property
    def go_out_by_discard_only(self) -> bool: ...
    @property
    def empty_hand_needs_going_out(self) -> bool: ...
    @property
    def discard_wild_to_go_out(self) -> bool: ...
    @property
    def vulnerable_from(self) -> int | Literal["half_target"]: ...
    # fmt: on


def follow_player_count(base: RuleValues, changes: dict[str, Any]) -> None:
    """Fill in what a new player count implies unless the overrides say it themselves: the
    deck (three packs at six, with the preset's jokers per pack), the pots and the teams.

    `teams` is a choice only at six; naming it at another count is refused, so that
    `teams=2` with four players is an error rather than a silent no-op.
    """
    players = changes.get("players", base.players)
    if "teams" in changes and players != 6:
        raise RuleOverrideError(
            f"teams={show(changes['teams'])}: only a table of six players chooses its teams "
            "(teams=2 or teams=3)",
            key="teams",
            value=changes["teams"],
        )
    if players == base.players or players not in PLAYER_COUNTS:
        return
    packs = 3 if players == 6 else 2
    changes.setdefault("deck_size", packs * 52 + base.jokers // base.packs * packs)
    changes.setdefault("pots", POTS_BY_COUNT[players] if base.pots else 0)
    changes.setdefault("teams", DEFAULT_TEAMS[players])


def validate(r: RuleValues) -> None:
    def need(ok: bool, key: str, why: str) -> None:
        if not ok:
            value = getattr(r, key)
            raise RuleOverrideError(f"{key}={show(value)}: {why}", key=key, value=value)

    need(
        isinstance(r.name, str) and _NAME.fullmatch(r.name) is not None,
        "name",
        "must be 1..64 letters, digits or _.+-",
    )
    need(r.players in PLAYER_COUNTS, "players", "must be 2, 3, 4 or 6")
    if r.players == 6:
        need(r.deck_size in (156, 162), "deck_size", "six players use three packs: 156 or 162")
        need(r.teams in (2, 3), "teams", "six players play in 3 teams of two or 2 teams of three")
        need(r.pots in (0, 3), "pots", "six players play with 3 pots, or 0")
    else:
        need(r.deck_size in (104, 108), "deck_size", "must be 104 or 108")
        need(
            r.teams == DEFAULT_TEAMS[r.players],
            "teams",
            f"{r.players} players start as {DEFAULT_TEAMS[r.players]} sides",
        )
        need(
            0 <= r.pots <= 2 if r.players == 4 else r.pots in (0, 2),
            "pots",
            "must be 0..2" if r.players == 4 else f"{r.players} players play with 2 pots, or 0",
        )
    for key, (lo, hi) in RANGES.items():
        value = getattr(r, key)
        if key == "vulnerable_from" and value == HALF_TARGET:
            continue
        need(type(value) is int and lo <= value <= hi, key, f"must be {lo}..{hi}")
    need(r.stock_size >= 2, "hand_size", "the deal leaves no stock")
    need(r.set_ranks <= SET_RANKS_ALLOWED, "set_ranks", "ranks must be A or 3..K")
    lengths = [length for length, _ in r.clean_run_length_bonus]
    need(
        lengths == sorted(set(lengths)) and all(r.buraco_length <= n <= 14 for n in lengths),
        "clean_run_length_bonus",
        "lengths must be increasing, between buraco_length and 14",
    )
    need(
        all(0 <= bonus <= BONUS_MAX for _, bonus in r.clean_run_length_bonus),
        "clean_run_length_bonus",
        f"bonuses must be 0..{BONUS_MAX}",
    )
    need(isinstance(r.go_out_by_discard_only, bool), "go_out_by_discard_only", "must be a bool")
    # A hand run empty without going out is refilled by one stock card at the next turn. Once
    # the team may go out, a wild drawn then can be neither discarded (that would go out on a
    # wild) nor, in general, melded (no meld may take it, or melding it would go out where
    # only a discard may), and the player would have no legal move.
    need(
        r.empty_hand_needs_going_out or r.discard_wild_to_go_out,
        "empty_hand_needs_going_out",
        "a hand may run empty only where a wild may be discarded to go out"
        " (discard_wild_to_go_out=true): the one card drawn next could be a wild",
    )
    need(
        r.vulnerable_from == HALF_TARGET or isinstance(r.vulnerable_from, int),
        "vulnerable_from",
        "must be a score or half_target",
    )
