"""Cards: faces, physical card ids, and the text notation used everywhere.

A *face* (`Card`) is what the rules see: rank and suit, or a joker. A *card id* is one
physical card of the deck: the two copies of a face are distinct ids with equal faces.
The rules work on faces; the engine and the crypto deck work on ids.

Ids are stable across presets so that logs and test vectors can name cards:
ids 0..51 are the first copy (suit-major: spades, hearts, diamonds, clubs; ranks A..K),
52..103 the second copy, 104..107 the four jokers (only in 108-card decks). The three-pack
decks of a table of six number their suited cards the same way over three copies (104..155 the
third), then their six jokers (156..161, in a 162-card deck): in every deck the jokers follow
the suited cards, so a face depends on the deck size only for ids 104..107.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Final


class CardParseError(ValueError):
    """A card text that is not in the notation `rank suit` (`AS`, `TD`, `10H`) or `JK`."""


class Suit(IntEnum):
    S = 0
    H = 1
    D = 2
    C = 3

    @property
    def letter(self) -> str:
        return self.name


RANK_LETTERS: Final = "A23456789TJQK"
ACE: Final = 1
DEUCE: Final = 2
KING: Final = 13
JOKER_RANK: Final = 0


@dataclass(frozen=True, slots=True)
class Card:
    """A face. `rank` is 1 (ace) .. 13 (king), or 0 for a joker (whose `suit` is None)."""

    rank: int
    suit: Suit | None

    @property
    def is_joker(self) -> bool:
        return self.rank == JOKER_RANK

    @property
    def is_deuce(self) -> bool:
        return self.rank == DEUCE

    @property
    def code(self) -> int:
        """0..51 for suited faces (suit*13 + rank-1), 52 for the joker."""
        if self.suit is None:
            return 52
        return int(self.suit) * 13 + self.rank - 1

    def __str__(self) -> str:
        if self.suit is None:
            return "JK"
        return RANK_LETTERS[self.rank - 1] + self.suit.letter

    def __repr__(self) -> str:
        return f"Card({self})"


# One instance per face, so faces compare and hash cheaply.
FACES: Final[tuple[Card, ...]] = (
    *(Card(rank, suit) for suit in Suit for rank in range(1, 14)),
    Card(JOKER_RANK, None),
)
JOKER: Final = FACES[52]

DECK_SIZES: Final = (104, 108, 156, 162)


def joker_base(deck_size: int) -> int:
    """The first joker id of a deck: its suited cards are the ids below."""
    return deck_size - deck_size % 52


def face_of(card_id: int, deck_size: int = 108) -> Card:
    """The face of a physical card id in a deck of `deck_size` cards."""
    if type(card_id) is not int or not 0 <= card_id < max(deck_size, 108):
        raise ValueError(f"card id out of range: {card_id}")
    if card_id >= joker_base(max(deck_size, 108)):
        return JOKER
    return FACES[card_id % 52]


def face_codes(deck_size: int) -> tuple[int, ...]:
    """`Card.code` of every id of a deck, by id: the engine's and the bots' hot-path table."""
    return _FACE_CODES[card_ids(deck_size).stop]


def card_ids(deck_size: int) -> range:
    """The physical card ids of a deck: 104 or 108 cards, 156 or 162 at a table of six."""
    if deck_size not in DECK_SIZES:
        raise ValueError(f"deck size must be 104, 108, 156 or 162, not {deck_size}")
    return range(deck_size)


def id_text(card_id: int, deck_size: int = 108) -> str:
    """Text for a physical card: its face, and `#2` for a second copy (`AS#2`, `JK#3`)."""
    face = face_of(card_id, deck_size)
    base = joker_base(max(deck_size, 108))
    copy = (card_id - base) + 1 if card_id >= base else card_id // 52 + 1
    return str(face) if copy == 1 else f"{face}#{copy}"


_FACE_CODES: Final = {
    n: tuple(52 if i >= joker_base(n) else i % 52 for i in range(n)) for n in DECK_SIZES
}

_SUIT_BY_LETTER: Final = {s.letter: s for s in Suit}
_RANK_BY_LETTER: Final = {c: i + 1 for i, c in enumerate(RANK_LETTERS)}


def parse_card(text: str) -> Card:
    """Parse one face: `AS`, `TD`, `10D`, `2H`, `JK` (case-insensitive)."""
    if not isinstance(text, str):
        raise CardParseError(f"a card must be text, not {type(text).__name__}")
    t = text.strip().upper()
    if t == "JK":
        return JOKER
    if len(t) == 3 and t.startswith("10"):
        t = "T" + t[2]
    if len(t) != 2 or t[0] not in _RANK_BY_LETTER or t[1] not in _SUIT_BY_LETTER:
        raise CardParseError(
            f"not a card: {text!r} (expected rank A23456789TJQK or 10, then suit SHDC; or JK)"
        )
    return FACES[_SUIT_BY_LETTER[t[1]] * 13 + _RANK_BY_LETTER[t[0]] - 1]


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse faces separated by spaces or commas (`"AS 2S 3S"`), or an iterable of card texts.

    Anything else (None, a number) is a `CardParseError` too, like a bad card text: callers
    handle one error type for every bad input.
    """
    if isinstance(text, str):
        parts: list[object] = list(text.replace(",", " ").split())
    elif isinstance(text, Iterable):
        parts = list(text)
    else:
        raise CardParseError(f"cards must be text or a list of texts, not {type(text).__name__}")
    return [parse_card(p) for p in parts]  # type: ignore[arg-type]


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)
