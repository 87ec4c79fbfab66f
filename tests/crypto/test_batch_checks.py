"""The merged and batched checks: `linear_combination` is the plain sum of its terms, the
shuffle's combined check fails exactly when one of its equations does (and the error is then
the one-by-one check's), a deck folded by one check serves the next, and the types sent to
`verify --jobs` workers pickle to equal values."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

from buraco_p2p.crypto.elgamal import Ciphertext, deck_bytes, open_deck
from buraco_p2p.crypto.encoding import card_points
from buraco_p2p.crypto.errors import ProofError
from buraco_p2p.crypto.group import (
    BASE,
    IDENTITY,
    DeterministicRandomSource,
    L,
    Point,
    Scalar,
    linear_combination,
)
from buraco_p2p.crypto.keys import KeyPair
from buraco_p2p.crypto.shares import ChaumPedersenProof, ShareBatch, make_share_batch
from buraco_p2p.crypto.shuffle import (
    _FOLDED,
    ShuffleProof,
    _Batch,
    _check_each,
    _equations_hold,
    _final_challenge,
    _fold,
    _hand_side,
    _statement_transcript,
    _weights,
    generators,
    prove_shuffle,
    shuffle_deck,
    verify_shuffle,
)
from buraco_p2p.crypto.transcript import ProofContext

CTX = ProofContext(table_id=b"table-batch-0001", hand=3, log_index=17, prover=b"carol")
N = 5


# ---- linear_combination -----------------------------------------------------------------------


def _naive(terms: list[tuple[int, Point]]) -> Point:
    total = IDENTITY
    for v, p in terms:
        total = total + Scalar.from_int(v) * p
    return total


def test_linear_combination_is_the_plain_sum() -> None:
    rng = DeterministicRandomSource(b"lincomb")
    ps = [Point.random(rng) for _ in range(4)]
    big = int.from_bytes(rng.bytes(90), "little")
    terms = [
        (3, ps[0]),
        (-7, ps[1]),
        (big, ps[0]),  # a base named twice: merged
        (5, BASE),  # the generator: the fixed-base table
        (L - 5, BASE),  # ... whose coefficients cancel
        (11, IDENTITY),  # the identity: dropped
        (0, ps[2]),  # a zero coefficient: dropped
        (-big, ps[3]),
        (2 * L, ps[1]),
    ]
    assert linear_combination(terms) == _naive(terms)
    assert linear_combination([(1, BASE)]) == BASE
    assert linear_combination([(4, ps[0]), (-4, ps[0])]) == IDENTITY
    assert linear_combination([]) == IDENTITY


# ---- the shuffle's combined check -------------------------------------------------------------


class Shuffled:
    """An honest shuffle of an encrypted deck, with the challenges a verifier derives."""

    def __init__(self, seed: bytes, deck_in: tuple[Ciphertext, ...] | None = None) -> None:
        self.rng = DeterministicRandomSource(seed)
        self.y = Point.base_mul(Scalar.random_nonzero(self.rng))
        if deck_in is None:
            deck_in, _ = shuffle_deck(open_deck(card_points(104)[:N]), self.y, self.rng)
        self.deck_in = deck_in
        self.deck_out, witness = shuffle_deck(deck_in, self.y, self.rng)
        self.proof = prove_shuffle(CTX, self.y, deck_in, self.deck_out, witness, self.rng)
        self.gens = generators(CTX.table_id, CTX.hand, N)
        t, self.u = _statement_transcript(
            CTX,
            self.y,
            self.gens,
            deck_bytes(self.deck_in),
            deck_bytes(self.deck_out),
            self.proof.commitments,
        )
        p = self.proof
        self.c = _final_challenge(t, p.chain, (p.t1, p.t2, p.t3, p.t4_1, p.t4_2), p.t_hat)

    def holds(
        self,
        proof: ShuffleProof,
        deck_in: tuple[Ciphertext, ...] | None = None,
        deck_out: tuple[Ciphertext, ...] | None = None,
        *,
        fold_input: bool = False,
    ) -> bool:
        """`_equations_hold` with this shuffle's challenges, whatever the proof and decks."""
        deck_in = self.deck_in if deck_in is None else deck_in
        deck_out = self.deck_out if deck_out is None else deck_out
        rho = _weights(1, b"rho", proof.to_bytes())[0]
        batch = _Batch(
            weights=_weights(N + 2, b"weights", proof.to_bytes()),
            rho=rho,
            hand=_hand_side(CTX.table_id, CTX.hand, N),
            folded_in=_fold(deck_in, rho) if fold_input else None,
            folded_out=_fold(deck_out, rho),
        )
        return _equations_hold(self.y, self.gens, deck_in, proof, self.u, self.c, batch)

    def each_holds(
        self,
        proof: ShuffleProof,
        deck_in: tuple[Ciphertext, ...] | None = None,
        deck_out: tuple[Ciphertext, ...] | None = None,
    ) -> bool:
        deck_in = self.deck_in if deck_in is None else deck_in
        deck_out = self.deck_out if deck_out is None else deck_out
        try:
            _check_each(CTX, self.y, self.gens, deck_in, deck_out, proof, self.u, self.c)
        except ProofError:
            return False
        return True


@pytest.fixture(scope="module")
def shuffled() -> Shuffled:
    return Shuffled(b"batch")


def _bumped(v: Any) -> Any:
    return v + BASE if isinstance(v, Point) else v + Scalar.from_int(1)


def _mutations(proof: ShuffleProof) -> list[tuple[str, ShuffleProof]]:
    """Every element of the proof changed alone (the challenges kept: only the equations that
    name the element can fail)."""
    out = []
    for f in dataclasses.fields(ShuffleProof):
        v = getattr(proof, f.name)
        if isinstance(v, tuple):
            for i in range(len(v)):
                kw: dict[str, Any] = {f.name: (*v[:i], _bumped(v[i]), *v[i + 1 :])}
                out.append((f"{f.name}[{i}]", dataclasses.replace(proof, **kw)))
        else:
            kw = {f.name: _bumped(v)}
            out.append((f.name, dataclasses.replace(proof, **kw)))
    return out


@pytest.mark.parametrize("fold_input", [False, True], ids=["components", "folded"])
def test_the_combination_fails_exactly_when_an_equation_does(
    shuffled: Shuffled, fold_input: bool
) -> None:
    s = shuffled
    assert s.holds(s.proof, fold_input=fold_input) and s.each_holds(s.proof)
    for name, bad in _mutations(s.proof):
        assert not s.each_holds(bad), name
        assert not s.holds(bad, fold_input=fold_input), name
    for i in range(N):
        for comp in ("c1", "c2"):
            for side in ("in", "out"):
                deck = s.deck_in if side == "in" else s.deck_out
                e = deck[i]
                changed = dataclasses.replace(e, **{comp: _bumped(getattr(e, comp))})
                bad_deck = (*deck[:i], changed, *deck[i + 1 :])
                decks: dict[str, Any] = {"deck_in" if side == "in" else "deck_out": bad_deck}
                assert not s.each_holds(s.proof, **decks), (side, i, comp)
                assert not s.holds(s.proof, **decks, fold_input=fold_input), (side, i, comp)


@pytest.mark.parametrize(
    ("response", "index", "field"),
    [
        ("s1", None, "t1"),
        ("s2", None, "t2"),
        ("s3", None, "t3"),
        ("s4", None, "t4_1"),
        ("s_prime", 1, "t3"),
        ("s_hat", 3, "t_hat[3]"),
    ],
)
def test_a_refused_proof_names_the_first_equation_that_fails(
    shuffled: Shuffled, response: str, index: int | None, field: str
) -> None:
    # The responses are not hashed: changing one breaks only the equations that use it.
    s = shuffled
    v = getattr(s.proof, response)
    new = _bumped(v) if index is None else (*v[:index], _bumped(v[index]), *v[index + 1 :])
    kw: dict[str, Any] = {response: new}
    bad = dataclasses.replace(s.proof, **kw)
    with pytest.raises(ProofError) as e:
        verify_shuffle(CTX, s.y, s.deck_in, s.deck_out, bad)
    assert e.value.field == field and e.value.party == CTX.prover


def test_a_deck_folded_by_one_check_serves_the_next() -> None:
    first = Shuffled(b"chain-1")
    verify_shuffle(CTX, first.y, first.deck_in, first.deck_out, first.proof)
    cached = _FOLDED.get(deck_bytes(first.deck_out))
    assert cached is not None
    rho, folded = cached
    assert folded == tuple(e.c1 + Scalar(rho) * e.c2 for e in first.deck_out)

    # The next shuffle, from that deck under the same key.
    rng = DeterministicRandomSource(b"chain-2")
    deck_out, witness = shuffle_deck(first.deck_out, first.y, rng)
    proof = prove_shuffle(CTX, first.y, first.deck_out, deck_out, witness, rng)
    verify_shuffle(CTX, first.y, first.deck_out, deck_out, proof)
    assert _FOLDED.get(deck_bytes(deck_out)) is not None

    # With the input found folded, a bad proof is still refused, with the same field.
    bad = dataclasses.replace(proof, s_hat=(_bumped(proof.s_hat[0]), *proof.s_hat[1:]))
    assert _FOLDED.get(deck_bytes(first.deck_out)) is not None
    with pytest.raises(ProofError) as e:
        verify_shuffle(CTX, first.y, first.deck_out, deck_out, bad)
    assert e.value.field == "t_hat[0]"


def test_only_a_verified_output_is_folded() -> None:
    s = Shuffled(b"refused")
    bad = dataclasses.replace(s.proof, s3=_bumped(s.proof.s3))
    with pytest.raises(ProofError):
        verify_shuffle(CTX, s.y, s.deck_in, s.deck_out, bad)
    assert _FOLDED.get(deck_bytes(s.deck_out)) is None


# ---- what `verify --jobs` pickles -------------------------------------------------------------


def test_the_checks_arguments_pickle_to_equal_values() -> None:
    rng = DeterministicRandomSource(b"pickle")
    kp = KeyPair.generate(rng)
    deck, _ = shuffle_deck(open_deck(card_points(104)[:4]), kp.public, rng)
    batch = make_share_batch(kp, deck, CTX, rng)
    for value in (deck, CTX, batch, batch.proof):
        back = pickle.loads(pickle.dumps(value))
        assert back == value and type(back) is type(value)
    assert isinstance(batch, ShareBatch) and isinstance(batch.proof, ChaumPedersenProof)


def test_the_weights_are_a_function_of_what_they_weigh() -> None:
    """One proof gets the same weights in one process (a check made again repeats its
    arithmetic); another proof, or the same bytes framed otherwise, gets others."""
    w = _weights(4, b"weights", b"proof")
    assert w == _weights(4, b"weights", b"proof")
    assert all(0 <= x < L for x in w) and len(set(w)) == 4
    assert w != _weights(4, b"weights", b"proof!")
    assert w != _weights(4, b"weightsproof")
