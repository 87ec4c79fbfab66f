"""Cards as group elements.

Card id c (0..161) is the point M_c = hash_to_group(b"buraco-p2p/card/v1/", ascii_decimal(c)),
e.g. the message for card 37 is the two bytes b"37". Nobody knows a discrete log between two
card points, so a ciphertext of one card cannot be turned into a ciphertext of another.

A deck of n cards is the ids 0..n-1, whatever faces the game layer gives them: n is 104 or 108
(two packs, without or with four jokers) at up to four seats, 156 or 162 (three packs, without
or with six jokers) at six. The crypto layer needs nothing else of a card, so the faces stay in
`buraco_p2p.cards`. The 162 points are computed once and kept in a table; opening a ciphertext
maps the recovered point back to its id through a dict.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from buraco_p2p.crypto.errors import NotACard
from buraco_p2p.crypto.group import Point

__all__ = [
    "CARD_DOMAIN",
    "DECK_SIZES",
    "MAX_CARDS",
    "card_id_of",
    "card_point",
    "card_points",
    "check_deck_size",
]

CARD_DOMAIN: Final = b"buraco-p2p/card/v1/"
DECK_SIZES: Final = (104, 108, 156, 162)
MAX_CARDS: Final = max(DECK_SIZES)


def _derive(card_id: int) -> Point:
    return Point.hash_to_group(CARD_DOMAIN, str(card_id).encode("ascii"))


@cache
def _table() -> tuple[tuple[Point, ...], dict[Point, int]]:
    points = tuple(_derive(c) for c in range(MAX_CARDS))
    lookup = {p: c for c, p in enumerate(points)}
    if len(lookup) != MAX_CARDS:  # a hash collision would make cards indistinguishable
        raise AssertionError("card points are not distinct")
    return points, lookup


def card_point(card_id: int) -> Point:
    """M_c for a physical card id."""
    if isinstance(card_id, bool) or not isinstance(card_id, int) or not 0 <= card_id < MAX_CARDS:
        raise ValueError(f"card id must be an int in [0, {MAX_CARDS}), got {card_id!r}")
    return _table()[0][card_id]


def check_deck_size(deck_size: int) -> int:
    """`deck_size` if it is one of `DECK_SIZES`, else ValueError."""
    if isinstance(deck_size, bool) or deck_size not in DECK_SIZES:
        raise ValueError(f"a deck has 104, 108, 156 or 162 cards, not {deck_size!r}")
    return deck_size


def card_points(deck_size: int) -> tuple[Point, ...]:
    """The points of a whole deck (ids 0..deck_size-1), in card-id order."""
    return _table()[0][: check_deck_size(deck_size)]


def card_id_of(point: Point, deck_size: int = MAX_CARDS) -> int:
    """The card id whose point this is; NotACard if none in a deck of this size is."""
    check_deck_size(deck_size)
    cid = _table()[1].get(point)
    if cid is None or cid >= deck_size:
        raise NotACard(f"opened point {point.to_bytes().hex()} is not a card of a {deck_size} deck")
    return cid
