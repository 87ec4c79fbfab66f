"""The easy level: the normal player with a beginner's habits and lapses.

Not random play: every move is one a person learning the game makes. Habits, always: wilds
are spent as soon as they fit (no thought of keeping them for a buraco), the pot is not
hurried, what the opponents are known to hold is not watched, nor which cards they threw
away. Lapses, now and then (drawn from the random source, so a seed repeats them): the
table's melds are overlooked when discarding (a card that feeds an opponent's meld goes on
the pile), an addition to the side's melds is not seen, a pile that could be used is left
for the stock, and going out is missed for one turn.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Final

from buraco_p2p.bots.normal import NORMAL, NormalBot, Style
from buraco_p2p.engine import AddToMeld, Discard, DrawStock, HandState, Move

EASY: Final = replace(
    NORMAL,
    wild_spent=5,
    wild_spent_late=0,
    card_out_pot=0,
    pot_urgency=0,
    danger_joins_known=0,
    safe_repeat=0,
    go_out_margin=-10_000,
)
# What overlooking the table's melds leaves of the discard weights.
CARELESS: Final = replace(EASY, danger_fits_opp=0, danger_per_pile_card=0, keep_fits_own=0)
LAPSE: Final = 0.3  # the chance of each kind of lapse at a decision where it can happen


class EasyBot(NormalBot):
    """The normal level's rules of thumb with the habits and lapses of the module doc."""

    name = "easy"

    def __init__(self, style: Style = EASY, lapse: float = LAPSE) -> None:
        super().__init__(style)
        self.lapse = lapse

    def draw(self, view: HandState, moves: list[Move], rng: random.Random) -> Move:
        move = super().draw(view, moves, rng)
        stock = next((m for m in moves if isinstance(m, DrawStock)), None)
        if stock is not None and move != stock and rng.random() < self.lapse:
            return stock
        return move

    def meld_scores(
        self, view: HandState, moves: list[Move], rng: random.Random
    ) -> list[tuple[float, Move]]:
        scores = super().meld_scores(view, moves, rng)
        if rng.random() < self.lapse:
            scores = [(s, m) for s, m in scores if not isinstance(m, AddToMeld)]
        return scores

    def discard_costs(
        self, view: HandState, moves: list[Move], rng: random.Random
    ) -> list[tuple[float, Discard]]:
        if rng.random() < self.lapse:
            return NormalBot(CARELESS).discard_costs(view, moves, rng)
        return super().discard_costs(view, moves, rng)

    def wants_out(self, view: HandState, seat: int, rng: random.Random) -> bool:
        return rng.random() >= self.lapse
