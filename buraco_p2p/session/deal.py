"""One deal's state inside the table, and the verifier's full-information opening of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from buraco_p2p.crypto.deck import DeckEvent, DeckSession
from buraco_p2p.crypto.errors import CryptoError
from buraco_p2p.crypto.group import Point, Scalar
from buraco_p2p.crypto.keys import KeyPair
from buraco_p2p.crypto.randomness import CommitReveal
from buraco_p2p.crypto.shares import open_card
from buraco_p2p.engine import (
    HandResult,
    HandState,
    IllegalMove,
    RefereeView,
    RevealError,
    RevealRequest,
    score_hand,
)

__all__ = ["Deal", "OpenError", "RevealRefused", "open_hand", "request_reveal"]


@dataclass
class Deal:
    """Per-deal state: the deck, the cut draw, the engine view once dealt."""

    number: int
    dealer: int
    face_up: int | None
    deck: DeckSession
    cut: CommitReveal
    keypair: KeyPair | None
    cut_nonce: bytes | None
    view: HandState | None = None
    keys: dict[int, Point] = field(default_factory=dict)
    secrets: dict[int, Scalar] = field(default_factory=dict)
    early: list[DeckEvent] = field(default_factory=list)
    deferred: list[RevealRequest] = field(default_factory=list)
    result: HandResult | None = None
    opened: tuple[int, ...] | None = None


class OpenError(ValueError):
    """A finished hand that does not open or replay with full information."""


class RevealRefused(ValueError):
    """A reveal the deck will not grant (a slot owned by another seat, ...)."""


def request_reveal(
    deck: DeckSession, slots: Sequence[int], owner: int | None, *, public: bool
) -> None:
    """Ask the deck for a reveal; a request it refuses (a slot owned by another seat) raises
    `RevealRefused`, which the table makes the entry's fault, never an untyped error."""
    try:
        if public:
            deck.request_public(slots, owner)
        else:
            assert owner is not None
            deck.request_private(slots, owner)
    except (ValueError, RuntimeError, CryptoError) as exc:
        raise RevealRefused(f"reveal of slots {list(slots)}: {exc}") from None


def open_hand(hand: Deal, n: int) -> tuple[int, ...]:
    """The verifier's full-information replay of a finished hand: with every seat's hand
    secret published, open every slot of the final deck (the secrets sum to the table's
    key, so one share per slot does), check that every card shown during the hand is the
    card its slot opens to, and replay the hand's moves on a referee that knows every
    card, to the same score."""
    deck = hand.deck
    total = hand.secrets[0]
    for s in range(1, n):
        total = total + hand.secrets[s]
    cards: list[int] = []
    for ct in deck.deck:
        try:
            cards.append(open_card(ct, [total * ct.c1], deck.deck_size))
        except CryptoError as exc:  # pragma: no cover - every proof checked
            raise OpenError(f"an opened slot is not a card: {exc}") from None
    for slot, card in deck.public_cards().items():
        if cards[slot] != card:  # pragma: no cover - every proof checked
            raise OpenError(f"slot {slot} opens to card {cards[slot]}, shown as {card}")
    view, result = hand.view, hand.result
    assert view is not None and result is not None
    try:
        ref = RefereeView(view.setup, cards)
        for move in view.moves:
            for s in ref.exposed_by(move):
                ref.reveal(s, cards[s], public=True)
            ref.push(move)
        totals = score_hand(ref).totals
    except (IllegalMove, RevealError, ValueError) as exc:
        raise OpenError(f"the opened hand does not replay: {exc}") from None
    if totals != result.totals:
        raise OpenError(f"the opened hand scores {list(totals)}, not {list(result.totals)}")
    return tuple(cards)
