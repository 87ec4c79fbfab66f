"""Verifiable shuffle of an ElGamal deck: the Terelius-Wikstrom proof of shuffle.

A shuffler re-randomises every ciphertext of the deck and permutes them; the proof convinces
anyone holding the input and output decks that the output is a re-encryption of a permutation of
the input (nothing dropped, duplicated or replaced), and reveals nothing about the permutation.

The proof follows Haenni, Locher, Koenig and Dubuis, "Pseudo-code algorithms for verifiable
re-encryption mix-nets" (FC 2017 workshops): GenShuffle, GenPermutationCommitment,
GenCommitmentChain, GenProof and CheckProof, written additively over ristretto255. Its equations,
the byte layout of a proof and every hash input are specified in docs/protocol.md, section 1.7.

Generators h, h_1..h_N come from hash-to-group of the table id, hand number and deck size, so
nobody knows a discrete-log relation between them (which is what binds the permutation
commitment). All challenges come from one Fiat-Shamir transcript bound to the proof context
(table id, hand, log index, prover), the table key, the generators, both decks and all the
prover's commitments: a proof made for one context is useless in any other.

Cost: the prover does about 6N variable-base and 4N fixed-base multiplications, the verifier
about 8N and N; multiplications whose point is the identity (the open deck's c1) are skipped.
"""

from __future__ import annotations

import functools
import hashlib
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from buraco_p2p.crypto.elgamal import (
    Ciphertext,
    InvalidCiphertext,
    deck_bytes,
    decode_deck,
)
from buraco_p2p.crypto.errors import CryptoError, ProofError
from buraco_p2p.crypto.group import (
    IDENTITY,
    DeterministicRandomSource,
    Point,
    RandomSource,
    Scalar,
    multi_mul,
)
from buraco_p2p.crypto.transcript import ProofContext, Transcript

__all__ = [
    "GENERATOR_DOMAIN",
    "HEDGE_TAG",
    "PROTOCOL_LABEL",
    "Generators",
    "ShuffleProof",
    "ShuffleWitness",
    "generators",
    "hedged_source",
    "proof_size",
    "prove_shuffle",
    "random_permutation",
    "shuffle_and_prove",
    "shuffle_deck",
    "verify_shuffle",
]

_T = TypeVar("_T")

PROTOCOL_LABEL: Final = b"buraco-p2p/shuffle/v1"
GENERATOR_DOMAIN: Final = b"buraco-p2p/shuffle/v1/generators"
_PROOF = "shuffle"


# ---------------------------------------------------------------------------------------------
# Generators


@dataclass(frozen=True, slots=True)
class Generators:
    """h (start of the commitment chain), h_1..h_N (permutation commitment), and sum of h_i."""

    h: Point
    hs: tuple[Point, ...]
    h_sum: Point


def _generator_message(table_id: bytes, hand: int, n: int, i: int) -> bytes:
    return struct.pack(">I", len(table_id)) + table_id + struct.pack(">QII", hand, n, i)


@functools.lru_cache(maxsize=32)
def generators(table_id: bytes, hand: int, n: int) -> Generators:
    """The independent generators of one hand's shuffles, index 0 is h, 1..n are h_1..h_n.

    They depend only on the table, the hand and the deck size, so the four shuffles of a hand
    share them and each peer derives them once.
    """
    if not isinstance(table_id, bytes):
        raise TypeError("table_id is bytes")
    if n <= 0:
        raise ValueError(f"a deck has at least one card, not {n}")
    pts = [
        Point.hash_to_group(GENERATOR_DOMAIN, _generator_message(table_id, hand, n, i))
        for i in range(n + 1)
    ]
    total = IDENTITY
    for p in pts[1:]:
        total = total + p
    return Generators(h=pts[0], hs=tuple(pts[1:]), h_sum=total)


# ---------------------------------------------------------------------------------------------
# Shuffling


def _uniform_below(rng: RandomSource, m: int) -> int:
    """An unbiased integer in [0, m) by rejection sampling 64-bit draws."""
    limit = (1 << 64) - ((1 << 64) % m)
    while True:
        v = int.from_bytes(rng.bytes(8), "big")
        if v < limit:
            return v % m


def random_permutation(rng: RandomSource, n: int) -> tuple[int, ...]:
    """A uniform permutation of range(n) (Fisher-Yates with unbiased draws)."""
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = _uniform_below(rng, i + 1)
        p[i], p[j] = p[j], p[i]
    return tuple(p)


@dataclass(frozen=True, slots=True)
class ShuffleWitness:
    """What only the shuffler knows: output i is input `permutation[i]` re-randomised by
    `randomness[i]`. It must be kept secret (it links output cards to input cards)."""

    permutation: tuple[int, ...]
    randomness: tuple[Scalar, ...]


def _check_permutation(perm: Sequence[int], n: int) -> tuple[int, ...]:
    p = tuple(perm)
    if len(p) != n or sorted(p) != list(range(n)):
        raise ValueError(f"not a permutation of range({n})")
    return p


def shuffle_deck(
    deck: Sequence[Ciphertext],
    table_key: Point,
    rng: RandomSource,
    *,
    permutation: Sequence[int] | None = None,
) -> tuple[tuple[Ciphertext, ...], ShuffleWitness]:
    """GenShuffle: output i = ReEnc(input[perm[i]], r_i) with fresh non-zero r_i."""
    n = len(deck)
    if n == 0:
        raise ValueError("cannot shuffle an empty deck")
    perm = random_permutation(rng, n) if permutation is None else _check_permutation(permutation, n)
    rs = tuple(Scalar.random_nonzero(rng) for _ in range(n))
    out = tuple(deck[perm[i]].rerandomise(rs[i], table_key) for i in range(n))
    return out, ShuffleWitness(perm, rs)


# ---------------------------------------------------------------------------------------------
# The proof


@dataclass(frozen=True, slots=True)
class ShuffleProof:
    """A Terelius-Wikstrom proof, in the notation of Haenni et al.

    `commitments` is the permutation commitment c, `chain` the commitment chain c-hat,
    t1..t4_2 and `t_hat` the prover's first message, s1..s4, `s_hat`, `s_prime` its responses.
    """

    commitments: tuple[Point, ...]
    chain: tuple[Point, ...]
    t1: Point
    t2: Point
    t3: Point
    t4_1: Point
    t4_2: Point
    t_hat: tuple[Point, ...]
    s1: Scalar
    s2: Scalar
    s3: Scalar
    s4: Scalar
    s_hat: tuple[Scalar, ...]
    s_prime: tuple[Scalar, ...]

    @property
    def size(self) -> int:
        return len(self.commitments)

    def to_bytes(self) -> bytes:
        """commitments || chain || t1 t2 t3 t4_1 t4_2 || t_hat || s1 s2 s3 s4 || s_hat || s_prime,
        every element 32 bytes: (5N + 9) * 32 bytes in all."""
        parts: list[bytes] = [p.to_bytes() for p in self.commitments]
        parts += [p.to_bytes() for p in self.chain]
        parts += [p.to_bytes() for p in (self.t1, self.t2, self.t3, self.t4_1, self.t4_2)]
        parts += [p.to_bytes() for p in self.t_hat]
        parts += [s.to_bytes() for s in (self.s1, self.s2, self.s3, self.s4)]
        parts += [s.to_bytes() for s in self.s_hat]
        parts += [s.to_bytes() for s in self.s_prime]
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, b: bytes, n: int, *, party: object = None) -> ShuffleProof:
        """Decode a proof for a deck of n, checking every point (canonical, not the identity)
        and every scalar (canonical); raises ProofError naming the first bad field."""
        if not isinstance(b, bytes | bytearray | memoryview):
            raise ProofError(_PROOF, f"a proof must be bytes, not {type(b).__name__}", party=party)
        b = bytes(b)
        if n <= 0:
            raise ValueError(f"deck size must be positive, not {n}")
        if len(b) != proof_size(n):
            raise ProofError(
                _PROOF,
                f"a proof for {n} cards is {proof_size(n)} bytes, got {len(b)}",
                field="length",
                party=party,
            )
        pos = 0

        def take(name: str, count: int, decode: Callable[[bytes], _T]) -> list[_T]:
            nonlocal pos
            out = []
            for i in range(count):
                chunk = b[pos : pos + 32]
                pos += 32
                try:
                    out.append(decode(chunk))
                except CryptoError as e:
                    field = name if count == 1 else f"{name}[{i}]"
                    raise ProofError(_PROOF, str(e), field=field, party=party) from e
            return out

        def points(name: str, count: int) -> list[Point]:
            return take(name, count, Point.from_bytes)

        def scalars(name: str, count: int) -> list[Scalar]:
            return take(name, count, Scalar.from_bytes)

        cs = points("commitments", n)
        chain = points("chain", n)
        (t1,) = points("t1", 1)
        (t2,) = points("t2", 1)
        (t3,) = points("t3", 1)
        (t41,) = points("t4_1", 1)
        (t42,) = points("t4_2", 1)
        t_hat = points("t_hat", n)
        (s1,) = scalars("s1", 1)
        (s2,) = scalars("s2", 1)
        (s3,) = scalars("s3", 1)
        (s4,) = scalars("s4", 1)
        s_hat = scalars("s_hat", n)
        s_prime = scalars("s_prime", n)
        return cls(
            tuple(cs), tuple(chain), t1, t2, t3, t41, t42, tuple(t_hat),
            s1, s2, s3, s4, tuple(s_hat), tuple(s_prime),
        )  # fmt: skip


def proof_size(n: int) -> int:
    """Bytes in the encoding of a proof for a deck of n cards."""
    return (5 * n + 9) * 32


def _statement_transcript(
    ctx: ProofContext,
    table_key: Point,
    gens: Generators,
    deck_in: Sequence[Ciphertext],
    deck_out: Sequence[Ciphertext],
    commitments: Sequence[Point],
) -> tuple[Transcript, list[Scalar]]:
    """The transcript up to the challenges u_1..u_N, and those challenges."""
    t = Transcript.for_context(PROTOCOL_LABEL, ctx)
    t.append(b"n", len(deck_in))
    t.append(b"table_key", table_key)
    t.append(b"generators", [gens.h, *gens.hs])
    t.append(b"input", deck_bytes(deck_in))
    t.append(b"output", deck_bytes(deck_out))
    t.append(b"commitments", list(commitments))
    return t, t.challenges(b"u", len(deck_in))


def _final_challenge(
    t: Transcript, chain: Sequence[Point], ts: Sequence[Point], t_hat: Sequence[Point]
) -> Scalar:
    t.append(b"chain", list(chain))
    t.append(b"t", list(ts))
    t.append(b"t_hat", list(t_hat))
    return t.challenge(b"c")


def prove_shuffle(
    ctx: ProofContext,
    table_key: Point,
    deck_in: Sequence[Ciphertext],
    deck_out: Sequence[Ciphertext],
    witness: ShuffleWitness,
    rng: RandomSource,
) -> ShuffleProof:
    """GenProof: prove that `deck_out` is `deck_in` permuted and re-randomised by `witness`."""
    n = len(deck_in)
    if n == 0 or len(deck_out) != n:
        raise ValueError("input and output decks must have the same, non-zero size")
    perm = _check_permutation(witness.permutation, n)
    rr = witness.randomness
    if len(rr) != n:
        raise ValueError("one re-encryption factor per card is needed")
    gens = generators(ctx.table_id, ctx.hand, n)
    rand = functools.partial(Scalar.random, rng)

    # GenPermutationCommitment: c_{perm[i]} = r_{perm[i]}*G + h_i.
    r = [rand() for _ in range(n)]
    cs: list[Point] = [IDENTITY] * n
    for i, j in enumerate(perm):
        cs[j] = Point.base_mul(r[j]) + gens.hs[i]

    t, u = _statement_transcript(ctx, table_key, gens, deck_in, deck_out, cs)
    u_p = [u[perm[i]] for i in range(n)]

    # GenCommitmentChain: c-hat_i = r-hat_i*G + u'_i * c-hat_{i-1}, c-hat_0 = h.
    r_hat = [rand() for _ in range(n)]
    chain: list[Point] = []
    prev = gens.h
    for i in range(n):
        prev = Point.base_mul(r_hat[i]) + u_p[i] * prev
        chain.append(prev)

    # The aggregated witnesses.
    zero = Scalar.from_int(0)
    r_bar = sum(r, zero)
    v = [Scalar.from_int(1)] * n
    for i in range(n - 1, 0, -1):
        v[i - 1] = u_p[i] * v[i]
    r_hat_agg = sum((r_hat[i] * v[i] for i in range(n)), zero)
    r_tilde = sum((r[i] * u[i] for i in range(n)), zero)
    r_prime = sum((rr[i] * u_p[i] for i in range(n)), zero)

    w1, w2, w3, w4 = rand(), rand(), rand(), rand()
    w_hat = [rand() for _ in range(n)]
    w_prime = [rand() for _ in range(n)]

    t1 = Point.base_mul(w1)
    t2 = Point.base_mul(w2)
    t3 = Point.base_mul(w3) + multi_mul(w_prime, gens.hs)
    # sum w'_i * e'_i, computed from the input side: e'_i = e_{perm[i]} + r_i*(G, Y). The open
    # deck's c1 are all the identity, so its c1 part costs a single base multiplication.
    w_r = sum((w_prime[i] * rr[i] for i in range(n)), zero)
    in_c1 = [deck_in[perm[i]].c1 for i in range(n)]
    in_c2 = [deck_in[perm[i]].c2 for i in range(n)]
    t4_1 = multi_mul(w_prime, in_c1) + Point.base_mul(w_r - w4)
    t4_2 = multi_mul(w_prime, in_c2) + (w_r - w4) * table_key
    t_hat = []
    prev = gens.h
    for i in range(n):
        t_hat.append(Point.base_mul(w_hat[i]) + w_prime[i] * prev)
        prev = chain[i]

    c = _final_challenge(t, chain, (t1, t2, t3, t4_1, t4_2), t_hat)
    return ShuffleProof(
        commitments=tuple(cs),
        chain=tuple(chain),
        t1=t1,
        t2=t2,
        t3=t3,
        t4_1=t4_1,
        t4_2=t4_2,
        t_hat=tuple(t_hat),
        s1=w1 + c * r_bar,
        s2=w2 + c * r_hat_agg,
        s3=w3 + c * r_tilde,
        s4=w4 + c * r_prime,
        s_hat=tuple(w_hat[i] + c * r_hat[i] for i in range(n)),
        s_prime=tuple(w_prime[i] + c * u_p[i] for i in range(n)),
    )


HEDGE_TAG: Final = b"buraco-p2p/shuffle/v1/hedge"


def hedged_source(
    ctx: ProofContext, table_key: Point, deck_in: Sequence[Ciphertext], rng: RandomSource
) -> DeterministicRandomSource:
    """The stream a shuffler draws everything from: seeded by 32 bytes of `rng` and the
    statement known before shuffling (context, table key, input deck).

    A source that repeats itself (reseeded, restored) would otherwise give two different
    statements the same permutation and the same proof randomness w', and the two proofs'
    responses s'_i = w'_i + c*u_{psi(i)} would give the permutation away. With the statement
    hashed in, a repeat of the source only ever repeats the very same shuffle.
    """
    t = Transcript.for_context(PROTOCOL_LABEL, ctx)
    t.append(b"table_key", table_key)
    t.append(b"input", deck_bytes(deck_in))
    seed = hashlib.sha512(
        struct.pack(">I", len(HEDGE_TAG)) + HEDGE_TAG + rng.bytes(32) + t.challenge_bytes(b"hedge")
    ).digest()
    return DeterministicRandomSource(seed)


def shuffle_and_prove(
    ctx: ProofContext, table_key: Point, deck_in: Sequence[Ciphertext], rng: RandomSource
) -> tuple[tuple[Ciphertext, ...], ShuffleProof]:
    """Shuffle a deck and prove it, drawing from `hedged_source`; the witness is dropped, so
    the permutation stays secret."""
    stream = hedged_source(ctx, table_key, deck_in, rng)
    out, witness = shuffle_deck(deck_in, table_key, stream)
    return out, prove_shuffle(ctx, table_key, deck_in, out, witness, stream)


def _fail(ctx: ProofContext, field: str, reason: str) -> ProofError:
    return ProofError(_PROOF, reason, field=field, party=ctx.prover)


def verify_shuffle(
    ctx: ProofContext,
    table_key: Point,
    deck_in: Sequence[Ciphertext],
    deck_out: Sequence[Ciphertext],
    proof: ShuffleProof,
) -> None:
    """CheckProof: return if `deck_out` is a proven shuffle of `deck_in`, else raise ProofError
    (with `party` = the prover of `ctx` and `field` = the first part that failed)."""
    n = len(deck_in)
    if n == 0:
        raise ValueError("cannot verify a shuffle of an empty deck")
    if not isinstance(table_key, Point) or table_key.is_identity():
        # Re-encryption under the identity leaves every c2 = M_c in the clear: such a "shuffle"
        # proves fine and hides nothing.
        raise _fail(ctx, "table_key", "the table key is the identity")
    if len(deck_out) != n:
        raise _fail(ctx, "output", f"output deck has {len(deck_out)} cards, input {n}")
    lens = {
        "commitments": len(proof.commitments),
        "chain": len(proof.chain),
        "t_hat": len(proof.t_hat),
        "s_hat": len(proof.s_hat),
        "s_prime": len(proof.s_prime),
    }
    for name, k in lens.items():
        if k != n:
            raise _fail(ctx, name, f"has {k} entries for a deck of {n}")
    seen_in = {c.to_bytes() for c in deck_in}
    seen_out: set[bytes] = set()
    for i, e in enumerate(deck_out):
        if e.c1.is_identity():
            raise _fail(ctx, f"output[{i}]", "c1 is the identity: the card is not encrypted")
        enc = e.to_bytes()
        if enc in seen_out:
            raise _fail(ctx, f"output[{i}]", "the same ciphertext appears twice in the output")
        if enc in seen_in:
            raise _fail(ctx, f"output[{i}]", "an input ciphertext copied without re-randomising")
        seen_out.add(enc)

    gens = generators(ctx.table_id, ctx.hand, n)
    cs, chain = proof.commitments, proof.chain
    t, u = _statement_transcript(ctx, table_key, gens, deck_in, deck_out, cs)
    c = _final_challenge(
        t, chain, (proof.t1, proof.t2, proof.t3, proof.t4_1, proof.t4_2), proof.t_hat
    )
    neg_c = -c
    neg_cu = [neg_c * ui for ui in u]

    # t1 = s1*G - c*(sum c_i - sum h_i)
    c_sum = IDENTITY
    for ci in cs:
        c_sum = c_sum + ci
    if Point.base_mul(proof.s1) + neg_c * (c_sum - gens.h_sum) != proof.t1:
        raise _fail(ctx, "t1", "permutation commitment: sum of openings does not check")

    # t2 = s2*G - c*(c-hat_N - (prod u_i)*h)
    u_prod = Scalar.from_int(1)
    for ui in u:
        u_prod = u_prod * ui
    if Point.base_mul(proof.s2) + neg_c * (chain[-1] - u_prod * gens.h) != proof.t2:
        raise _fail(ctx, "t2", "commitment chain does not end at the product of challenges")

    # t3 = s3*G + sum s'_i*h_i - c*sum u_i*c_i
    t3 = Point.base_mul(proof.s3) + multi_mul([*proof.s_prime, *neg_cu], [*gens.hs, *cs])
    if t3 != proof.t3:
        raise _fail(ctx, "t3", "permutation commitment does not match the responses")

    # t4 = sum s'_i*e'_i - s4*(G, Y) - c*sum u_i*e_i, one equation per component.
    neg_s4 = -proof.s4
    t41 = Point.base_mul(neg_s4) + multi_mul(
        [*proof.s_prime, *neg_cu], [e.c1 for e in deck_out] + [e.c1 for e in deck_in]
    )
    if t41 != proof.t4_1:
        raise _fail(ctx, "t4_1", "output deck is not a re-encryption of the input (c1)")
    t42 = neg_s4 * table_key + multi_mul(
        [*proof.s_prime, *neg_cu], [e.c2 for e in deck_out] + [e.c2 for e in deck_in]
    )
    if t42 != proof.t4_2:
        raise _fail(ctx, "t4_2", "output deck is not a re-encryption of the input (c2)")

    # t-hat_i = s-hat_i*G + s'_i*c-hat_{i-1} - c*c-hat_i
    prev = gens.h
    for i in range(n):
        expect = Point.base_mul(proof.s_hat[i]) + multi_mul(
            (proof.s_prime[i], neg_c), (prev, chain[i])
        )
        if expect != proof.t_hat[i]:
            raise _fail(ctx, f"t_hat[{i}]", "commitment chain link does not check")
        prev = chain[i]


def decode_and_verify(
    ctx: ProofContext,
    table_key: Point,
    deck_in: Sequence[Ciphertext],
    deck_out_bytes: bytes,
    proof_bytes: bytes,
) -> tuple[Ciphertext, ...]:
    """Decode a received output deck and proof, verify, and return the new deck.

    Every failure, malformed bytes included, is a ProofError naming the prover of `ctx`.
    """
    n = len(deck_in)
    try:
        deck_out = decode_deck(deck_out_bytes, n)
    except InvalidCiphertext as e:
        field = "output" if e.index is None else f"output[{e.index}]"
        raise _fail(ctx, field, e.reason) from e
    proof = ShuffleProof.from_bytes(proof_bytes, n, party=ctx.prover)
    verify_shuffle(ctx, table_key, deck_in, deck_out, proof)
    return deck_out


# ---------------------------------------------------------------------------------------------
# Test vector
