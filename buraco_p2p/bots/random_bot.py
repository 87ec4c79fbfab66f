"""The baseline: a uniformly random legal move."""

from __future__ import annotations

import random

from buraco_p2p.bots.base import NoMoveError
from buraco_p2p.engine import HandState, Move, legal_moves


class RandomBot:
    """Picks uniformly among the generator's legal moves.

    No bias is needed for its hands to end: every turn ends with a discard, and each turn
    draws from the stock with probability at least one half (the only alternative is the
    pile), so the stock runs out after finitely many turns with probability one. Melds only
    move cards from hands to the table, so a turn has finitely many moves.
    """

    name = "random"

    def choose_move(self, view: HandState, rng: random.Random) -> Move:
        moves = legal_moves(view)
        if not moves:
            raise NoMoveError(f"player {view.turn} has no legal move (phase {view.phase.value})")
        return moves[rng.randrange(len(moves))]
