"""Playing a sampled deal out with a policy at every seat, and what the end is worth to a side.

A playout runs on a referee view (every card known, as the sampler dealt them). The policy
at each seat still reads only what that seat could know (its own hand and the public cards),
so the slots a move shows are marked public as a session would reveal them.
"""

from __future__ import annotations

import random
from typing import Final, Protocol

from buraco_p2p.engine import Discard, HandState, Move, score_hand
from buraco_p2p.engine.hand import POT_UNTAKEN

# When a playout is cut short: a side's cards in hand count against it for 1 / HAND_SHARE of
# their points (material still, a debt only if the hand ends), a pot still due for POT_DUE.
HAND_SHARE: Final = 2
POT_DUE: Final = 60


class Policy(Protocol):
    def choose_move(self, view: HandState, rng: random.Random) -> Move: ...


def playout(
    deal: HandState,
    move: Move,
    seat: int,
    policy: Policy,
    rng: random.Random,
    horizon: int | None = None,
) -> int:
    """Play `move` on a copy of `deal`, then `policy` at every seat until the hand ends (or
    `horizon` turns have ended); what it is worth to `seat`'s side (`margin`)."""
    ref = deal.copy()
    push(ref, move)
    turns = 0
    while not ref.ended and (horizon is None or turns < horizon):
        m = policy.choose_move(ref, rng)
        push(ref, m)
        if isinstance(m, Discard):
            turns += 1
    return margin(ref, seat)


def push(ref: HandState, move: Move) -> None:
    """Apply a move on a referee, making public what a session would show the table."""
    shown = ref.exposed_by(move)
    out = ref.push(move)
    ref.public.update(shown)
    ref.public.update(r.slot for r in out if r.seat is None)


def margin(ref: HandState, seat: int) -> int:
    """`seat`'s side's score less the best other side's: the hand's score where it ended,
    else an estimate (`estimate`)."""
    if ref.ended:
        result = score_hand(ref)
        totals = result.totals
        mine = result.side_of(seat)
        return totals[mine] - max(t for i, t in enumerate(totals) if i != mine)
    side = ref.seat_side[seat]
    values = [estimate(ref, t) for t in range(len(ref.sides))]
    return values[side] - max(v for t, v in enumerate(values) if t != side)


def estimate(ref: HandState, side: int) -> int:
    """What a side would score if the hand went on from here, roughly: its melds with their
    bonuses, less half its cards in hand (material still, a debt if the hand ends), less part
    of the 100 for a pot it has yet to take."""
    face = ref.codes
    known = ref.known
    points = ref.rules.face_points
    value = sum(tm.meld.card_points + tm.meld.bonus for tm in ref.melds[side])
    held = sum(points[face[known[x]]] for s in ref.sides[side] for x in ref.hands[s])
    if ref.team_pot[side] < 0 and POT_UNTAKEN in ref.pot_owner:
        value -= POT_DUE
    return value - held // HAND_SHARE
