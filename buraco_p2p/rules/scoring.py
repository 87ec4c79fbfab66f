"""Scoring a hand for one team, as named lines so the engine and the UI show one breakdown."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from buraco_p2p.cards import Card
from buraco_p2p.rules.choices import PotUnplayed
from buraco_p2p.rules.melds import Meld
from buraco_p2p.rules.ruleset import RuleSet

# The line names, in the order they are reported.
MELDS: Final = "melds"
BURACOS: Final = "buracos"
GOING_OUT: Final = "going_out"
HAND_PENALTY: Final = "hand_penalty"
POT_NOT_TAKEN: Final = "pot_not_taken"
POT_UNPLAYED: Final = "pot_unplayed"
CUT_22: Final = "cut_22"
LINE_NAMES: Final = (MELDS, BURACOS, GOING_OUT, HAND_PENALTY, POT_NOT_TAKEN, POT_UNPLAYED, CUT_22)


@dataclass(frozen=True, slots=True)
class ScoreLine:
    """One named part of a team's hand score; `points` is signed (penalties are negative)."""

    name: str
    points: int
    detail: str = ""


def card_points(face: Card, rules: RuleSet) -> int:
    """Points of one face under a preset (melded: plus; left in hand: minus)."""
    return rules.face_points[face.code]


def cards_points(faces: Iterable[Card], rules: RuleSet) -> int:
    table = rules.face_points
    return sum(table[f.code] for f in faces)


def melds_points(melds: Iterable[Meld]) -> int:
    """Card points of the melds on a team's table (their bonuses are counted apart)."""
    return sum(m.card_points for m in melds)


def buraco_bonuses(melds: Iterable[Meld]) -> int:
    return sum(m.bonus for m in melds)


def score_team_hand(
    rules: RuleSet,
    *,
    melds: Sequence[Meld],
    cards_in_hands: Iterable[Card],
    took_pot: bool,
    went_out: bool,
    unplayed_pot: Sequence[Card] | None = None,
    cut_22: bool = False,
) -> tuple[ScoreLine, ...]:
    """A team's score lines for one finished hand, every line in `LINE_NAMES` order.

    `cards_in_hands` are both partners' cards at the end, except a taken pot none of whose
    cards was played: that pot goes in `unplayed_pot` and the preset decides what it costs.
    `went_out` is true for the team whose player closed the hand (not when the stock ran out).
    """
    hand = list(cards_in_hands)
    if unplayed_pot is not None and not took_pot:
        raise ValueError("an unplayed pot needs took_pot=True")
    counted_pot: list[Card] = []
    pot_line = 0
    pot_detail = ""
    if unplayed_pot is not None:
        mode = rules.pot_unplayed
        if mode in (PotUnplayed.PENALTY, PotUnplayed.PENALTY_AND_COUNT):
            pot_line = -rules.pot_unplayed_penalty
            pot_detail = f"pot of {len(unplayed_pot)} cards taken, none played"
        if mode in (PotUnplayed.COUNT, PotUnplayed.PENALTY_AND_COUNT):
            counted_pot = list(unplayed_pot)
    buracos = [m for m in melds if m.bonus]
    clean = sum(1 for m in buracos if m.clean)
    in_hand = hand + counted_pot
    lines = (
        ScoreLine(MELDS, melds_points(melds), f"{sum(m.size for m in melds)} cards melded"),
        ScoreLine(
            BURACOS,
            buraco_bonuses(melds),
            f"{clean} clean, {len(buracos) - clean} dirty" if buracos else "",
        ),
        ScoreLine(GOING_OUT, rules.going_out_bonus if went_out else 0, ""),
        ScoreLine(
            HAND_PENALTY,
            -cards_points(in_hand, rules),
            f"{len(in_hand)} cards left" if in_hand else "",
        ),
        ScoreLine(
            POT_NOT_TAKEN,
            0 if took_pot else -rules.no_pot_penalty,
            "" if took_pot else "the team never took its pot",
        ),
        ScoreLine(POT_UNPLAYED, pot_line, pot_detail),
        ScoreLine(
            CUT_22,
            rules.cut_22_bonus if cut_22 else 0,
            f"cut exactly {rules.cut_bonus_size} cards" if cut_22 and rules.cut_22_bonus else "",
        ),
    )
    return lines


def total(lines: Iterable[ScoreLine]) -> int:
    return sum(line.points for line in lines)
