"""A whole table in one process: a referee and the player views, fed the reveals a
networked session would feed them. For tests, bots' self-play and local games.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from buraco_p2p.engine.hand import HandSetup, PlayerView, RefereeView, RevealRequest
from buraco_p2p.engine.moves import Move
from buraco_p2p.engine.scoring import HandResult, score_hand
from buraco_p2p.rules import RuleSet


def random_permutation(rules: RuleSet, rng: random.Random) -> list[int]:
    """A shuffled deck (slot -> card id) from a caller-supplied random source."""
    perm = list(range(rules.deck_size))
    rng.shuffle(perm)
    return perm


def referee_deal(setup: HandSetup, rng: random.Random) -> RefereeView:
    """A referee view of a hand shuffled with `rng`."""
    return RefereeView(setup, random_permutation(setup.rules, rng))


class LocalTable:
    """The referee plus one `PlayerView` per seat (as many as the rules' players), kept in
    step move by move."""

    def __init__(self, setup: HandSetup, permutation: Sequence[int]) -> None:
        self.referee = RefereeView(setup, permutation)
        self.views = [PlayerView(setup, seat) for seat in range(setup.rules.players)]
        self.reveals: list[RevealRequest] = []
        self._deliver(self.referee.deal_reveals())

    @classmethod
    def shuffled(cls, setup: HandSetup, rng: random.Random) -> LocalTable:
        return cls(setup, random_permutation(setup.rules, rng))

    def _deliver(self, requests: Iterable[RevealRequest]) -> None:
        known = self.referee.known
        for r in requests:
            self.reveals.append(r)
            if r.seat is None:
                for v in self.views:
                    v.reveal(r.slot, known[r.slot], public=True)
                self.referee.reveal(r.slot, known[r.slot], public=True)
            else:
                self.views[r.seat].reveal(r.slot, known[r.slot])

    def push(self, move: Move) -> None:
        """Apply a move everywhere. An illegal move raises `IllegalMove` and changes nothing."""
        ref = self.referee
        exposed = ref.exposed_by(move)
        out = ref.push(move)
        known = ref.known
        for v in self.views:
            for s in exposed:
                v.reveal(s, known[s], public=True)
            v.push(move)
        self._deliver(out)

    @property
    def ended(self) -> bool:
        return self.referee.ended

    def result(self) -> HandResult:
        return score_hand(self.referee)
