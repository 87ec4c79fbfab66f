"""The deal layout: which slot of the shuffled deck goes where.

The shuffled deck is a sequence of slots `0..N-1` (N = 104 or 108; 156 or 162 at six players).
The deal is fixed, so every peer knows where each slot lies without seeing any card. With P
players (2, 3, 4 or 6):

- slots `0..11P-1`: the hands, dealt one card at a time in play order starting with the first
  player: slot `k` goes to the player at position `k % P` of the play order;
- then the pots in dealing order, each a run of consecutive slots: at four players `44..54`
  the first pot and `55..65` the second; two pots of 11 at two players, three at six; at three
  one of 11 then the 18-card pot (`RuleSet.pot_sizes`). Which side takes which pot is the
  engine's (`pot_take_order`); the stock, when it runs out, goes on with the untaken pots in
  dealing order;
- the next slot, where the preset turns a card face up at the deal (classic, italian): that
  card, starting the discard pile;

(these numbers are for 11-card hands; a rule set that changes the sizes shifts them the same
way);
- the remaining slots, in increasing order, are the stock: the lowest is drawn first.

Seats are numbered clockwise from 0. The sides at the deal (`sides_at_deal`): each player at two
and three players; partners opposite at four (seats 0 and 2, 1 and 3); at six three teams of two
(seats i and i+3) or, with `teams=2`, two teams of three (alternating: 0, 2, 4 and 1, 3, 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from buraco_p2p.cards import DECK_SIZES
from buraco_p2p.rules import DiscardStart, RuleSet

HAND_SIZE: Final = 11
POT_SIZE: Final = 11
PLAYERS: Final = 4
PLAYER_COUNTS: Final = (2, 3, 4, 6)


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
    players: int = PLAYERS,
    pot_sizes: Sequence[int] | None = None,
) -> DealLayout:
    """The layout for a deck size, with or without a face-up card at the deal.

    `pot_sizes` (in dealing order) replaces `pots` pots of `pot_size` where the pots differ.
    """
    if deck_size not in DECK_SIZES:
        raise ValueError(f"deck size must be one of {DECK_SIZES}, not {deck_size}")
    if players not in PLAYER_COUNTS:
        raise ValueError(f"players must be one of {PLAYER_COUNTS}, not {players}")
    sizes = tuple(pot_sizes) if pot_sizes is not None else (pot_size,) * pots
    dealt = players * hand_size
    hands = tuple(tuple(range(k, dealt, players)) for k in range(players))
    pot_list = []
    nxt = dealt
    for size in sizes:
        pot_list.append(tuple(range(nxt, nxt + size)))
        nxt += size
    pot_slots = tuple(pot_list)
    if nxt + (1 if face_up else 0) > deck_size:
        raise ValueError("the deal needs more cards than the deck has")
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
        rules.players,
        rules.pot_sizes,
    )


def play_order(dealer: int, clockwise: bool, players: int = PLAYERS) -> tuple[int, ...]:
    """Seats in play order for a dealer: the first player is the dealer's neighbour in the
    direction of play (left when clockwise, right when counter-clockwise).

    Seats are numbered clockwise; at four, partners opposite: seats 0 and 2 are team 0, 1 and 3
    team 1 (`sides_at_deal` for every count).
    """
    if players not in PLAYER_COUNTS:
        raise ValueError(f"players must be one of {PLAYER_COUNTS}, not {players}")
    if type(dealer) is not int or not 0 <= dealer < players:
        raise ValueError(f"dealer seat must be 0..{players - 1}, not {dealer}")
    step = 1 if clockwise else -1
    return tuple((dealer + step * (k + 1)) % players for k in range(players))


def sides_at_deal(rules: RuleSet) -> tuple[tuple[int, ...], ...]:
    """The sides of a hand at the deal, each a tuple of seats, ordered by their lowest seat.

    A side owns melds, a pot, an initial meld minimum and a hand score. At three players the
    sides change once in the hand (`HandState.side_change`); elsewhere they stay.
    """
    n = rules.players
    if n in (2, 3):
        return tuple((s,) for s in range(n))
    teams = rules.teams
    return tuple(tuple(range(t, n, teams)) for t in range(teams))


def pot_take_order(rules: RuleSet) -> tuple[int, ...]:
    """Pot indices (dealing order) in the order sides take them on emptying a hand.

    At three players the first to empty a hand takes the 18-card pot (dealt second); with two
    teams of three, the third pot is nobody's and only serves when the stock runs out.
    """
    pots = len(rules.pot_sizes)
    if rules.players == 3 and pots == 2:
        return (1, 0)
    if rules.players == 6 and rules.teams == 2 and pots == 3:
        return (0, 1)
    return tuple(range(pots))
