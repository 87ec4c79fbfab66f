"""Mental-poker cryptography over ristretto255: pure functions and values, no I/O.

The group and its encodings are in `group`, Fiat-Shamir in `transcript`, the errors every check
raises in `errors`. Other modules build on those: keys, card points, decryption shares, joint
randomness, the ElGamal deck and its shuffle proof.
"""

from buraco_p2p.crypto.errors import (
    CommitmentMismatch,
    CommitRevealError,
    CryptoError,
    InvalidPoint,
    InvalidScalar,
    NotACard,
    ProofError,
)
from buraco_p2p.crypto.group import (
    BASE,
    IDENTITY,
    ONE,
    ZERO,
    DeterministicRandomSource,
    L,
    Point,
    RandomSource,
    Scalar,
    SystemRandomSource,
    multi_mul,
)
from buraco_p2p.crypto.transcript import ProofContext, Transcript

__all__ = [
    "BASE",
    "IDENTITY",
    "ONE",
    "ZERO",
    "CommitRevealError",
    "CommitmentMismatch",
    "CryptoError",
    "DeterministicRandomSource",
    "InvalidPoint",
    "InvalidScalar",
    "L",
    "NotACard",
    "Point",
    "ProofContext",
    "ProofError",
    "RandomSource",
    "Scalar",
    "SystemRandomSource",
    "Transcript",
    "multi_mul",
]
