"""How cards look on screen: Unicode suits or ASCII letters, red and black or no colour.

Every card is two columns wide (`T` for ten, `JK` for a joker) so that hands and melds line up
whatever the terminal. A card id's face depends on the deck: the suited cards come first, a
copy of the 52 faces after another, then the jokers (`Glyphs.deck_size`). Colour is a style
class (`card.red`, `card.black`, `card.joker`); the style sheet decides whether those classes
have colours at all (`NO_COLOR`, see `theme`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from buraco_p2p.cards import FACES, JOKER, RANK_LETTERS, Card, Suit

SUIT_GLYPHS: Final = {Suit.S: "♠", Suit.H: "♥", Suit.D: "♦", Suit.C: "♣"}
SUIT_ORDER: Final = (Suit.S, Suit.H, Suit.D, Suit.C)

Fragment = tuple[str, str]

# Where the terminal has no Unicode symbols, every symbol the screens draw becomes one ASCII
# character of the same width, so the layout does not move.
ASCII_SYMBOLS: Final = str.maketrans(
    {"·": "-", "│": "|", "←": "<", "→": ">", "↑": "^", "↓": "v", "…": ".", "▶": ">", "▲": "^",
     "★": "*", "☆": "+", "⚠": "!", "♠": "S", "♥": "H", "♦": "D", "♣": "C", "\ufffd": "?"}
)


@dataclass(frozen=True, slots=True)
class Glyphs:
    """The character set in use (`ascii=True` for terminals without Unicode symbols) and the
    size of the deck the card ids number."""

    ascii: bool = False
    deck_size: int = 108

    def face_of(self, card_id: int) -> Card:
        """The face of a card id of this deck: ids past the suited cards are jokers."""
        if card_id >= self.deck_size - self.deck_size % 52:
            return JOKER
        return FACES[card_id % 52]

    def suit(self, suit: Suit) -> str:
        return suit.letter if self.ascii else SUIT_GLYPHS[suit]

    def face(self, face: Card) -> str:
        if face.suit is None:
            return "JK"
        return RANK_LETTERS[face.rank - 1] + self.suit(face.suit)

    def card(self, card_id: int) -> str:
        return self.face(self.face_of(card_id))

    def fragment(self, card_id: int | None, extra: str = "") -> Fragment:
        """A card as a styled fragment; None is a card this seat cannot see (`??`)."""
        if card_id is None:
            return ("class:card.hidden" + extra, "??")
        face = self.face_of(card_id)
        return (card_class(face) + extra, self.face(face))

    def cards(self, card_ids: Iterable[int | None], sep: str = " ") -> list[Fragment]:
        out: list[Fragment] = []
        for i, c in enumerate(card_ids):
            if i:
                out.append(("", sep))
            out.append(self.fragment(c))
        return out

    def faces(self, faces: Sequence[Card]) -> str:
        return " ".join(self.face(f) for f in faces)

    @property
    def selected_mark(self) -> str:
        return "**" if self.ascii else "▲▲"

    @property
    def clean_mark(self) -> str:
        return "*" if self.ascii else "★"

    @property
    def dirty_mark(self) -> str:
        return "+" if self.ascii else "☆"

    @property
    def turn_mark(self) -> str:
        return ">" if self.ascii else "▶"

    @property
    def warn_mark(self) -> str:
        return "!!" if self.ascii else "⚠"

    @property
    def ellipsis(self) -> str:
        return ".." if self.ascii else "…"


def card_class(face: Card) -> str:
    if face.suit is None:
        return "class:card.joker"
    return "class:card.red" if face.suit in (Suit.H, Suit.D) else "class:card.black"


def sort_key_suit(face: Card, card_id: int) -> tuple[int, int, int]:
    """Suit, then rank (ace first), jokers last: the hand grouped by suit."""
    if face.suit is None:
        return (4, 0, card_id)
    return (SUIT_ORDER.index(face.suit), face.rank, card_id)


def sort_key_rank(face: Card, card_id: int) -> tuple[int, int, int]:
    """Rank (ace first), then suit, jokers last: the hand grouped by rank."""
    if face.suit is None:
        return (14, 0, card_id)
    return (face.rank, SUIT_ORDER.index(face.suit), card_id)


def group_of(face: Card, by_rank: bool) -> int:
    """The group a card is drawn in: its suit (or rank), jokers apart."""
    if face.suit is None:
        return 99
    return face.rank if by_rank else int(face.suit)
