"""ElGamal ciphertexts and decks: encodings are validated, re-randomisation keeps the card."""

from __future__ import annotations

import pytest

from buraco_p2p.crypto.elgamal import (
    CIPHERTEXT_BYTES,
    Ciphertext,
    InvalidCiphertext,
    deck_bytes,
    decode_deck,
    encrypt,
    open_deck,
)
from buraco_p2p.crypto.encoding import card_id_of, card_points
from buraco_p2p.crypto.errors import CryptoError
from buraco_p2p.crypto.group import IDENTITY, DeterministicRandomSource, Point, Scalar

NONCANONICAL = bytes.fromhex("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")


@pytest.fixture
def rng() -> DeterministicRandomSource:
    return DeterministicRandomSource(b"test_elgamal")


def decrypt(c: Ciphertext, x: Scalar) -> Point:
    return c.c2 - x * c.c1


def test_open_deck_is_every_card_in_the_clear() -> None:
    deck = open_deck(card_points(108))
    assert len(deck) == 108
    assert all(c.is_open() for c in deck)
    assert [card_id_of(c.c2) for c in deck] == list(range(108))


def test_open_deck_refuses_identity_card() -> None:
    with pytest.raises(InvalidCiphertext) as e:
        open_deck([card_points(104)[0], IDENTITY])
    assert e.value.index == 1


def test_rerandomise_keeps_the_plaintext_and_changes_the_bytes(
    rng: DeterministicRandomSource,
) -> None:
    x = Scalar.random_nonzero(rng)
    y = Point.base_mul(x)
    m = card_points(104)[7]
    c = encrypt(m, Scalar.random_nonzero(rng), y)
    c2 = c.rerandomise(Scalar.random_nonzero(rng), y)
    assert c2 != c
    assert c2.c1 != c.c1 and c2.c2 != c.c2
    assert decrypt(c, x) == m
    assert decrypt(c2, x) == m
    # the open encoding decrypts under any key
    assert decrypt(open_deck([m])[0], x) == m


def test_ciphertext_roundtrip(rng: DeterministicRandomSource) -> None:
    y = Point.random(rng)
    c = encrypt(Point.random(rng), Scalar.random_nonzero(rng), y)
    b = c.to_bytes()
    assert len(b) == CIPHERTEXT_BYTES
    assert Ciphertext.from_bytes(b) == c


def test_identity_c1_only_in_the_open_deck() -> None:
    m = card_points(104)[3]
    b = open_deck([m])[0].to_bytes()
    with pytest.raises(InvalidCiphertext, match="c1"):
        Ciphertext.from_bytes(b)
    assert Ciphertext.from_bytes(b, allow_open=True).is_open()


def test_identity_c2_refused_even_in_open_deck(rng: DeterministicRandomSource) -> None:
    b = Point.random(rng).to_bytes() + bytes(32)
    for allow in (False, True):
        with pytest.raises(InvalidCiphertext, match="c2"):
            Ciphertext.from_bytes(b, allow_open=allow)


@pytest.mark.parametrize("which", [0, 1])
def test_noncanonical_points_refused(rng: DeterministicRandomSource, which: int) -> None:
    good = Point.random(rng).to_bytes()
    b = NONCANONICAL + good if which == 0 else good + NONCANONICAL
    with pytest.raises(InvalidCiphertext, match="c1" if which == 0 else "c2"):
        Ciphertext.from_bytes(b, allow_open=True)


@pytest.mark.parametrize("bad", [b"", bytes(63), bytes(65), "ab" * 32, None])
def test_wrong_type_or_length_refused(bad: object) -> None:
    with pytest.raises(InvalidCiphertext):
        Ciphertext.from_bytes(bad)  # type: ignore[arg-type]
    assert issubclass(InvalidCiphertext, CryptoError)
    assert issubclass(InvalidCiphertext, ValueError)


def test_deck_roundtrip_and_bad_entry_is_named(rng: DeterministicRandomSource) -> None:
    y = Point.random(rng)
    deck = tuple(encrypt(m, Scalar.random_nonzero(rng), y) for m in card_points(104)[:10])
    b = deck_bytes(deck)
    assert len(b) == 10 * 64
    assert decode_deck(b, 10) == deck
    with pytest.raises(InvalidCiphertext, match="640"):
        decode_deck(b, 11)
    with pytest.raises(InvalidCiphertext):
        decode_deck(b[:-1], 10)
    broken = b[: 64 * 6 + 32] + NONCANONICAL + b[64 * 7 :]
    with pytest.raises(InvalidCiphertext) as e:
        decode_deck(broken, 10)
    assert e.value.index == 6
    assert "ciphertext 6" in str(e.value)


def test_open_deck_decodes_only_when_allowed() -> None:
    deck = open_deck(card_points(104))
    b = deck_bytes(deck)
    assert decode_deck(b, 104, allow_open=True) == deck
    with pytest.raises(InvalidCiphertext) as e:
        decode_deck(b, 104)
    assert e.value.index == 0
