"""Who sits where on the screen, for any number of seats.

The player sits at the bottom. Seats are numbered clockwise, so going clockwise from the
player the others come up the left side, across the top and down the right side, as around a
real table: at four the left-hand opponent, the partner opposite, the right-hand opponent; at
two the opponent opposite; at three one opponent on each side; at six two on the left, one at
the top and two on the right.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Places:
    """Seats by place: `left` bottom to top, `top` left to right, `right` top to bottom."""

    left: tuple[int, ...]
    top: tuple[int, ...]
    right: tuple[int, ...]


def places(players: int, me: int) -> Places:
    """Where each other seat sits, seen from seat `me` at a table of `players`."""
    if players < 2:
        raise ValueError(f"a table needs two players or more, not {players}")
    if not 0 <= me < players:
        raise ValueError(f"seat {me} is not at a table of {players}")
    others = [(me + k) % players for k in range(1, players)]
    n = len(others)
    if n % 2:  # an odd number of others: one sits opposite
        side = n // 2
        return Places(tuple(others[:side]), (others[side],), tuple(others[side + 1 :]))
    side = n // 2
    return Places(tuple(others[:side]), (), tuple(others[side:]))


def min_size(players: int) -> tuple[int, int]:
    """The smallest terminal (columns, rows) the table is drawn in for a player count."""
    if players > 4:
        return (100, 28)
    return (80, 24)
