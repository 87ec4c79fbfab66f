"""Decryption shares with Chaum-Pedersen proofs, and opening a ciphertext to a card.

A card slot holds an ElGamal ciphertext (c1, c2) = (r*G, M + r*Y) under Y = sum Y_j. Player j's
decryption share is D_j = x_j*c1, published with a Chaum-Pedersen proof that
log_G(Y_j) = log_c1(D_j): the share was made with the same secret as the announced key. With all
shares, M = c2 - sum D_j, which must be one of the card points.

- Private reveal: the others publish their shares; only the owner adds its own, locally
  (`own_share`), so only the owner learns the card.
- Public reveal: everyone, owner included, publishes a share; anyone can open the slot.

A proof is (c, s): A = s*G - c*Y_j, B = s*c1 - c*D_j, c = H(ctx, G, Y_j, c1, c2, D_j, A, B).
For many slots at once (a deal), one batch proof covers all of a player's shares: random weights
z_i from the transcript fold them into C = sum z_i*c1_i and E = sum z_i*D_i, and a single
Chaum-Pedersen proof shows log_G(Y_j) = log_C(E). A single wrong D_i makes that false except with
probability 1/l, and verification costs two multiplications per share instead of four.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from buraco_p2p.crypto.elgamal import Ciphertext
from buraco_p2p.crypto.encoding import MAX_CARDS, card_id_of
from buraco_p2p.crypto.errors import InvalidPoint, InvalidScalar, ProofError
from buraco_p2p.crypto.group import (
    BASE,
    Point,
    RandomSource,
    Scalar,
    linear_combination,
    multi_mul,
)
from buraco_p2p.crypto.keys import KeyPair
from buraco_p2p.crypto.transcript import ProofContext, Transcript

__all__ = [
    "CP_BATCH_LABEL",
    "CP_LABEL",
    "ChaumPedersenProof",
    "DecryptionShare",
    "ShareBatch",
    "make_share",
    "make_share_batch",
    "open_card",
    "open_private",
    "own_share",
    "verify_share",
    "verify_share_batch",
]

CP_LABEL: Final = b"buraco-p2p/cp/v1"
CP_BATCH_LABEL: Final = b"buraco-p2p/cp-batch/v1"
_PROOF_BYTES: Final = 64
_SHARE_BYTES: Final = 32 + _PROOF_BYTES
_PROOF_NAME: Final = "chaum-pedersen"


@dataclass(frozen=True, slots=True)
class ChaumPedersenProof:
    """Proof that two points share a discrete log: challenge c and response s."""

    challenge: Scalar
    response: Scalar

    def to_bytes(self) -> bytes:
        return self.challenge.to_bytes() + self.response.to_bytes()

    def __reduce__(self) -> tuple[type[ChaumPedersenProof], tuple[Scalar, Scalar]]:
        """Pickled as its two scalars (quicker than a dataclass's default state; see
        `ShareBatch.__reduce__`)."""
        return (ChaumPedersenProof, (self.challenge, self.response))

    @classmethod
    def from_bytes(cls, b: bytes, *, party: object = None) -> ChaumPedersenProof:
        if not isinstance(b, bytes) or len(b) != _PROOF_BYTES:
            raise ProofError(
                _PROOF_NAME, f"a proof is {_PROOF_BYTES} bytes", field="length", party=party
            )
        try:
            c = Scalar.from_bytes(b[:32])
        except InvalidScalar as e:
            raise ProofError(_PROOF_NAME, str(e), field="challenge", party=party) from e
        try:
            s = Scalar.from_bytes(b[32:])
        except InvalidScalar as e:
            raise ProofError(_PROOF_NAME, str(e), field="response", party=party) from e
        return cls(c, s)


def _decode_share_point(b: bytes, party: object, field: str = "share") -> Point:
    try:
        return Point.from_bytes(b)
    except InvalidPoint as e:
        raise ProofError(_PROOF_NAME, str(e), field=field, party=party) from e


@dataclass(frozen=True, slots=True)
class DecryptionShare:
    """D_j = x_j*c1 for one ciphertext, with its proof. Wire form: D (32) || c (32) || s (32)."""

    share: Point
    proof: ChaumPedersenProof

    def to_bytes(self) -> bytes:
        return self.share.to_bytes() + self.proof.to_bytes()

    @classmethod
    def from_bytes(cls, b: bytes, *, party: object = None) -> DecryptionShare:
        if not isinstance(b, bytes) or len(b) != _SHARE_BYTES:
            raise ProofError(
                _PROOF_NAME, f"a share is {_SHARE_BYTES} bytes", field="length", party=party
            )
        return cls(
            _decode_share_point(b[:32], party), ChaumPedersenProof.from_bytes(b[32:], party=party)
        )


def _check_public(public: Point, party: object) -> None:
    # The session only ever passes verified, non-identity keys; refusing the identity here keeps
    # a caller that does not from accepting shares that prove nothing (x = 0 opens every card).
    if not isinstance(public, Point) or public.is_identity():
        raise ProofError(_PROOF_NAME, "the public key is the identity", field="public", party=party)


def _check_ciphertext(ct: Ciphertext, party: object) -> None:
    if ct.c1.is_identity():
        # An open card needs no shares, and x*identity would reveal nothing about x anyway.
        raise ProofError(
            _PROOF_NAME,
            "ciphertext is not encrypted (c1 is the identity)",
            field="ciphertext",
            party=party,
        )


def _single_statement(ctx: ProofContext, public: Point, ct: Ciphertext, d: Point) -> Transcript:
    t = Transcript.for_context(CP_LABEL, ctx)
    t.append(b"G", BASE)
    t.append(b"Y", public)
    t.append(b"c1", ct.c1)
    t.append(b"c2", ct.c2)
    t.append(b"D", d)
    return t


def _single_challenge(t: Transcript, a: Point, b: Point) -> Scalar:
    t.append(b"A", a)
    t.append(b"B", b)
    return t.challenge(b"c")


def own_share(keypair: KeyPair, ciphertext: Ciphertext) -> Point:
    """x*c1, for the owner's private use: never published in a private reveal."""
    return keypair.secret * ciphertext.c1


def make_share(
    keypair: KeyPair, ciphertext: Ciphertext, ctx: ProofContext, rng: RandomSource
) -> DecryptionShare:
    """Publishable share of `ciphertext` with a proof bound to it and to `ctx`."""
    _check_ciphertext(ciphertext, ctx.prover)
    x = keypair.secret
    d = x * ciphertext.c1
    t = _single_statement(ctx, keypair.public, ciphertext, d)
    k = t.nonce(x, rng)
    c = _single_challenge(t, Point.base_mul(k), k * ciphertext.c1)
    return DecryptionShare(d, ChaumPedersenProof(c, k + c * x))


def verify_share(
    public: Point, ciphertext: Ciphertext, share: DecryptionShare, ctx: ProofContext
) -> None:
    """Raise ProofError naming ctx.prover unless `share` is x*c1 for the x behind `public`."""
    _check_public(public, ctx.prover)
    _check_ciphertext(ciphertext, ctx.prover)
    if share.share.is_identity():
        raise ProofError(_PROOF_NAME, "the share is the identity", field="share", party=ctx.prover)
    c, s = share.proof.challenge, share.proof.response
    a = Point.base_mul(s) - c * public
    b = s * ciphertext.c1 - c * share.share
    if _single_challenge(_single_statement(ctx, public, ciphertext, share.share), a, b) != c:
        raise ProofError(
            _PROOF_NAME, "challenge does not match", field="challenge", party=ctx.prover
        )


@dataclass(frozen=True, slots=True)
class ShareBatch:
    """One player's shares of several ciphertexts under a single batch proof.

    Wire form: the n shares (32 bytes each; n is known from the slots asked for) followed by
    the proof (64 bytes).
    """

    shares: tuple[Point, ...]
    proof: ChaumPedersenProof

    def to_bytes(self) -> bytes:
        return b"".join(d.to_bytes() for d in self.shares) + self.proof.to_bytes()

    def __reduce__(self) -> tuple[type[ShareBatch], tuple[tuple[Point, ...], ChaumPedersenProof]]:
        """Pickled as its shares and proof, each by its own reduction: a dataclass's default
        state, read field by field, is several times slower, and `buraco_p2p.verify_jobs`
        pickles every batch it hands to a worker."""
        return (ShareBatch, (self.shares, self.proof))

    @classmethod
    def from_bytes(cls, b: bytes, n: int, *, party: object = None) -> ShareBatch:
        if n <= 0:
            raise ValueError("a batch holds at least one share")
        if not isinstance(b, bytes) or len(b) != 32 * n + _PROOF_BYTES:
            raise ProofError(
                _PROOF_NAME,
                f"a batch of {n} is {32 * n + _PROOF_BYTES} bytes",
                field="length",
                party=party,
            )
        shares = tuple(
            _decode_share_point(b[32 * i : 32 * i + 32], party, f"share[{i}]") for i in range(n)
        )
        return cls(shares, ChaumPedersenProof.from_bytes(b[32 * n :], party=party))


def _batch_transcript(
    ctx: ProofContext, public: Point, cts: Sequence[Ciphertext], shares: Sequence[Point]
) -> tuple[Transcript, list[Scalar]]:
    t = Transcript.for_context(CP_BATCH_LABEL, ctx)
    t.append(b"G", BASE)
    t.append(b"Y", public)
    t.append(b"n", len(cts))
    t.append(b"ciphertexts", [p for ct in cts for p in (ct.c1, ct.c2)])
    t.append(b"D", list(shares))
    return t, t.challenges(b"z", len(cts))


def _batch_challenge(t: Transcript, a: Point, b: Point) -> Scalar:
    t.append(b"A", a)
    t.append(b"B", b)
    return t.challenge(b"c")


def make_share_batch(
    keypair: KeyPair, ciphertexts: Sequence[Ciphertext], ctx: ProofContext, rng: RandomSource
) -> ShareBatch:
    """Shares of every ciphertext in order, with one proof for them all."""
    if not ciphertexts:
        raise ValueError("a batch holds at least one share")
    for ct in ciphertexts:
        _check_ciphertext(ct, ctx.prover)
    x = keypair.secret
    shares = tuple(x * ct.c1 for ct in ciphertexts)
    t, z = _batch_transcript(ctx, keypair.public, ciphertexts, shares)
    big_c = multi_mul(z, [ct.c1 for ct in ciphertexts])
    k = t.nonce(x, rng)
    c = _batch_challenge(t, Point.base_mul(k), k * big_c)
    return ShareBatch(shares, ChaumPedersenProof(c, k + c * x))


def verify_share_batch(
    public: Point, ciphertexts: Sequence[Ciphertext], batch: ShareBatch, ctx: ProofContext
) -> None:
    """Raise ProofError naming ctx.prover unless every share in `batch` is x*c1_i."""
    if len(batch.shares) != len(ciphertexts) or not ciphertexts:
        raise ProofError(
            _PROOF_NAME,
            f"expected {len(ciphertexts)} shares, got {len(batch.shares)}",
            field="length",
            party=ctx.prover,
        )
    _check_public(public, ctx.prover)
    for ct in ciphertexts:
        _check_ciphertext(ct, ctx.prover)
    for i, d in enumerate(batch.shares):
        if d.is_identity():
            raise ProofError(
                _PROOF_NAME, "a share is the identity", field=f"share[{i}]", party=ctx.prover
            )
    t, z = _batch_transcript(ctx, public, ciphertexts, batch.shares)
    c, s = batch.proof.challenge.value, batch.proof.response.value
    a = linear_combination(((s, BASE), (-c, public)))
    # B = s*C - c*E, with C and E expanded: sum z_i*s*c1_i - z_i*c*D_i costs 2n
    # multiplications, where building C and E first and then multiplying them costs 2n + 2.
    b = linear_combination(
        [(zi.value * s, ct.c1) for zi, ct in zip(z, ciphertexts, strict=True)]
        + [(-zi.value * c, d) for zi, d in zip(z, batch.shares, strict=True)]
    )
    if _batch_challenge(t, a, b) != batch.proof.challenge:
        raise ProofError(
            _PROOF_NAME, "batch challenge does not match", field="challenge", party=ctx.prover
        )


def open_card(ciphertext: Ciphertext, shares: Sequence[Point], deck_size: int = MAX_CARDS) -> int:
    """The card id behind `ciphertext` given every player's (already verified) share.

    Raises NotACard if c2 - sum D_j is not a card point: with verified shares that means the
    ciphertext itself was forged, which a verified shuffle rules out, so it is evidence of a cheat.
    """
    m = ciphertext.c2
    for d in shares:
        m = m - d
    return card_id_of(m, deck_size)


def open_private(
    keypair: KeyPair,
    ciphertext: Ciphertext,
    others: Sequence[Point],
    deck_size: int = MAX_CARDS,
) -> int:
    """The owner's view of a privately dealt card: the others' verified shares plus its own."""
    return open_card(ciphertext, [*others, own_share(keypair, ciphertext)], deck_size)
