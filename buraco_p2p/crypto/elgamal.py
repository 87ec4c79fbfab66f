"""ElGamal ciphertexts over ristretto255 and whole decks of them.

A card is the point M_c; encrypted under the table key Y it is the pair (c1, c2) = (r*G, M_c + r*Y).
The *open* deck is every card with r = 0, i.e. (identity, M_c): anyone can read it, and the first
shuffle is what hides it. That is the only place an identity c1 is legitimate, so decoding refuses
it everywhere else; an honest re-randomisation hits the identity with negligible probability, so
refusing it costs nothing and closes a door a cheater could otherwise use (an identity c1 would
make every decryption share the identity too and let anyone read the card).

Decks travel as the concatenation of their ciphertexts, 64 bytes each (c1 || c2): the deck size is
known from the rules, so there is no length prefix to disagree with.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Self

from buraco_p2p.crypto.errors import CryptoError, InvalidPoint
from buraco_p2p.crypto.group import IDENTITY, Point, Scalar

__all__ = [
    "CIPHERTEXT_BYTES",
    "Ciphertext",
    "InvalidCiphertext",
    "deck_bytes",
    "decode_deck",
    "encrypt",
    "open_deck",
]

CIPHERTEXT_BYTES: Final = 64


class InvalidCiphertext(CryptoError):
    """Bytes that are not an acceptable ciphertext or deck; `index` names the bad entry."""

    def __init__(self, reason: str, *, index: int | None = None) -> None:
        self.reason = reason
        self.index = index
        where = f"ciphertext {index}: " if index is not None else ""
        super().__init__(where + reason)


@dataclass(frozen=True, slots=True)
class Ciphertext:
    """An ElGamal pair (c1, c2) = (r*G, M + r*Y). Immutable; equality is by value."""

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        """An immutable value: a copy of a table shares it."""
        return self

    c1: Point
    c2: Point

    def to_bytes(self) -> bytes:
        return self.c1.to_bytes() + self.c2.to_bytes()

    @classmethod
    def from_bytes(cls, b: bytes, *, allow_open: bool = False) -> Ciphertext:
        """Decode c1 || c2; c1 may be the identity only if `allow_open` (the open deck)."""
        if not isinstance(b, bytes | bytearray | memoryview):
            raise InvalidCiphertext(f"a ciphertext must be bytes, not {type(b).__name__}")
        b = bytes(b)
        if len(b) != CIPHERTEXT_BYTES:
            raise InvalidCiphertext(f"a ciphertext is {CIPHERTEXT_BYTES} bytes, got {len(b)}")
        try:
            c1 = Point.from_bytes(b[:32], allow_identity=allow_open)
        except InvalidPoint as e:
            raise InvalidCiphertext(f"c1: {e}") from e
        try:
            c2 = Point.from_bytes(b[32:])
        except InvalidPoint as e:
            raise InvalidCiphertext(f"c2: {e}") from e
        return cls(c1, c2)

    def __reduce__(self) -> tuple[type[Ciphertext], tuple[Point, Point]]:
        """Pickled as its two points, each by its own reduction: a dataclass's default
        state, read field by field, is several times slower, and `buraco_p2p.verify_jobs`
        pickles whole decks for its workers."""
        return (Ciphertext, (self.c1, self.c2))

    def is_open(self) -> bool:
        """True for a card in the clear: (identity, M)."""
        return self.c1.is_identity()

    def rerandomise(self, r: Scalar, table_key: Point) -> Ciphertext:
        """(c1 + r*G, c2 + r*Y): the same card, unlinkable to the input without r."""
        return Ciphertext(self.c1 + Point.base_mul(r), self.c2 + r * table_key)


def encrypt(message: Point, r: Scalar, table_key: Point) -> Ciphertext:
    """(r*G, M + r*Y). With r = 0 this is the open encoding of M."""
    return Ciphertext(Point.base_mul(r), message + r * table_key)


def open_deck(card_points: Iterable[Point]) -> tuple[Ciphertext, ...]:
    """The deck in the clear, (identity, M_c) in card-id order: the input of the first shuffle."""
    deck = []
    for i, m in enumerate(card_points):
        if not isinstance(m, Point) or m.is_identity():
            raise InvalidCiphertext("a card point must be a non-identity Point", index=i)
        deck.append(Ciphertext(IDENTITY, m))
    return tuple(deck)


def deck_bytes(deck: Sequence[Ciphertext]) -> bytes:
    """The wire form of a deck: its ciphertexts' 64-byte encodings, concatenated."""
    return b"".join(c.c1.to_bytes() + c.c2.to_bytes() for c in deck)


def decode_deck(b: bytes, size: int, *, allow_open: bool = False) -> tuple[Ciphertext, ...]:
    """Decode exactly `size` ciphertexts, validating every point; raises InvalidCiphertext."""
    if not isinstance(b, bytes | bytearray | memoryview):
        raise InvalidCiphertext(f"a deck must be bytes, not {type(b).__name__}")
    b = bytes(b)
    if size <= 0:
        raise ValueError(f"deck size must be positive, not {size}")
    if len(b) != size * CIPHERTEXT_BYTES:
        raise InvalidCiphertext(
            f"a deck of {size} is {size * CIPHERTEXT_BYTES} bytes, got {len(b)}"
        )
    out = []
    for i in range(size):
        try:
            out.append(Ciphertext.from_bytes(b[64 * i : 64 * i + 64], allow_open=allow_open))
        except InvalidCiphertext as e:
            raise InvalidCiphertext(e.reason, index=i) from e
    return tuple(out)
