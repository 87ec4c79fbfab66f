"""Card points: the specified derivation, distinctness, and the reverse lookup."""

from __future__ import annotations

import hashlib

import pytest
import rbcl

from buraco_p2p.crypto.encoding import (
    CARD_DOMAIN,
    DECK_SIZES,
    card_id_of,
    card_point,
    card_points,
)
from buraco_p2p.crypto.errors import NotACard
from buraco_p2p.crypto.group import BASE, DeterministicRandomSource, Point


def test_card_point_follows_the_spec() -> None:
    for cid in (0, 7, 37, 107, 108, 161):
        msg = str(cid).encode()
        digest = hashlib.sha512(
            len(CARD_DOMAIN).to_bytes(4, "big") + CARD_DOMAIN + len(msg).to_bytes(4, "big") + msg
        ).digest()
        assert card_point(cid).to_bytes() == rbcl.crypto_core_ristretto255_from_hash(digest)
    assert CARD_DOMAIN == b"buraco-p2p/card/v1/"


def test_all_points_distinct_and_round_trip() -> None:
    pts = card_points(162)
    assert len(set(pts)) == 162
    assert all(not p.is_identity() and p != BASE for p in pts)
    for cid, p in enumerate(pts):
        assert card_point(cid) == p
        assert card_id_of(p) == cid
    assert DECK_SIZES == (104, 108, 156, 162)
    for size in DECK_SIZES:
        assert card_points(size) == pts[:size]


def test_non_cards_are_refused() -> None:
    rng = DeterministicRandomSource(b"not-a-card")
    for _ in range(20):
        with pytest.raises(NotACard):
            card_id_of(Point.random(rng))
    with pytest.raises(NotACard):
        card_id_of(card_point(5) + card_point(6))
    # jokers do not exist in a 104-card deck
    with pytest.raises(NotACard):
        card_id_of(card_point(104), 104)
    assert card_id_of(card_point(103), 104) == 103
    # the third pack's jokers exist only in a 162-card deck
    for size in (104, 108, 156):
        with pytest.raises(NotACard):
            card_id_of(card_point(size), size)
        assert card_id_of(card_point(size - 1), size) == size - 1
    assert card_id_of(card_point(161), 162) == 161


@pytest.mark.parametrize("bad", [-1, 162, 1000, True, 1.0, "3"])
def test_card_id_range(bad: object) -> None:
    with pytest.raises(ValueError):
        card_point(bad)  # type: ignore[arg-type]


def test_deck_size_validated() -> None:
    for size in (52, 0, 107, 109, 163, 216, True):
        with pytest.raises(ValueError):
            card_points(size)
    with pytest.raises(ValueError):
        card_id_of(card_point(1), 100)
