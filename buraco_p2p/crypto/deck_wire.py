"""The deck protocol's messages, their wire form, and the errors a deck session raises.

A deck message travels in a log entry as a msgpack map with a `type` (`deck/key`,
`deck/shuffle`, `deck/shares`), the sending `seat` and the message's bytes. `decode_message`
checks structure, types and sizes only, against the largest table (6 seats) and deck (162 cards)
unless the caller passes the table's own; whether a message is acceptable now (its turn, its
proofs) is for `DeckSession.receive` in `buraco_p2p.crypto.deck`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from buraco_p2p.crypto.encoding import MAX_CARDS
from buraco_p2p.crypto.errors import CryptoError
from buraco_p2p.crypto.shuffle import proof_size

__all__ = [
    "KEY_BYTES",
    "MAX_SEATS",
    "MIN_SEATS",
    "DeckError",
    "DeckMessage",
    "KeyMessage",
    "KeyRejected",
    "MalformedMessage",
    "OutOfTurn",
    "RevealRefused",
    "ShareRejected",
    "SharesMessage",
    "ShuffleMessage",
    "ShuffleRejected",
    "decode_message",
]

MIN_SEATS: Final = 2
MAX_SEATS: Final = 6
KEY_BYTES: Final = 96


# ---------------------------------------------------------------------------------------------
# Errors


class DeckError(CryptoError):
    """A deck message or request that cannot be accepted. `party` is the seat that sent it
    (for a request, the seat it would reveal to), when there is one."""

    def __init__(self, party: int | None, reason: str) -> None:
        self.party = party
        self.reason = reason
        who = f"seat {party}: " if party is not None else ""
        super().__init__(who + reason)


class MalformedMessage(DeckError):
    """Not a deck message at all: wrong type, missing or ill-typed fields, bad lengths."""


class OutOfTurn(DeckError):
    """A well-formed message that the protocol does not expect now, or not from this seat."""


class KeyRejected(DeckError):
    """A key announcement whose key or Schnorr proof does not check."""


class ShuffleRejected(DeckError):
    """A shuffle whose output deck or proof does not check; `field` names the failing part."""

    def __init__(self, party: int, reason: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(party, reason + (f" (field {field})" if field else ""))


class ShareRejected(DeckError):
    """Decryption shares whose proof does not check, for the listed `slots`."""

    def __init__(self, party: int, reason: str, slots: Sequence[int] = ()) -> None:
        self.slots = tuple(slots)
        super().__init__(party, reason)


class RevealRefused(DeckError):
    """A reveal request that would open a card its requester has no claim to.

    `party` is the seat the request names (None for a request naming no valid seat), `slots`
    the offending slots, and `code` one of: `not_ready` (no deck to reveal from yet),
    `bad_owner` (not a seat of this table), `out_of_range` (no such slot in this deck),
    `not_held` (a public reveal for a seat of a slot not in its hand), `owned` (a private reveal
    of a slot already another seat's: its dealt hand, a pot or a card it drew),
    `already_public` (a private reveal of a card everyone sees or will see).
    """

    def __init__(
        self, party: int | None, code: str, reason: str, slots: Iterable[int] = ()
    ) -> None:
        self.code = code
        self.slots = tuple(slots)
        super().__init__(party, reason)


# ---------------------------------------------------------------------------------------------
# Messages


@dataclass(frozen=True, slots=True)
class KeyMessage:
    """A seat's per-hand key: Y_i (32 bytes) || Schnorr proof (64 bytes)."""

    TYPE = "deck/key"
    seat: int
    key: bytes

    def to_wire(self) -> dict[str, object]:
        return {"type": self.TYPE, "seat": self.seat, "key": self.key}


@dataclass(frozen=True, slots=True)
class ShuffleMessage:
    """A seat's shuffle: the output deck (64 bytes per card) and the proof of shuffle."""

    TYPE = "deck/shuffle"
    seat: int
    deck: bytes
    proof: bytes

    def to_wire(self) -> dict[str, object]:
        return {"type": self.TYPE, "seat": self.seat, "deck": self.deck, "proof": self.proof}


@dataclass(frozen=True, slots=True)
class SharesMessage:
    """A seat's decryption shares for `slots` (ascending), as one batch: the shares in slot
    order (32 bytes each) and one Chaum-Pedersen batch proof (64 bytes)."""

    TYPE = "deck/shares"
    seat: int
    slots: tuple[int, ...]
    batch: bytes

    def to_wire(self) -> dict[str, object]:
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "slots": list(self.slots),
            "batch": self.batch,
        }


DeckMessage = KeyMessage | ShuffleMessage | SharesMessage


def _wire_int(obj: Mapping[str, object], key: str, lo: int, hi: int) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v < hi:
        raise MalformedMessage(None, f"field {key!r} must be an integer in [{lo}, {hi})")
    return v


def _wire_bytes(obj: Mapping[str, object], key: str) -> bytes:
    v = obj.get(key)
    if not isinstance(v, bytes):
        raise MalformedMessage(None, f"field {key!r} must be bytes")
    return v


def _only(obj: Mapping[str, object], keys: set[str]) -> None:
    extra = set(obj) - keys
    if extra:
        raise MalformedMessage(None, f"unexpected fields {sorted(extra)}")


def decode_message(
    obj: object, *, seats: int = MAX_SEATS, deck_size: int = MAX_CARDS
) -> DeckMessage:
    """Validate a decoded wire object (e.g. from msgpack) and build the message.

    `seats` and `deck_size` bound the seat and the slots (the largest table and deck by
    default; a session passes its own). Checks structure, types and sizes only; whether the
    message is acceptable (its turn, its proofs) is for `DeckSession.receive`.
    """
    if not MIN_SEATS <= seats <= MAX_SEATS or not 0 < deck_size <= MAX_CARDS:
        raise ValueError(f"no table of {seats} seats and {deck_size} cards")
    if not isinstance(obj, Mapping) or not all(isinstance(k, str) for k in obj):
        raise MalformedMessage(None, "a deck message is a map with text keys")
    kind = obj.get("type")
    seat = _wire_int(obj, "seat", 0, seats)
    try:
        if kind == KeyMessage.TYPE:
            _only(obj, {"type", "seat", "key"})
            key = _wire_bytes(obj, "key")
            if len(key) != KEY_BYTES:
                raise MalformedMessage(None, f"a key is {KEY_BYTES} bytes, got {len(key)}")
            return KeyMessage(seat, key)
        if kind == ShuffleMessage.TYPE:
            _only(obj, {"type", "seat", "deck", "proof"})
            deck = _wire_bytes(obj, "deck")
            proof = _wire_bytes(obj, "proof")
            if len(deck) % 64 or not 0 < len(deck) // 64 <= deck_size:
                raise MalformedMessage(
                    None, f"a deck of {len(deck)} bytes is not 1..{deck_size} cards"
                )
            if len(proof) != proof_size(len(deck) // 64):
                raise MalformedMessage(None, "proof length does not match the deck")
            return ShuffleMessage(seat, deck, proof)
        if kind == SharesMessage.TYPE:
            _only(obj, {"type", "seat", "slots", "batch"})
            raw = obj.get("slots")
            if not isinstance(raw, list | tuple) or not raw or len(raw) > deck_size:
                raise MalformedMessage(
                    None, f"field 'slots' must be a list of 1..{deck_size} slots"
                )
            slots = []
            for s in raw:
                if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < deck_size:
                    raise MalformedMessage(None, f"a slot is an integer in [0, {deck_size})")
                slots.append(s)
            if any(a >= b for a, b in pairwise(slots)):
                raise MalformedMessage(None, "slots must be strictly ascending")
            batch = _wire_bytes(obj, "batch")
            if len(batch) != 32 * len(slots) + 64:
                raise MalformedMessage(None, "batch length does not match the slots")
            return SharesMessage(seat, tuple(slots), batch)
    except MalformedMessage as e:
        raise MalformedMessage(seat, e.reason) from None
    raise MalformedMessage(seat, f"unknown deck message type {kind!r}")
