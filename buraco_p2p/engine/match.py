"""A match: hands dealt in turn until a side wins by the target score, or by length.

A match keeps one score per *match side* (`match_sides(rules)`): per team at four and six, per
player at two and three (at three each player is credited the hand score of the side they
ended the hand on). Seat `s` scores in match side `s % len(match.scores)`.

How it ends:
- by default, after a hand when a match side has reached the target and the lead is not tied
  (a tie at or above the target is played out with another hand);
- with `hands=N` (a rule), after the N-th hand, the target playing no part;
- with `minutes=M` (a rule), after the hand in progress when `time_up()` is called. The engine
  reads no clock: the session decides the time is up, logs that decision so that every peer
  replays it, and calls `time_up()` at the same point of the log.
Ending by length, the leading match side wins; a tie for the lead is played out with another
hand, so a finished match always has one winner.

A hand the log proves a side walked out of (`abandon`, called by the session when a void
agreement after the deal is co-signed by that side) is not played: the side is charged the
target score, the deal does not pass and the hand does not count toward `hands`. A hand that
was never played (a void before anyone could see a card, or one that proves no fault) likewise
changes nothing here. See docs/rules.md, "Abandoning a hand".
"""

from __future__ import annotations

from collections.abc import Iterable

from buraco_p2p.engine.hand import HandSetup, match_sides
from buraco_p2p.engine.scoring import HandResult
from buraco_p2p.rules import Direction, RuleSet


class Match:
    """Scores, dealer rotation and the end of the match."""

    def __init__(self, rules: RuleSet, first_dealer: int = 0) -> None:
        if type(first_dealer) is not int or not 0 <= first_dealer < rules.players:
            raise ValueError(
                f"first dealer must be a seat 0..{rules.players - 1}, not {first_dealer}"
            )
        self.rules = rules
        self.dealer = first_dealer
        self.scores: list[int] = [0] * match_sides(rules)
        self.results: list[HandResult] = []
        self.time_is_up = False
        self._time_up_at: int | None = None
        self._started = -1
        # (hand number, the match sides charged, the points each was charged)
        self.abandoned: list[tuple[int, tuple[int, ...], int]] = []

    @property
    def hand_number(self) -> int:
        return len(self.results)

    def side_of(self, seat: int) -> int:
        """The match side (index into `scores`) of a seat."""
        return seat % len(self.scores)

    def _leader(self) -> int | None:
        best = max(self.scores)
        leaders = [i for i, x in enumerate(self.scores) if x == best]
        return leaders[0] if len(leaders) == 1 else None

    @property
    def by_length(self) -> bool:
        """Whether the match ends by length (`hands` or `minutes`) rather than by the target."""
        return bool(self.rules.hands or self.rules.minutes)

    @property
    def length_reached(self) -> bool:
        r = self.rules
        if r.hands and self.hand_number >= r.hands:
            return True
        return self._time_up_at is not None and self.hand_number > self._time_up_at

    @property
    def winner(self) -> int | None:
        """The winning match side (a team; a player at two and three) once the match is over."""
        if self.by_length:
            return self._leader() if self.length_reached else None
        if max(self.scores) >= self.rules.target_score:
            return self._leader()
        return None

    @property
    def over(self) -> bool:
        return self.winner is not None

    def time_up(self) -> None:
        """The session's decision, logged, that the time of a `minutes` match is up: the match
        ends with the hand in progress (a hand whose setup was asked for and not yet recorded),
        or, between hands, with the last hand played (played on while the lead is tied)."""
        if not self.rules.minutes:
            raise ValueError("this match has no time limit (rule minutes=0)")
        if self.time_is_up:
            return
        self.time_is_up = True
        in_progress = self._started == self.hand_number
        self._time_up_at = self.hand_number if in_progress else self.hand_number - 1

    def check_time(self, elapsed: float) -> bool:
        """For a match played in one process (self-play, the practice table), whose single
        clock every seat shares: the time is up once `elapsed` seconds reach the rule's
        minutes (then `time_up()`). Returns whether it is. A networked match decides this in
        the session instead, from every party's clock."""
        if self.rules.minutes and not self.time_is_up and elapsed >= self.rules.minutes * 60:
            self.time_up()
        return self.time_is_up

    def next_setup(self, cut: int | None = None) -> HandSetup:
        """The setup of the next hand; `cut` is the cut size from joint randomness, if any."""
        if self.over:
            raise ValueError("the match is over")
        if cut is not None and not 0 < cut < self.rules.deck_size:
            raise ValueError(f"a cut of {cut} cards is impossible")
        self._started = self.hand_number
        return HandSetup(self.rules, self.dealer, tuple(self.scores), cut, self.hand_number)

    @property
    def abandon_cost(self) -> int:
        """What abandoning a hand costs each match side of the side that walked out: the
        target score, a whole match's worth, in every preset and in a match by length too."""
        return self.rules.target_score

    def abandon(self, sides: Iterable[int]) -> tuple[int, ...]:
        """Charge each match side in `sides` `abandon_cost` for the hand in progress, which it
        walked out of; returns the sides charged, ascending. The hand is not recorded: the
        same dealer deals the next, and it does not count toward `hands`."""
        charged = tuple(sorted(set(sides)))
        if self.over:
            raise ValueError("the match is over")
        if not charged or not all(type(i) is int and 0 <= i < len(self.scores) for i in charged):
            raise ValueError(f"no such match sides: {charged}")
        cost = self.abandon_cost
        for i in charged:
            self.scores[i] -= cost
        self.abandoned.append((self.hand_number, charged, cost))
        return charged

    def record(self, result: HandResult) -> None:
        """Add a finished hand's score; the deal passes on."""
        s = result.setup
        if (
            self.over
            or s.rules != self.rules
            or s.dealer != self.dealer
            or s.hand_number != self.hand_number
            or s.team_scores != tuple(self.scores)
        ):
            raise ValueError("this result is not of the match's current hand")
        for i, points in enumerate(result.match_points):
            self.scores[i] += points
        self.results.append(result)
        step = 1 if self.rules.dealer_passes is Direction.CLOCKWISE else -1
        self.dealer = (self.dealer + step) % self.rules.players
