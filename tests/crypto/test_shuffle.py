"""The proof of shuffle: honest shuffles verify, every kind of cheat and every tampered field
is refused, and a proof is bound to its context."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_p2p.crypto.elgamal import Ciphertext, deck_bytes, encrypt, open_deck
from buraco_p2p.crypto.encoding import card_id_of, card_points
from buraco_p2p.crypto.errors import ProofError
from buraco_p2p.crypto.group import BASE, IDENTITY, DeterministicRandomSource, Point, Scalar
from buraco_p2p.crypto.shuffle import (
    ShuffleProof,
    ShuffleWitness,
    decode_and_verify,
    generators,
    proof_size,
    prove_shuffle,
    random_permutation,
    shuffle_and_prove,
    shuffle_deck,
    verify_shuffle,
)
from buraco_p2p.crypto.transcript import ProofContext
from protocol.gen.deck import shuffle_vector

CTX = ProofContext(table_id=b"table-0123456789", hand=2, log_index=9, prover=b"alice")
N = 6


class Setup:
    def __init__(self, seed: bytes, n: int = N, *, encrypted_input: bool = True) -> None:
        self.rng = DeterministicRandomSource(seed)
        self.x = Scalar.random_nonzero(self.rng)
        self.y = Point.base_mul(self.x)
        deck = open_deck(card_points(104)[:n])
        if encrypted_input:
            deck, _ = shuffle_deck(deck, self.y, self.rng)
        self.deck_in = deck
        self.deck_out, self.witness = shuffle_deck(deck, self.y, self.rng)
        self.proof = prove_shuffle(CTX, self.y, self.deck_in, self.deck_out, self.witness, self.rng)

    def cards(self, deck: tuple[Ciphertext, ...]) -> list[int]:
        return [card_id_of(c.c2 - self.x * c.c1) for c in deck]


@pytest.fixture(scope="module")
def setup() -> Setup:
    return Setup(b"test_shuffle")


def test_honest_shuffle_verifies_and_is_a_permutation(setup: Setup) -> None:
    verify_shuffle(CTX, setup.y, setup.deck_in, setup.deck_out, setup.proof)
    before, after = setup.cards(setup.deck_in), setup.cards(setup.deck_out)
    assert sorted(before) == sorted(after)
    assert after == [before[j] for j in setup.witness.permutation]


@pytest.mark.parametrize("n", [1, 2, 3, 52])
def test_completeness_from_open_deck(n: int) -> None:
    s = Setup(b"open-%d" % n, n, encrypted_input=False)
    verify_shuffle(CTX, s.y, s.deck_in, s.deck_out, s.proof)
    assert sorted(s.cards(s.deck_out)) == list(range(n))


def test_shuffle_and_prove_roundtrip_through_bytes() -> None:
    s = Setup(b"bytes")
    out, proof = shuffle_and_prove(CTX, s.y, s.deck_in, s.rng)
    b = proof.to_bytes()
    assert len(b) == proof_size(N)
    assert ShuffleProof.from_bytes(b, N) == proof
    assert decode_and_verify(CTX, s.y, s.deck_in, deck_bytes(out), b) == out


def test_generators_are_distinct_and_context_bound() -> None:
    g = generators(b"t1", 1, 20)
    pts = [g.h, *g.hs]
    assert len(set(pts)) == 21
    assert BASE not in pts
    assert generators(b"t2", 1, 20).h != g.h
    assert generators(b"t1", 2, 20).hs[0] != g.hs[0]
    assert generators(b"t1", 1, 21).hs[0] != g.hs[0]
    total = pts[1]
    for p in pts[2:]:
        total = total + p
    assert g.h_sum == total


def test_random_permutation_is_a_permutation_and_varies() -> None:
    rng = DeterministicRandomSource(b"perm")
    perms = {random_permutation(rng, 5) for _ in range(200)}
    assert all(sorted(p) == list(range(5)) for p in perms)
    assert len(perms) > 60  # 120 possible; a biased or constant generator would show


# ---- cheating shuffles ------------------------------------------------------------------------


def _reencrypt(c: Ciphertext, s: Setup) -> Ciphertext:
    return c.rerandomise(Scalar.random_nonzero(s.rng), s.y)


def _cheat_cases(s: Setup) -> dict[str, tuple[Ciphertext, ...]]:
    out = list(s.deck_out)
    perm = s.witness.permutation
    dup = list(out)
    dup[1] = _reencrypt(s.deck_in[perm[0]], s)  # card perm[0] twice, card perm[1] dropped
    replaced = list(out)
    other_card = card_points(104)[90]
    replaced[2] = encrypt(other_card, Scalar.random_nonzero(s.rng), s.y)
    reused = list(out)
    reused[3] = out[0]
    copied = list(out)
    copied[4] = s.deck_in[perm[4]]
    swapped = list(out)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    return {
        "duplicate-and-drop": tuple(dup),
        "replace": tuple(replaced),
        "reuse-output-ciphertext": tuple(reused),
        "copy-input-ciphertext": tuple(copied),
        "reorder-after-proof": tuple(swapped),
    }


@pytest.mark.parametrize(
    "case",
    [
        "duplicate-and-drop",
        "replace",
        "reuse-output-ciphertext",
        "copy-input-ciphertext",
        "reorder-after-proof",
    ],
)
def test_cheating_output_rejected_with_honest_proof(setup: Setup, case: str) -> None:
    bad = _cheat_cases(setup)[case]
    with pytest.raises(ProofError) as e:
        verify_shuffle(CTX, setup.y, setup.deck_in, bad, setup.proof)
    assert e.value.party == b"alice"
    assert e.value.proof == "shuffle"


@pytest.mark.parametrize("case", ["duplicate-and-drop", "replace"])
def test_cheating_output_rejected_with_proof_made_for_it(setup: Setup, case: str) -> None:
    # A prover that runs the honest algorithm on the cheating deck (with the witness that is
    # closest to it) cannot make the equations hold.
    bad = _cheat_cases(setup)[case]
    proof = prove_shuffle(CTX, setup.y, setup.deck_in, bad, setup.witness, setup.rng)
    with pytest.raises(ProofError):
        verify_shuffle(CTX, setup.y, setup.deck_in, bad, proof)


def test_dropped_card_changes_the_deck_size(setup: Setup) -> None:
    with pytest.raises(ProofError, match="output"):
        verify_shuffle(CTX, setup.y, setup.deck_in, setup.deck_out[:-1], setup.proof)


# ---- every field of the proof and of the output deck ------------------------------------------


def _bump_point(p: Point) -> Point:
    return p + BASE


def _bump_scalar(s: Scalar) -> Scalar:
    return s + Scalar.from_int(1)


def _with(proof: ShuffleProof, name: str, value: Any) -> ShuffleProof:
    kw: dict[str, Any] = {name: value}
    return dataclasses.replace(proof, **kw)


def _proof_mutations(proof: ShuffleProof) -> list[tuple[str, ShuffleProof]]:
    out = []
    for f in dataclasses.fields(ShuffleProof):
        v = getattr(proof, f.name)
        if isinstance(v, Point):
            out.append((f.name, _with(proof, f.name, _bump_point(v))))
        elif isinstance(v, Scalar):
            out.append((f.name, _with(proof, f.name, _bump_scalar(v))))
        else:
            for i in range(len(v)):
                item = v[i]
                new = _bump_point(item) if isinstance(item, Point) else _bump_scalar(item)
                vv = (*v[:i], new, *v[i + 1 :])
                out.append((f"{f.name}[{i}]", _with(proof, f.name, vv)))
    return out


def test_every_proof_field_mutated_is_rejected(setup: Setup) -> None:
    mutations = _proof_mutations(setup.proof)
    assert len(mutations) == 5 * N + 9
    for name, bad in mutations:
        with pytest.raises(ProofError):
            verify_shuffle(CTX, setup.y, setup.deck_in, setup.deck_out, bad)
        assert name  # the loop reached every field


def test_every_output_component_mutated_is_rejected(setup: Setup) -> None:
    for i in range(N):
        for comp in ("c1", "c2"):
            c = setup.deck_out[i]
            new = dataclasses.replace(c, **{comp: _bump_point(getattr(c, comp))})
            bad = (*setup.deck_out[:i], new, *setup.deck_out[i + 1 :])
            with pytest.raises(ProofError):
                verify_shuffle(CTX, setup.y, setup.deck_in, bad, setup.proof)


def test_every_input_component_mutated_is_rejected(setup: Setup) -> None:
    # The verifier's own input must be the one the proof speaks of.
    for i in range(N):
        c = setup.deck_in[i]
        new = dataclasses.replace(c, c2=_bump_point(c.c2))
        bad = (*setup.deck_in[:i], new, *setup.deck_in[i + 1 :])
        with pytest.raises(ProofError):
            verify_shuffle(CTX, setup.y, bad, setup.deck_out, setup.proof)


def test_every_encoded_element_flipped_is_rejected(setup: Setup) -> None:
    b = setup.proof.to_bytes()
    d = deck_bytes(setup.deck_out)
    for k in range(len(b) // 32):
        bad = bytearray(b)
        bad[32 * k] ^= 0x02
        with pytest.raises(ProofError):
            decode_and_verify(CTX, setup.y, setup.deck_in, d, bytes(bad))
    for k in range(len(d) // 32):
        bad = bytearray(d)
        bad[32 * k] ^= 0x02
        with pytest.raises(ProofError):
            decode_and_verify(CTX, setup.y, setup.deck_in, bytes(bad), b)


def test_malformed_encodings_name_the_field(setup: Setup) -> None:
    b = setup.proof.to_bytes()
    with pytest.raises(ProofError) as e:
        ShuffleProof.from_bytes(b[:-1], N, party=b"bob")
    assert e.value.field == "length" and e.value.party == b"bob"
    ident = b[: 32 * N] + bytes(32) + b[32 * N + 32 :]
    with pytest.raises(ProofError) as e:
        ShuffleProof.from_bytes(ident, N)
    assert e.value.field == "chain[0]"
    assert "identity" in str(e.value)
    over = b[:-32] + (2**255 - 1).to_bytes(32, "little")
    with pytest.raises(ProofError) as e:
        ShuffleProof.from_bytes(over, N)
    assert e.value.field == f"s_prime[{N - 1}]"
    noncanon = b"\xff" * 31 + b"\x7f"
    t1_at = 32 * 2 * N
    with pytest.raises(ProofError) as e:
        ShuffleProof.from_bytes(b[:t1_at] + noncanon + b[t1_at + 32 :], N)
    assert e.value.field == "t1"
    with pytest.raises(ProofError) as e:
        decode_and_verify(CTX, setup.y, setup.deck_in, deck_bytes(setup.deck_out)[:-64], b)
    assert e.value.field == "output"


# ---- context binding --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        lambda c: dataclasses.replace(c, table_id=b"table-other-0000"),
        lambda c: dataclasses.replace(c, hand=c.hand + 1),
        lambda c: dataclasses.replace(c, log_index=c.log_index + 1),
        lambda c: dataclasses.replace(c, prover=b"mallory"),
    ],
    ids=["table", "hand", "log_index", "prover"],
)
def test_proof_moved_to_another_context_is_rejected(
    setup: Setup, change: Callable[[ProofContext], ProofContext]
) -> None:
    other = change(CTX)
    with pytest.raises(ProofError) as e:
        verify_shuffle(other, setup.y, setup.deck_in, setup.deck_out, setup.proof)
    assert e.value.party == other.prover


def test_proof_under_another_table_key_is_rejected(setup: Setup) -> None:
    with pytest.raises(ProofError):
        verify_shuffle(CTX, setup.y + BASE, setup.deck_in, setup.deck_out, setup.proof)


# ---- property tests ---------------------------------------------------------------------------


@settings(max_examples=15)
@given(perm=st.permutations(list(range(5))), seed=st.binary(min_size=1, max_size=8))
def test_any_permutation_proves_and_the_wrong_one_does_not(perm: list[int], seed: bytes) -> None:
    rng = DeterministicRandomSource(seed)
    x = Scalar.random_nonzero(rng)
    y = Point.base_mul(x)
    deck = open_deck(card_points(104)[10:15])
    out, w = shuffle_deck(deck, y, rng, permutation=perm)
    assert w.permutation == tuple(perm)
    assert [card_id_of(c.c2 - x * c.c1) for c in out] == [10 + j for j in perm]
    proof = prove_shuffle(CTX, y, deck, out, w, rng)
    verify_shuffle(CTX, y, deck, out, proof)
    # The same output with a different claimed permutation cannot be proven.
    other = (perm[1], perm[0], *perm[2:])
    bad = prove_shuffle(CTX, y, deck, out, ShuffleWitness(tuple(other), w.randomness), rng)
    with pytest.raises(ProofError):
        verify_shuffle(CTX, y, deck, out, bad)


def test_witness_must_be_a_permutation(setup: Setup) -> None:
    w = ShuffleWitness((0,) * N, setup.witness.randomness)
    with pytest.raises(ValueError, match="permutation"):
        prove_shuffle(CTX, setup.y, setup.deck_in, setup.deck_out, w, setup.rng)


def test_vector_is_deterministic_and_verifies() -> None:
    v1 = shuffle_vector()
    v2 = shuffle_vector()
    assert v1 == v2
    n = v1["n"]
    assert isinstance(n, int)
    proof_hex = v1["proof"]
    assert isinstance(proof_hex, str)
    assert len(bytes.fromhex(proof_hex)) == proof_size(n)


def test_identity_table_key_is_refused() -> None:
    """Under Y = identity a re-encryption leaves c2 = M unchanged: a shuffle that proves fine
    and hides nothing. The verifier refuses that key whatever the proof says."""
    rng = DeterministicRandomSource(b"identity-key")
    deck = open_deck(card_points(104)[:N])
    out, proof = shuffle_and_prove(CTX, IDENTITY, deck, rng)
    assert sorted(c.c2.to_bytes() for c in out) == sorted(c.c2.to_bytes() for c in deck)
    with pytest.raises(ProofError) as e:
        verify_shuffle(CTX, IDENTITY, deck, out, proof)
    assert e.value.field == "table_key" and e.value.party == CTX.prover


def test_a_repeating_random_source_does_not_repeat_the_shuffle() -> None:
    """shuffle_and_prove from sources that replay the same bytes, for two different statements
    (here two log positions): the permutations and proof randomness must differ, or the two
    proofs' responses s'_i = w'_i + c*u'_i, with the same w', would give the permutation away."""
    rng = DeterministicRandomSource(b"repeat-key")
    x = Scalar.random_nonzero(rng)
    y = Point.base_mul(x)
    deck = open_deck(card_points(104)[:N])
    other = dataclasses.replace(CTX, log_index=CTX.log_index + 1)
    out1, proof1 = shuffle_and_prove(CTX, y, deck, DeterministicRandomSource(b"repeat"))
    out2, proof2 = shuffle_and_prove(other, y, deck, DeterministicRandomSource(b"repeat"))
    verify_shuffle(CTX, y, deck, out1, proof1)
    verify_shuffle(other, y, deck, out2, proof2)

    def cards(out: tuple[Ciphertext, ...]) -> list[int]:
        return [card_id_of(c.c2 - x * c.c1) for c in out]

    assert cards(out1) != cards(out2)
    # Same statement, same source: the same shuffle (a replay after a restart leaks nothing new).
    again, proof3 = shuffle_and_prove(CTX, y, deck, DeterministicRandomSource(b"repeat"))
    assert again == out1 and proof3 == proof1
