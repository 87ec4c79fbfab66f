"""A match: hands dealt in turn until a team reaches the target score."""

from __future__ import annotations

from buraco_p2p.engine.hand import HandSetup
from buraco_p2p.engine.scoring import HandResult
from buraco_p2p.rules import Direction, RuleSet


class Match:
    """Scores, dealer rotation and the end of the match.

    The match ends after a hand when a team has reached the target and the two teams are not
    tied (a tie at or above the target is played out with another hand).
    """

    def __init__(self, rules: RuleSet, first_dealer: int = 0) -> None:
        if not 0 <= first_dealer < 4:
            raise ValueError(f"first dealer must be a seat 0..3, not {first_dealer}")
        self.rules = rules
        self.dealer = first_dealer
        self.scores: list[int] = [0, 0]
        self.results: list[HandResult] = []

    @property
    def hand_number(self) -> int:
        return len(self.results)

    @property
    def winner(self) -> int | None:
        """The winning team once the match is over."""
        a, b = self.scores
        if max(a, b) >= self.rules.target_score and a != b:
            return 0 if a > b else 1
        return None

    @property
    def over(self) -> bool:
        return self.winner is not None

    def next_setup(self, cut: int | None = None) -> HandSetup:
        """The setup of the next hand; `cut` is the cut size from joint randomness, if any."""
        if self.over:
            raise ValueError("the match is over")
        if cut is not None and not 0 < cut < self.rules.deck_size:
            raise ValueError(f"a cut of {cut} cards is impossible")
        return HandSetup(
            self.rules, self.dealer, (self.scores[0], self.scores[1]), cut, self.hand_number
        )

    def record(self, result: HandResult) -> None:
        """Add a finished hand's score; the deal passes on."""
        s = result.setup
        if (
            self.over
            or s.rules != self.rules
            or s.dealer != self.dealer
            or s.hand_number != self.hand_number
            or s.team_scores != (self.scores[0], self.scores[1])
        ):
            raise ValueError("this result is not of the match's current hand")
        a, b = result.totals
        self.scores[0] += a
        self.scores[1] += b
        self.results.append(result)
        step = 1 if self.rules.dealer_passes is Direction.CLOCKWISE else -1
        self.dealer = (self.dealer + step) % 4
