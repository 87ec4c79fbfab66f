"""What a bot is: a function from one player's view (and a random source) to a move.

A bot is handed the same `HandState` a person's client holds for that seat, never the
referee's, and answers with a move built by the public legal-move generator, so a bot seat can
run behind the networked session exactly like a human one. Randomness comes in as an argument:
the same view and the same random state give the same move, which makes self-play replayable.
"""

from __future__ import annotations

import random
from typing import Protocol, runtime_checkable

from buraco_p2p.engine import HandState, Move


class NoMoveError(RuntimeError):
    """The view offers the player to move no legal move (it lacks a reveal it should have)."""


@runtime_checkable
class Bot(Protocol):
    """A player program. `choose_move` must return a move that `view.push` accepts."""

    name: str

    def choose_move(self, view: HandState, rng: random.Random) -> Move:
        """The move of the player whose turn it is in `view` (their own view)."""
        ...
