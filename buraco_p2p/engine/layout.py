"""The deal layout: which slot of the shuffled deck goes where.

The shuffled deck is a sequence of slots `0..N-1` (N = 104 or 108). The deal is fixed, so every
peer knows where each slot lies without seeing any card:

- slots `0..43`: the four hands, dealt one card at a time in play order starting with the first
  player: slot `k` goes to the player at position `k % 4` of the play order;
- slots `44..54`: the first pot, `55..65`: the second pot (the first team to empty a hand takes
  the first pot, the other team the second);
- slot `66`, where the preset turns a card face up at the deal (classic, italian): that card,
  starting the discard pile;

(these numbers are for 11-card hands and two 11-card pots; a rule set that changes those sizes
shifts them the same way);
- the remaining slots, in increasing order, are the stock: the lowest is drawn first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from buraco_p2p.rules import DiscardStart, RuleSet

HAND_SIZE: Final = 11
POT_SIZE: Final = 11
PLAYERS: Final = 4


@dataclass(frozen=True, slots=True)
class DealLayout:
    """Slots per place. `hands[k]` is the hand of the k-th player in play order (0 = first)."""

    deck_size: int
    hands: tuple[tuple[int, ...], ...]
    pots: tuple[tuple[int, ...], ...]
    face_up: int | None
    stock: tuple[int, ...]


def make_layout(
    deck_size: int,
    face_up: bool,
    hand_size: int = HAND_SIZE,
    pot_size: int = POT_SIZE,
    pots: int = 2,
) -> DealLayout:
    """The layout for a deck size, with or without a face-up card at the deal."""
    if deck_size not in (104, 108):
        raise ValueError(f"deck size must be 104 or 108, not {deck_size}")
    dealt = PLAYERS * hand_size
    hands = tuple(tuple(range(k, dealt, PLAYERS)) for k in range(PLAYERS))
    pot_slots = tuple(
        tuple(range(dealt + i * pot_size, dealt + (i + 1) * pot_size)) for i in range(pots)
    )
    nxt = dealt + pots * pot_size
    up: int | None = None
    if face_up:
        up = nxt
        nxt += 1
    return DealLayout(deck_size, hands, pot_slots, up, tuple(range(nxt, deck_size)))


def deal_layout(rules: RuleSet) -> DealLayout:
    """The deal layout of a rule set (slots of the hands in play order, pots, face-up, stock)."""
    return make_layout(
        rules.deck_size,
        rules.discard_start is DiscardStart.FACE_UP,
        rules.hand_size,
        rules.pot_size,
        rules.pots,
    )


def play_order(dealer: int, clockwise: bool) -> tuple[int, ...]:
    """Seats in play order for a dealer: the first player is the dealer's neighbour in the
    direction of play (left when clockwise, right when counter-clockwise).

    Seats are numbered clockwise, partners opposite: seats 0 and 2 are team 0, 1 and 3 team 1.
    """
    if not 0 <= dealer < PLAYERS:
        raise ValueError(f"dealer seat must be 0..3, not {dealer}")
    step = 1 if clockwise else -1
    return tuple((dealer + step * (k + 1)) % PLAYERS for k in range(PLAYERS))
