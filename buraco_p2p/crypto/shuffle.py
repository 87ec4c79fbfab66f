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

Cost: the prover does about 6N variable-base and 4N fixed-base multiplications. The verifier
merges its N + 5 equations into one random linear combination (`verify_shuffle`): about 6N
variable-base multiplications and one of the generator when the input deck is the open one
(whose c1, the identity, are skipped) or the output of the shuffle this process verified just
before, 7N otherwise, and N more once per hand.
"""

from __future__ import annotations

import functools
import hashlib
import struct
import threading
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
    BASE,
    IDENTITY,
    DeterministicRandomSource,
    L,
    Point,
    RandomSource,
    Scalar,
    SystemRandomSource,
    linear_combination,
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
    """h (start of the commitment chain) and h_1..h_N (permutation commitment)."""

    h: Point
    hs: tuple[Point, ...]

    @property
    def h_sum(self) -> Point:
        """sum h_i, added up when asked: the combined check (`_equations_hold`) merges it into
        the h_i's own terms, so only the one-by-one check of a refused proof needs it."""
        total = IDENTITY
        for p in self.hs:
            total = total + p
        return total


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
    return Generators(h=pts[0], hs=tuple(pts[1:]))


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
    deck_in: bytes,
    deck_out: bytes,
    commitments: Sequence[Point],
) -> tuple[Transcript, list[Scalar]]:
    """The transcript up to the challenges u_1..u_N, and those challenges (the decks as
    `deck_bytes` gives them, N the number of commitments)."""
    n = len(commitments)
    t = Transcript.for_context(PROTOCOL_LABEL, ctx)
    t.append(b"n", n)
    t.append(b"table_key", table_key)
    t.append(b"generators", [gens.h, *gens.hs])
    t.append(b"input", deck_in)
    t.append(b"output", deck_out)
    t.append(b"commitments", list(commitments))
    return t, t.challenges(b"u", n)


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

    enc_in, enc_out = deck_bytes(deck_in), deck_bytes(deck_out)
    t, u = _statement_transcript(ctx, table_key, gens, enc_in, enc_out, cs)
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
    (with `party` = the prover of `ctx` and `field` = the first part that failed).

    The N + 5 equations are checked at once, as one random linear combination whose weights
    are the verifier's own: a keyed hash of the proof under a secret this process drew from
    the system's CSPRNG (`_weights`), so the prover cannot aim at them (`_equations_hold`
    says why that is sound and what it saves). Only when the combination fails are they
    checked one by one, to name the first that does not hold, so the verdict and its error
    are those of checking each equation alone."""
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
    enc_in, enc_out = deck_bytes(deck_in), deck_bytes(deck_out)
    t, u = _statement_transcript(ctx, table_key, gens, enc_in, enc_out, proof.commitments)
    c = _final_challenge(
        t, proof.chain, (proof.t1, proof.t2, proof.t3, proof.t4_1, proof.t4_2), proof.t_hat
    )
    weights = _weights(n + 2, b"weights", c.to_bytes(), proof.to_bytes())
    folded_in = _FOLDED.get(enc_in)
    rho = _hand_rho(ctx.table_id, ctx.hand, n) if folded_in is None else folded_in[0]
    folded_out = _fold(deck_out, rho)
    batch = _Batch(
        weights=weights,
        rho=rho,
        hand=_hand_side(ctx.table_id, ctx.hand, n),
        folded_in=None if folded_in is None else folded_in[1],
        folded_out=folded_out,
    )
    if _equations_hold(table_key, gens, deck_in, proof, u, c, batch):
        _FOLDED.put(enc_out, rho, folded_out)
    else:
        _check_each(ctx, table_key, gens, deck_in, deck_out, proof, u, c)


# The verifier's own secret, drawn once per process from the system's CSPRNG and shown to
# nobody: the weights of the combined check are derived from it and from what they weigh.
_VERIFIER_KEY: Final = SystemRandomSource().bytes(32)


def _weights(k: int, *weighed: bytes) -> list[int]:
    """k integers mod l, a keyed hash (BLAKE2b under `_VERIFIER_KEY`) of `weighed` (the proof
    and its challenge, or the hand), 64 bytes each, wide-reduced (bias below 2^-250).

    To a prover who does not know the key they are uniform and drawn after its proof is
    fixed, which is all the combined check's soundness needs (`_equations_hold`); and one
    proof always gets the same weights in one process, so a check made again (the same log
    audited twice, or a simulator's schedules over one deal) repeats the same arithmetic."""
    seed = hashlib.blake2b(
        b"".join(len(x).to_bytes(4, "big") + x for x in weighed),
        key=_VERIFIER_KEY, digest_size=64, person=b"buraco-shuffle-w",
    ).digest()  # fmt: skip
    return [
        int.from_bytes(hashlib.blake2b(i.to_bytes(4, "big"), key=seed).digest(), "little") % L
        for i in range(k)
    ]


def _hand_key(table_id: bytes, hand: int, n: int) -> tuple[bytes, ...]:
    return (table_id, hand.to_bytes(8, "big"), n.to_bytes(4, "big"))


def _hand_rho(table_id: bytes, hand: int, n: int) -> int:
    """rho, t4_2's weight relative to t4_1's, for the decks of one hand (`_fold`): one value
    for the hand, so that a deck folded as one shuffle's output serves the next as input."""
    return _weights(1, b"rho", *_hand_key(table_id, hand, n))[0]


def _fold(deck: Sequence[Ciphertext], rho: int) -> tuple[Point, ...]:
    """c1_i + rho*c2_i for every ciphertext of the deck: its two components in one point."""
    r = Scalar(rho)
    return tuple(e.c1 + r * e.c2 for e in deck)


@dataclass(frozen=True, slots=True)
class _HandSide:
    """What the verifier keeps for the shuffles of one hand: sigma (its own secret weight of
    t3 relative to t4's), sigma*h_i for each generator, and sum h_i."""

    sigma: int
    scaled: tuple[Point, ...]
    h_sum: Point


@functools.lru_cache(maxsize=4)
def _hand_side(table_id: bytes, hand: int, n: int) -> _HandSide:
    """`_HandSide` for the generators of (table, hand, n), sigma one value for the hand.

    The generators are the same in all the hand's shuffles, and in each check s'_i weighs h_i
    (in t3) as it weighs the i-th output ciphertext (in t4): with t3 weighted sigma times t4,
    h_i joins that ciphertext's folded point (`_fold`) at the cost of one addition, where it
    took a multiplication of its own. The N multiplications of sigma*h_i are made once for all
    the hand's shuffles."""
    gens = generators(table_id, hand, n)
    sigma = _weights(1, b"sigma", *_hand_key(table_id, hand, n))[0]
    s = Scalar(sigma)
    return _HandSide(sigma, tuple(s * h for h in gens.hs), gens.h_sum)


class _FoldedDecks:
    """The last few output decks whose shuffle this process verified, folded (`_fold`) with
    the rho their check used, keyed by their encoding.

    The output of one shuffle is the input of the next. Folded once, a deck's 2N components
    enter the checks of both shuffles as N points: its check as an output costs no more
    (N multiplications to fold, N to weigh the folds, where the components took 2N), and its
    check as the next shuffle's input then saves N multiplications and N additions. The
    entries are pure functions of the deck's bytes and of rho, so a hit is exact whatever
    asks; rho is derived from this process's secret, never shown to anyone (see
    `_equations_hold`)."""

    _SIZE: Final = 4  # a hand's shuffles follow each other: the last deck or two are enough

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[bytes, tuple[int, tuple[Point, ...]]] = {}

    def get(self, deck: bytes) -> tuple[int, tuple[Point, ...]] | None:
        with self._lock:
            return self._entries.get(deck)

    def put(self, deck: bytes, rho: int, folded: tuple[Point, ...]) -> None:
        with self._lock:
            self._entries.pop(deck, None)
            self._entries[deck] = (rho, folded)
            while len(self._entries) > self._SIZE:
                del self._entries[next(iter(self._entries))]


_FOLDED: Final = _FoldedDecks()


@dataclass(frozen=True, slots=True)
class _Batch:
    """The verifier's side of one combined check: N + 2 weights of its own (t2, t4_1 and the N
    chain links), rho (t4_2's weight relative to t4_1's), the hand's sigma (t3's) and the
    decks folded with rho (the input's only when `_FOLDED` had it)."""

    weights: Sequence[int]
    rho: int
    hand: _HandSide
    folded_in: tuple[Point, ...] | None
    folded_out: tuple[Point, ...]


def _equations_hold(
    table_key: Point,
    gens: Generators,
    deck_in: Sequence[Ciphertext],
    proof: ShuffleProof,
    u: Sequence[Scalar],
    c: Scalar,
    batch: _Batch,
) -> bool:
    """Whether E1 + w2*E2 + w4*(sigma*E3 + E4_1 + rho*E4_2) + sum_i w_i*E5_i = 0, the E being
    the proof's equations written `... - t = 0` (those of `_check_each`, E5_i the chain
    links), the w weights uniform to the prover, rho and sigma too.

    Sound: ristretto255 has prime order l. If (E3, E4_1, E4_2) is not all the identity,
    sigma*E3 + E4_1 + rho*E4_2 is the identity for at most one value of sigma (E3 not the
    identity) or of rho (else); and if any term of the outer sum is not the identity, the sum
    is an affine function of that term's uniform weight (of E1 alone when only it is left)
    with a non-zero slope, the identity for at most one value of it. So a false proof passes
    with probability at most 2/l, provided the prover cannot know the weights, rho or sigma:
    all are derived from the key this process drew and shows to nobody (`_weights`). Those
    kept from an earlier check (sigma for the hand, rho with a folded deck) are no exception:
    all a prover sees of them is whether earlier proofs were accepted, which for a true proof
    does not depend on them, and a refused false one rules out one value of them at most.

    Cheaper: checked one by one the equations take about 8N variable-base multiplications,
    N of the generator and 10N additions. Combined, each point is multiplied once by the sum
    of its coefficients (c_i for t1 and t3, c-hat_i for its two chain links, the generator for
    all of them), the i-th output ciphertext and h_i share one multiplication through the
    folded deck and the hand's sigma*h_i, and the input deck comes folded from the check
    before or has c1 the identity (the open deck): 6N multiplications and 7N additions, one
    N more of each when the input comes from a shuffle this process did not check.
    """
    n = len(deck_in)
    cv = c.value
    w2, w4 = batch.weights[:2]
    wh = batch.weights[2:]
    w4r = w4 * batch.rho
    w3 = w4 * batch.hand.sigma
    s4 = proof.s4.value
    sp = [s.value for s in proof.s_prime]
    uv = [x.value for x in u]
    u_prod = 1
    for x in uv:
        u_prod = u_prod * x % L
    g = proof.s1.value + w2 * proof.s2.value + w3 * proof.s3.value - w4 * s4
    g += sum(w * s.value for w, s in zip(wh, proof.s_hat, strict=True))
    terms: list[tuple[int, Point]] = [
        (g, BASE),
        (w2 * cv * u_prod + wh[0] * sp[0], gens.h),
        (cv, batch.hand.h_sum),
        (-w4r * s4, table_key),
        (-w2, proof.t2),
        (-w3, proof.t3),
        (-w4, proof.t4_1),
        (-w4r, proof.t4_2),
    ]
    folded_in, folded_out, scaled = batch.folded_in, batch.folded_out, batch.hand.scaled
    for i in range(n):
        cu = cv * uv[i]
        link = wh[i + 1] * sp[i + 1] if i + 1 < n else -w2 * cv
        terms += (
            (-cv - w3 * cu, proof.commitments[i]),
            (w4 * sp[i], folded_out[i] + scaled[i]),
            (link - cv * wh[i], proof.chain[i]),
            (-wh[i], proof.t_hat[i]),
        )
        if folded_in is None:
            terms += ((-w4 * cu, deck_in[i].c1), (-w4r * cu, deck_in[i].c2))
        else:
            terms.append((-w4 * cu, folded_in[i]))
    return linear_combination(terms) == proof.t1


def _check_each(
    ctx: ProofContext,
    table_key: Point,
    gens: Generators,
    deck_in: Sequence[Ciphertext],
    deck_out: Sequence[Ciphertext],
    proof: ShuffleProof,
    u: Sequence[Scalar],
    c: Scalar,
) -> None:
    """The proof's equations one at a time, in the order of docs/protocol.md: raise the
    ProofError of the first that does not hold."""
    n = len(deck_in)
    cs, chain = proof.commitments, proof.chain
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
