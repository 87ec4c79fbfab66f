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
from buraco_p2p.engine.hand import EndReason, HandSetup, HandState, Phase, match_sides
from buraco_p2p.rules import LINE_NAMES, ScoreLine, score_team_hand

__all__ = ["LINE_NAMES", "HandResult", "ScoreLine", "cutter_seat", "match_sides", "score_hand"]


@dataclass(frozen=True, slots=True)
class HandResult:
    """How a hand ended and what each side scored, with the breakdown per line.

    `lines[i]` and `totals[i]` are side `i`'s, the side of the seats `sides[i]` when the hand
    ended (at four: team 0 is seats 0 and 2, team 1 seats 1 and 3).
    """

    setup: HandSetup
    end_reason: EndReason
    went_out: int | None
    lines: tuple[tuple[ScoreLine, ...], ...]
    sides: tuple[tuple[int, ...], ...] = ((0, 2), (1, 3))

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(sum(x.points for x in side) for side in self.lines)

    def side_of(self, seat: int) -> int:
        """The side `seat` was on when the hand ended."""
        return next(i for i, side in enumerate(self.sides) if seat in side)

    @property
    def match_points(self) -> tuple[int, ...]:
        """What the hand adds to each match score: per team at four and six; per player at two
        and three, each player credited with the score of the side they ended the hand on."""
        totals = self.totals
        if self.setup.rules.players in (2, 3):
            return tuple(totals[self.side_of(seat)] for seat in range(self.setup.rules.players))
        return totals

    def line(self, team: int, name: str) -> int:
        for x in self.lines[team]:
            if x.name == name:
                return x.points
        raise KeyError(name)


def cutter_seat(dealer: int, players: int = 4) -> int:
    """The player who cuts: the one on the dealer's right (seats are numbered clockwise)."""
    return (dealer - 1) % players


def score_hand(state: HandState) -> HandResult:
    """Score a finished hand. Raises `RevealError` if a card left in a hand is unknown."""
    if state.phase is not Phase.ENDED or state.end_reason is None:
        raise ValueError("the hand is not over yet")
    cut = state.setup.cut
    rules = state.rules
    cutter_team = state.side_of(cutter_seat(state.setup.dealer, rules.players))
    cut_bonus = cut == rules.cut_bonus_size
    n = state.n
    teams: list[tuple[ScoreLine, ...]] = []
    for team, seats in enumerate(state.sides):
        unplayed: set[int] = set()
        if state.pot_unplayed(team):
            unplayed = set(state.layout.pots[state.team_pot[team]])
        in_hand: list[Card] = []
        pot_cards: list[Card] = []
        for seat in seats:
            for s in state.hands[seat]:
                c = state.known[s]
                if c < 0:
                    raise RevealError(f"slot {s} (player {seat}'s hand) has not been revealed")
                (pot_cards if s in unplayed else in_hand).append(face_of(c, n))
        lines = score_team_hand(
            state.rules,
            melds=[tm.meld for tm in state.melds[team]],
            cards_in_hands=in_hand,
            took_pot=state.team_pot[team] >= 0 or not state.layout.pots,
            went_out=state.went_out >= 0 and state.side_of(state.went_out) == team,
            unplayed_pot=pot_cards if unplayed else None,
            cut_22=cut_bonus and team == cutter_team,
        )
        teams.append(lines)
    return HandResult(
        state.setup,
        state.end_reason,
        state.went_out if state.went_out >= 0 else None,
        tuple(teams),
        state.sides,
    )
