"""The score of a finished hand, line by line, computed from the final state of any view.

A view can score the hand once it knows every card left in a hand: the referee always does, a
player's view after the session has publicly revealed them (`HandState.end_reveals()`). The
lines themselves come from the rules layer (`score_team_hand`), so the engine and the UI show
the same breakdown.
"""

from __future__ import annotations

from dataclasses import dataclass

from buraco_p2p.cards import Card, face_of
from buraco_p2p.engine.errors import RevealError
from buraco_p2p.engine.hand import EndReason, HandSetup, HandState, Phase, team_of
from buraco_p2p.rules import LINE_NAMES, ScoreLine, score_team_hand

__all__ = ["LINE_NAMES", "HandResult", "ScoreLine", "cutter_seat", "score_hand"]


@dataclass(frozen=True, slots=True)
class HandResult:
    """How a hand ended and what each team scored, with the breakdown per line."""

    setup: HandSetup
    end_reason: EndReason
    went_out: int | None
    lines: tuple[tuple[ScoreLine, ...], tuple[ScoreLine, ...]]

    @property
    def totals(self) -> tuple[int, int]:
        return (sum(x.points for x in self.lines[0]), sum(x.points for x in self.lines[1]))

    def line(self, team: int, name: str) -> int:
        for x in self.lines[team]:
            if x.name == name:
                return x.points
        raise KeyError(name)


def cutter_seat(dealer: int) -> int:
    """The player who cuts: the opponent on the dealer's right (seats are numbered clockwise)."""
    return (dealer - 1) % 4


def score_hand(state: HandState) -> HandResult:
    """Score a finished hand. Raises `RevealError` if a card left in a hand is unknown."""
    if state.phase is not Phase.ENDED or state.end_reason is None:
        raise ValueError("the hand is not over yet")
    cut = state.setup.cut
    cutter_team = team_of(cutter_seat(state.setup.dealer))
    teams: list[tuple[ScoreLine, ...]] = []
    for team in (0, 1):
        unplayed: set[int] = set()
        if state.pot_unplayed(team):
            unplayed = set(state.layout.pots[state.team_pot[team]])
        in_hand: list[Card] = []
        pot_cards: list[Card] = []
        for seat in (team, team + 2):
            for s in state.hands[seat]:
                c = state.known[s]
                if c < 0:
                    raise RevealError(f"slot {s} (player {seat}'s hand) has not been revealed")
                (pot_cards if s in unplayed else in_hand).append(face_of(c))
        lines = score_team_hand(
            state.rules,
            melds=[tm.meld for tm in state.melds[team]],
            cards_in_hands=in_hand,
            took_pot=state.team_pot[team] >= 0 or not state.layout.pots,
            went_out=state.went_out >= 0 and team_of(state.went_out) == team,
            unplayed_pot=pot_cards if unplayed else None,
            cut_22=cut == 22 and team == cutter_team,
        )
        teams.append(lines)
    return HandResult(
        state.setup,
        state.end_reason,
        state.went_out if state.went_out >= 0 else None,
        (teams[0], teams[1]),
    )
