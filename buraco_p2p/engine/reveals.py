"""Reveals: how a card's identity enters a view, and how a view asks for one.

The session turns checked decryption shares into `Reveal`s; the engine tells the session which
reveals it owes after each move with `RevealRequest`s.
"""

from __future__ import annotations

from dataclasses import dataclass

from buraco_p2p.engine.errors import RevealError


@dataclass(frozen=True, slots=True)
class RevealRequest:
    """A reveal the session owes: `slot` to `seat` privately, or to everyone if `seat` is None."""

    slot: int
    seat: int | None


@dataclass(frozen=True, slots=True)
class Reveal:
    """A card identity handed to a view: `slot` holds `card_id`, privately or publicly.

    The session builds these from checked decryption shares; wire form `[slot, card_id, 0|1]`.
    """

    slot: int
    card_id: int
    public: bool = False

    def to_wire(self) -> list[int]:
        return [self.slot, self.card_id, 1 if self.public else 0]


def reveal_from_wire(obj: object, deck_size: int = 108) -> Reveal:
    """Decode a reveal's wire form for a deck of `deck_size` cards (the table's rules; 108 by
    default); garbage raises `RevealError`."""
    if not isinstance(obj, list | tuple) or len(obj) != 3:
        raise RevealError("a reveal is a list [slot, card_id, public]")
    slot, card, pub = obj
    if type(slot) is not int or type(card) is not int or pub not in (0, 1) or type(pub) is not int:
        raise RevealError(f"bad reveal {obj!r}: expected three integers, the last 0 or 1")
    if not 0 <= slot < deck_size or not 0 <= card < deck_size:
        raise RevealError(f"bad reveal {obj!r}: slot and card id must be 0..{deck_size - 1}")
    return Reveal(slot, card, bool(pub))
