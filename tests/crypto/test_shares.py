"""Decryption shares: completeness, soundness field by field, binding, opening, batches."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_p2p.crypto.elgamal import Ciphertext, encrypt
from buraco_p2p.crypto.encoding import card_point
from buraco_p2p.crypto.errors import NotACard, ProofError
from buraco_p2p.crypto.group import (
    IDENTITY,
    ONE,
    DeterministicRandomSource,
    L,
    Point,
    Scalar,
    multi_mul,
)
from buraco_p2p.crypto.keys import KeyPair
from buraco_p2p.crypto.shares import (
    ChaumPedersenProof,
    DecryptionShare,
    ShareBatch,
    _batch_challenge,
    _batch_transcript,
    make_share,
    make_share_batch,
    open_card,
    open_private,
    own_share,
    verify_share,
    verify_share_batch,
)
from buraco_p2p.crypto.transcript import ProofContext

CTX = ProofContext(table_id=b"table", hand=1, log_index=40, prover=b"p1")


class Table:
    def __init__(self, seed: bytes = b"shares") -> None:
        self.rng = DeterministicRandomSource(seed)
        self.keys = [KeyPair.generate(self.rng) for _ in range(4)]
        self.y = self.keys[0].public
        for k in self.keys[1:]:
            self.y = self.y + k.public

    def encrypt(self, card: int) -> Ciphertext:
        return encrypt(card_point(card), Scalar.random_nonzero(self.rng), self.y)


def test_completeness_and_public_opening() -> None:
    t = Table()
    ct = t.encrypt(73)
    shares = [make_share(k, ct, CTX, t.rng) for k in t.keys]
    for k, s in zip(t.keys, shares, strict=True):
        verify_share(k.public, ct, s, CTX)
        assert s.share == k.secret * ct.c1
        assert DecryptionShare.from_bytes(s.to_bytes()) == s
        assert len(s.to_bytes()) == 96
    assert open_card(ct, [s.share for s in shares]) == 73


@settings(max_examples=25)
@given(st.integers(min_value=0, max_value=107), st.integers(min_value=0, max_value=3))
def test_private_opening_needs_the_owner_share(card: int, owner: int) -> None:
    t = Table(b"private")
    ct = t.encrypt(card)
    others = [make_share(k, ct, CTX, t.rng).share for i, k in enumerate(t.keys) if i != owner]
    assert open_private(t.keys[owner], ct, others) == card
    # without the owner's share (or with someone else's key) it is not a card
    with pytest.raises(NotACard):
        open_card(ct, others)
    stranger = t.keys[(owner + 1) % 4]
    with pytest.raises(NotACard):
        open_card(ct, [*others, own_share(stranger, ct)])


@pytest.mark.parametrize("field", ["challenge", "response"])
def test_proof_fields_mutated_are_rejected(field: str) -> None:
    t = Table()
    ct = t.encrypt(3)
    s = make_share(t.keys[1], ct, CTX, t.rng)
    proof = dataclasses.replace(s.proof, **{field: getattr(s.proof, field) + ONE})
    with pytest.raises(ProofError) as e:
        verify_share(t.keys[1].public, ct, DecryptionShare(s.share, proof), CTX)
    assert e.value.party == b"p1" and e.value.proof == "chaum-pedersen"


def test_share_point_mutated_is_rejected() -> None:
    t = Table()
    ct = t.encrypt(3)
    s = make_share(t.keys[1], ct, CTX, t.rng)
    for bad in (s.share + Point.random(t.rng), s.share + card_point(0), -s.share):
        with pytest.raises(ProofError):
            verify_share(t.keys[1].public, ct, DecryptionShare(bad, s.proof), CTX)


def test_every_byte_of_the_wire_form_matters() -> None:
    t = Table()
    ct = t.encrypt(10)
    wire = make_share(t.keys[2], ct, CTX, t.rng).to_bytes()
    for i in range(len(wire)):
        for bit in (0x01, 0x80):
            b = bytearray(wire)
            b[i] ^= bit
            with pytest.raises(ProofError):
                verify_share(t.keys[2].public, ct, DecryptionShare.from_bytes(bytes(b)), CTX)


def test_share_for_wrong_ciphertext_is_rejected() -> None:
    t = Table()
    ct, other = t.encrypt(5), t.encrypt(5)
    s = make_share(t.keys[0], ct, CTX, t.rng)
    with pytest.raises(ProofError):
        verify_share(t.keys[0].public, other, s, CTX)
    # same c1, different c2: still bound to the whole ciphertext
    with pytest.raises(ProofError):
        verify_share(t.keys[0].public, Ciphertext(ct.c1, other.c2), s, CTX)
    with pytest.raises(ProofError):
        verify_share(t.keys[0].public, Ciphertext(other.c1, ct.c2), s, CTX)


def test_share_with_another_key_is_rejected() -> None:
    t = Table()
    ct = t.encrypt(5)
    s = make_share(t.keys[0], ct, CTX, t.rng)
    with pytest.raises(ProofError):
        verify_share(t.keys[1].public, ct, s, CTX)
    # a share made with another secret, claimed under key 0
    forged = make_share(t.keys[3], ct, CTX, t.rng)
    with pytest.raises(ProofError):
        verify_share(t.keys[0].public, ct, forged, CTX)


@pytest.mark.parametrize(
    "change", [{"table_id": b"t2"}, {"hand": 2}, {"log_index": 41}, {"prover": b"p2"}]
)
def test_share_moved_to_another_context_is_rejected(change: dict[str, object]) -> None:
    t = Table()
    ct = t.encrypt(5)
    s = make_share(t.keys[0], ct, CTX, t.rng)
    with pytest.raises(ProofError):
        verify_share(t.keys[0].public, ct, s, dataclasses.replace(CTX, **change))  # type: ignore[arg-type]


def test_open_ciphertexts_and_identity_shares_are_refused() -> None:
    t = Table()
    open_ct = Ciphertext(IDENTITY, card_point(1))
    with pytest.raises(ProofError):
        make_share(t.keys[0], open_ct, CTX, t.rng)
    ct = t.encrypt(1)
    s = make_share(t.keys[0], ct, CTX, t.rng)
    with pytest.raises(ProofError):
        verify_share(t.keys[0].public, open_ct, s, CTX)
    with pytest.raises(ProofError):
        verify_share(t.keys[0].public, ct, DecryptionShare(IDENTITY, s.proof), CTX)


def test_decoding_errors_name_field_and_party() -> None:
    t = Table()
    s = make_share(t.keys[0], t.encrypt(2), CTX, t.rng).to_bytes()
    cases = {
        "share": bytes(32) + s[32:],
        "challenge": s[:32] + (L + 2).to_bytes(32, "little") + s[64:],
        "response": s[:64] + b"\xff" * 32,
        "length": s[:95],
    }
    for field, data in cases.items():
        with pytest.raises(ProofError) as e:
            DecryptionShare.from_bytes(data, party="seat 2")
        assert e.value.field == field and e.value.party == "seat 2"
    with pytest.raises(ProofError):
        ChaumPedersenProof.from_bytes(b"x")


def test_forged_ciphertext_opens_to_not_a_card() -> None:
    t = Table()
    ct = t.encrypt(9)
    forged = Ciphertext(ct.c1, ct.c2 + Point.random(t.rng))
    shares = [make_share(k, forged, CTX, t.rng) for k in t.keys]
    for k, s in zip(t.keys, shares, strict=True):
        verify_share(k.public, forged, s, CTX)
    with pytest.raises(NotACard):
        open_card(forged, [s.share for s in shares])


def test_batch_completeness_and_wire_form() -> None:
    t = Table(b"batch")
    cts = [t.encrypt(c) for c in range(11)]
    batch = make_share_batch(t.keys[2], cts, CTX, t.rng)
    verify_share_batch(t.keys[2].public, cts, batch, CTX)
    assert batch.shares == tuple(own_share(t.keys[2], ct) for ct in cts)
    assert ShareBatch.from_bytes(batch.to_bytes(), 11) == batch
    others = [make_share_batch(k, cts, CTX, t.rng) for i, k in enumerate(t.keys) if i != 2]
    for i, ct in enumerate(cts):
        assert open_private(t.keys[2], ct, [b.shares[i] for b in others]) == i


def test_batch_rejects_any_single_bad_share() -> None:
    t = Table(b"batch-bad")
    cts = [t.encrypt(c) for c in range(6)]
    batch = make_share_batch(t.keys[0], cts, CTX, t.rng)
    for i in range(6):
        shares = list(batch.shares)
        shares[i] = shares[i] + card_point(0)
        with pytest.raises(ProofError):
            verify_share_batch(t.keys[0].public, cts, ShareBatch(tuple(shares), batch.proof), CTX)
    # swapping two shares (each correct for the other slot) is caught too
    swapped = (batch.shares[1], batch.shares[0], *batch.shares[2:])
    with pytest.raises(ProofError):
        verify_share_batch(t.keys[0].public, cts, ShareBatch(swapped, batch.proof), CTX)
    for field in ("challenge", "response"):
        proof = dataclasses.replace(batch.proof, **{field: getattr(batch.proof, field) + ONE})
        with pytest.raises(ProofError):
            verify_share_batch(t.keys[0].public, cts, ShareBatch(batch.shares, proof), CTX)
    with pytest.raises(ProofError):
        verify_share_batch(t.keys[1].public, cts, batch, CTX)
    with pytest.raises(ProofError):
        verify_share_batch(t.keys[0].public, cts[::-1], batch, CTX)
    with pytest.raises(ProofError):
        verify_share_batch(t.keys[0].public, cts, batch, dataclasses.replace(CTX, log_index=1))
    with pytest.raises(ProofError) as e:
        verify_share_batch(t.keys[0].public, cts[:5], batch, CTX)
    assert e.value.field == "length"
    ident = ShareBatch((IDENTITY, *batch.shares[1:]), batch.proof)
    with pytest.raises(ProofError):
        verify_share_batch(t.keys[0].public, cts, ident, CTX)


def test_batch_decoding() -> None:
    t = Table(b"batch-dec")
    cts = [t.encrypt(c) for c in range(3)]
    wire = make_share_batch(t.keys[0], cts, CTX, t.rng).to_bytes()
    with pytest.raises(ProofError) as e:
        ShareBatch.from_bytes(wire[:32] + bytes(32) + wire[64:], 3, party=b"x")
    assert e.value.field == "share[1]" and e.value.party == b"x"
    with pytest.raises(ProofError):
        ShareBatch.from_bytes(wire, 4)
    with pytest.raises(ValueError):
        ShareBatch.from_bytes(wire, 0)


@pytest.mark.parametrize(
    "change", [{"table_id": b"t2"}, {"hand": 2}, {"log_index": 41}, {"prover": b"p2"}]
)
def test_batch_moved_to_another_context_is_rejected(change: dict[str, object]) -> None:
    t = Table(b"batch-ctx")
    cts = [t.encrypt(c) for c in range(4)]
    batch = make_share_batch(t.keys[3], cts, CTX, t.rng)
    verify_share_batch(t.keys[3].public, cts, batch, CTX)
    other = dataclasses.replace(CTX, **change)  # type: ignore[arg-type]
    with pytest.raises(ProofError) as e:
        verify_share_batch(t.keys[3].public, cts, batch, other)
    assert e.value.party == other.prover


def test_batch_every_byte_of_the_wire_form_matters() -> None:
    t = Table(b"batch-bytes")
    cts = [t.encrypt(c) for c in range(3)]
    wire = make_share_batch(t.keys[1], cts, CTX, t.rng).to_bytes()
    for i in range(len(wire)):
        b = bytearray(wire)
        b[i] ^= 0x01
        with pytest.raises(ProofError):
            verify_share_batch(t.keys[1].public, cts, ShareBatch.from_bytes(bytes(b), 3), CTX)


def test_identity_public_key_is_refused() -> None:
    t = Table(b"identity-public")
    ct = t.encrypt(5)
    share = make_share(t.keys[0], ct, CTX, t.rng)
    batch = make_share_batch(t.keys[0], [ct], CTX, t.rng)
    with pytest.raises(ProofError) as e:
        verify_share(IDENTITY, ct, share, CTX)
    assert e.value.field == "public" and e.value.party == CTX.prover
    with pytest.raises(ProofError) as e:
        verify_share_batch(IDENTITY, [ct], batch, CTX)
    assert e.value.field == "public"


def test_batch_weights_are_fixed_only_after_the_shares() -> None:
    """A cheater who knows its secret and could predict the weights z_i would pick two wrong
    shares whose errors cancel: D_a = x*c1_a + E, D_b = x*c1_b - (z_a/z_b)*E. It can only
    predict the weights of the shares it is not sending, and those change with the shares."""
    t = Table(b"batch-adaptive")
    kp = t.keys[1]
    cts = [t.encrypt(c) for c in (7, 40, 104)]
    honest = [own_share(kp, ct) for ct in cts]
    _, z = _batch_transcript(CTX, kp.public, cts, honest)
    err = card_point(0)
    ratio = -(z[0] * z[1].inverse())
    forged = (honest[0] + err, honest[1] + ratio * err, honest[2])
    # Under the weights the cheater predicted, the errors cancel: C and E still agree.
    big_c = multi_mul(z, [ct.c1 for ct in cts])
    assert multi_mul(z, forged) == kp.secret * big_c
    # Prove exactly as an honest prover would, with the predicted weights.
    tr, _ = _batch_transcript(CTX, kp.public, cts, honest)
    k = Scalar.random_nonzero(t.rng)
    c = _batch_challenge(tr, Point.base_mul(k), k * big_c)
    cheat = ShareBatch(forged, ChaumPedersenProof(c, k + c * kp.secret))
    with pytest.raises(ProofError):
        verify_share_batch(kp.public, cts, cheat, CTX)
    # The same forgery proven against the weights that the forged shares really get fails too.
    with pytest.raises(ProofError):
        verify_share_batch(kp.public, cts, _prove_anyway(kp, cts, forged, t), CTX)


def _prove_anyway(
    kp: KeyPair, cts: list[Ciphertext], shares: tuple[Point, ...], t: Table
) -> ShareBatch:
    tr, z = _batch_transcript(CTX, kp.public, cts, shares)
    big_c = multi_mul(z, [ct.c1 for ct in cts])
    k = Scalar.random_nonzero(t.rng)
    c = _batch_challenge(tr, Point.base_mul(k), k * big_c)
    return ShareBatch(shares, ChaumPedersenProof(c, k + c * kp.secret))


def test_a_repeating_random_source_does_not_repeat_the_nonce() -> None:
    """Shares of two ciphertexts (or two batches) proven from sources that replay the same
    bytes must not share a nonce: that would give the secret away as (s1 - s2) / (c1 - c2)."""
    t = Table(b"reused-shares")
    kp = t.keys[2]
    a, b = t.encrypt(1), t.encrypt(2)
    p1 = make_share(kp, a, CTX, DeterministicRandomSource(b"reused")).proof
    p2 = make_share(kp, b, CTX, DeterministicRandomSource(b"reused")).proof
    q1 = make_share_batch(kp, [a], CTX, DeterministicRandomSource(b"reused")).proof
    q2 = make_share_batch(kp, [a, b], CTX, DeterministicRandomSource(b"reused")).proof
    for one, two in ((p1, p2), (q1, q2)):
        guess = (one.response - two.response) * (one.challenge - two.challenge).inverse()
        assert guess != kp.secret
