"""Schnorr key proofs: completeness, soundness field by field, context binding, aggregation."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.crypto.errors import InvalidScalar, ProofError
from buraco_p2p.crypto.group import BASE, ONE, ZERO, DeterministicRandomSource, L, Point, Scalar
from buraco_p2p.crypto.keys import (
    KeyAnnouncement,
    KeyPair,
    SchnorrProof,
    aggregate_key,
    prove_key,
    verify_key,
)
from buraco_p2p.crypto.transcript import ProofContext

CTX = ProofContext(table_id=b"table", hand=2, log_index=5, prover=b"p0")


def setup() -> tuple[KeyPair, SchnorrProof, DeterministicRandomSource]:
    rng = DeterministicRandomSource(b"keys")
    kp = KeyPair.generate(rng)
    return kp, prove_key(kp, CTX, rng), rng


def test_completeness_and_public_is_secret_times_base() -> None:
    kp, proof, _ = setup()
    assert kp.public == kp.secret * BASE
    verify_key(kp.public, proof, CTX)
    assert SchnorrProof.from_bytes(proof.to_bytes()) == proof
    assert len(proof.to_bytes()) == 64


@given(st.binary(min_size=1, max_size=16))
def test_completeness_for_any_seed(seed: bytes) -> None:
    rng = DeterministicRandomSource(seed)
    kp = KeyPair.generate(rng)
    verify_key(kp.public, prove_key(kp, CTX, rng), CTX)


def test_secret_not_in_repr() -> None:
    kp, _, _ = setup()
    assert kp.secret.to_bytes().hex() not in repr(kp)


@pytest.mark.parametrize("field", ["challenge", "response"])
def test_each_proof_field_mutated_is_rejected(field: str) -> None:
    kp, proof, _ = setup()
    bad = dataclasses.replace(proof, **{field: getattr(proof, field) + ONE})
    with pytest.raises(ProofError) as e:
        verify_key(kp.public, bad, CTX)
    assert e.value.party == b"p0" and e.value.proof == "schnorr"


def test_every_byte_of_the_wire_form_matters() -> None:
    kp, proof, _ = setup()
    ann = KeyAnnouncement(CTX, kp.public, proof).to_bytes()
    for i in range(len(ann)):
        for bit in (0x01, 0x80):
            b = bytearray(ann)
            b[i] ^= bit
            with pytest.raises(ProofError):
                KeyAnnouncement.from_bytes(CTX, bytes(b)).verify()


def test_proof_for_another_key_is_rejected() -> None:
    _kp, proof, rng = setup()
    other = KeyPair.generate(rng)
    with pytest.raises(ProofError):
        verify_key(other.public, proof, CTX)


@pytest.mark.parametrize(
    "change",
    [
        {"table_id": b"other"},
        {"hand": 3},
        {"log_index": 6},
        {"prover": b"p1"},
    ],
)
def test_proof_moved_to_another_context_is_rejected(change: dict[str, object]) -> None:
    kp, proof, _ = setup()
    with pytest.raises(ProofError):
        verify_key(kp.public, proof, dataclasses.replace(CTX, **change))  # type: ignore[arg-type]


def test_rogue_key_without_knowledge_is_rejected() -> None:
    # A rogue key Y_m = x*G - Y_0 has no known discrete log; the best a cheater can do is to
    # reuse a proof made for x*G, which fails for Y_m.
    rng = DeterministicRandomSource(b"rogue")
    honest = KeyPair.generate(rng)
    cheater = KeyPair.generate(rng)
    rogue = cheater.public - honest.public
    forged = prove_key(cheater, dataclasses.replace(CTX, prover=b"m"), rng)
    anns = [
        KeyAnnouncement.create(honest, CTX, rng),
        KeyAnnouncement(dataclasses.replace(CTX, prover=b"m"), rogue, forged),
    ]
    with pytest.raises(ProofError) as e:
        aggregate_key(anns)
    assert e.value.party == b"m"


def test_decoding_errors_name_the_field() -> None:
    _kp, proof, _ = setup()
    big = (L + 1).to_bytes(32, "little")
    with pytest.raises(ProofError) as e:
        SchnorrProof.from_bytes(big + proof.response.to_bytes())
    assert e.value.field == "challenge"
    with pytest.raises(ProofError) as e:
        SchnorrProof.from_bytes(proof.challenge.to_bytes() + b"\xff" * 32)
    assert e.value.field == "response"
    with pytest.raises(ProofError) as e:
        SchnorrProof.from_bytes(proof.to_bytes()[:63])
    assert e.value.field == "length"
    with pytest.raises(ProofError) as e:
        KeyAnnouncement.from_bytes(CTX, bytes(32) + proof.to_bytes())
    assert e.value.field == "public" and e.value.party == b"p0"
    with pytest.raises(ProofError) as e:
        KeyAnnouncement.from_bytes(CTX, b"\xff" * 32 + proof.to_bytes())
    assert e.value.field == "public"


def test_identity_key_rejected() -> None:
    _, proof, _ = setup()
    with pytest.raises(ProofError):
        verify_key(Point.from_bytes(bytes(32), allow_identity=True), proof, CTX)
    with pytest.raises(InvalidScalar):
        KeyPair.from_secret(ZERO)


def test_aggregate_key_is_the_sum_and_checks_everything() -> None:
    rng = DeterministicRandomSource(b"agg")
    kps = [KeyPair.generate(rng) for _ in range(4)]
    ctxs = [dataclasses.replace(CTX, prover=bytes([i]), log_index=10 + i) for i in range(4)]
    anns = [KeyAnnouncement.create(k, c, rng) for k, c in zip(kps, ctxs, strict=True)]
    total = Point.base_mul(sum((k.secret for k in kps), ZERO))
    assert aggregate_key(anns) == total
    # one bad proof anywhere: refused, naming that prover
    for i in range(4):
        bad = list(anns)
        p = anns[i].proof
        bad[i] = dataclasses.replace(anns[i], proof=SchnorrProof(p.challenge, p.response + ONE))
        with pytest.raises(ProofError) as e:
            aggregate_key(bad)
        assert e.value.party == bytes([i])
    # replayed announcement (same prover twice) and a copied key under another name
    with pytest.raises(ProofError):
        aggregate_key([*anns, anns[0]])
    copied = KeyAnnouncement(ctxs[1], anns[0].public, anns[0].proof)
    with pytest.raises(ProofError):
        aggregate_key([anns[0], copied])
    with pytest.raises(ValueError):
        aggregate_key([])


def test_key_generation_uses_the_injected_source() -> None:
    a = KeyPair.generate(DeterministicRandomSource(b"same"))
    b = KeyPair.generate(DeterministicRandomSource(b"same"))
    c = KeyPair.generate(DeterministicRandomSource(b"different"))
    assert a == b and a.public != c.public
    assert KeyPair.from_secret(a.secret) == a
    assert isinstance(a.secret, Scalar)


def test_a_repeating_random_source_does_not_repeat_the_nonce() -> None:
    """Two proofs of one key for two contexts, made from sources that replay the same bytes (a
    reseeded test source, a restored snapshot): with k drawn from the source alone both would
    use the same k and (s1 - s2) / (c1 - c2) would be the secret."""
    kp = KeyPair.generate(DeterministicRandomSource(b"reused-key"))
    ctx2 = dataclasses.replace(CTX, log_index=CTX.log_index + 1)
    p1 = prove_key(kp, CTX, DeterministicRandomSource(b"reused"))
    p2 = prove_key(kp, ctx2, DeterministicRandomSource(b"reused"))
    verify_key(kp.public, p1, CTX)
    verify_key(kp.public, p2, ctx2)
    guess = (p1.response - p2.response) * (p1.challenge - p2.challenge).inverse()
    assert guess != kp.secret
