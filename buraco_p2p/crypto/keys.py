"""Per-hand ElGamal keys and their Schnorr proofs of knowledge.

Each player picks a fresh secret x_i for every hand and announces Y_i = x_i*G together with a
non-interactive Schnorr proof that it knows x_i, bound to its `ProofContext` (table, hand, log
index, prover). The table key is Y = sum Y_i. The proofs are what make the sum safe: a player who
waits for the others' keys and announces Y_m = x*G - sum(others) (a rogue key, so that it alone
knows the discrete log of Y) cannot prove knowledge of log(Y_m), so its announcement is refused.

A proof is the pair (c, s) with R = s*G - c*Y_i and c = H(ctx, G, Y_i, R): 64 bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from buraco_p2p.crypto.errors import InvalidPoint, InvalidScalar, ProofError
from buraco_p2p.crypto.group import BASE, IDENTITY, Point, RandomSource, Scalar
from buraco_p2p.crypto.transcript import ProofContext, Transcript

__all__ = [
    "SCHNORR_LABEL",
    "KeyAnnouncement",
    "KeyPair",
    "SchnorrProof",
    "aggregate_key",
    "prove_key",
    "verify_key",
]

SCHNORR_LABEL: Final = b"buraco-p2p/schnorr/v1"
_PROOF_BYTES: Final = 64


@dataclass(frozen=True, slots=True)
class KeyPair:
    """A player's key for one hand. The secret never leaves this object except into proofs."""

    secret: Scalar = field(repr=False)
    public: Point

    @classmethod
    def generate(cls, rng: RandomSource) -> KeyPair:
        x = Scalar.random_nonzero(rng)
        return cls(x, Point.base_mul(x))

    @classmethod
    def from_secret(cls, x: Scalar) -> KeyPair:
        if x.is_zero():
            raise InvalidScalar("a secret key must not be zero")
        return cls(x, Point.base_mul(x))


@dataclass(frozen=True, slots=True)
class SchnorrProof:
    """Proof of knowledge of log_G(Y): challenge c and response s (both canonical scalars)."""

    challenge: Scalar
    response: Scalar

    def to_bytes(self) -> bytes:
        return self.challenge.to_bytes() + self.response.to_bytes()

    @classmethod
    def from_bytes(cls, b: bytes) -> SchnorrProof:
        if not isinstance(b, bytes) or len(b) != _PROOF_BYTES:
            raise ProofError("schnorr", f"a proof is {_PROOF_BYTES} bytes", field="length")
        try:
            c = Scalar.from_bytes(b[:32])
        except InvalidScalar as e:
            raise ProofError("schnorr", str(e), field="challenge") from e
        try:
            s = Scalar.from_bytes(b[32:])
        except InvalidScalar as e:
            raise ProofError("schnorr", str(e), field="response") from e
        return cls(c, s)


def _statement(ctx: ProofContext, public: Point) -> Transcript:
    t = Transcript.for_context(SCHNORR_LABEL, ctx)
    t.append(b"G", BASE)
    t.append(b"Y", public)
    return t


def _challenge(t: Transcript, commitment: Point) -> Scalar:
    t.append(b"R", commitment)
    return t.challenge(b"c")


def prove_key(keypair: KeyPair, ctx: ProofContext, rng: RandomSource) -> SchnorrProof:
    """Prove knowledge of keypair.secret for this context: k hedged (`Transcript.nonce`),
    R = k*G, s = k + c*x."""
    t = _statement(ctx, keypair.public)
    k = t.nonce(keypair.secret, rng)
    c = _challenge(t, Point.base_mul(k))
    return SchnorrProof(c, k + c * keypair.secret)


def verify_key(public: Point, proof: SchnorrProof, ctx: ProofContext) -> None:
    """Raise ProofError (naming ctx.prover) unless `proof` shows knowledge of log_G(public)."""
    if not isinstance(public, Point) or public.is_identity():
        raise ProofError(
            "schnorr", "the public key is the identity", field="public", party=ctx.prover
        )
    r = Point.base_mul(proof.response) - proof.challenge * public
    if _challenge(_statement(ctx, public), r) != proof.challenge:
        raise ProofError(
            "schnorr",
            "challenge does not match the commitment",
            field="challenge",
            party=ctx.prover,
        )


@dataclass(frozen=True, slots=True)
class KeyAnnouncement:
    """What a player publishes for a hand: its public key, its proof, and the proof's context."""

    context: ProofContext
    public: Point
    proof: SchnorrProof

    @classmethod
    def create(cls, keypair: KeyPair, ctx: ProofContext, rng: RandomSource) -> KeyAnnouncement:
        return cls(ctx, keypair.public, prove_key(keypair, ctx, rng))

    @classmethod
    def from_bytes(cls, ctx: ProofContext, b: bytes) -> KeyAnnouncement:
        """Decode Y (32 bytes) || proof (64 bytes) received for context `ctx`."""
        if not isinstance(b, bytes) or len(b) != 32 + _PROOF_BYTES:
            raise ProofError(
                "schnorr", "a key announcement is 96 bytes", field="length", party=ctx.prover
            )
        try:
            y = Point.from_bytes(b[:32])
        except InvalidPoint as e:
            raise ProofError("schnorr", str(e), field="public", party=ctx.prover) from e
        try:
            proof = SchnorrProof.from_bytes(b[32:])
        except ProofError as e:
            raise ProofError("schnorr", e.reason, field=e.field, party=ctx.prover) from e
        return cls(ctx, y, proof)

    def to_bytes(self) -> bytes:
        return self.public.to_bytes() + self.proof.to_bytes()

    def verify(self) -> None:
        verify_key(self.public, self.proof, self.context)


def aggregate_key(announcements: Sequence[KeyAnnouncement]) -> Point:
    """The table key sum Y_i, after checking every proof; raises ProofError naming the culprit.

    Each announcement must come from a distinct prover with a distinct key: a repeated key is a
    replayed announcement, not a player's own.
    """
    if not announcements:
        raise ValueError("no keys to aggregate")
    provers: set[bytes] = set()
    keys: set[Point] = set()
    total = IDENTITY
    for a in announcements:
        if a.context.prover in provers:
            raise ProofError(
                "schnorr", "two keys from one prover", field="prover", party=a.context.prover
            )
        if a.public in keys:
            raise ProofError(
                "schnorr",
                "key already announced by another player",
                field="public",
                party=a.context.prover,
            )
        a.verify()
        provers.add(a.context.prover)
        keys.add(a.public)
        total = total + a.public
    if total.is_identity():
        raise ProofError(
            "schnorr",
            "the keys sum to the identity",
            field="public",
            party=announcements[-1].context.prover,
        )
    return total
