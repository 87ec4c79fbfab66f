"""Mental-poker cryptography over ristretto255: pure functions and values, no I/O.

The group and its encodings are in `group`, Fiat-Shamir in `transcript`, the errors every check
raises in `errors`. On top of them: per-hand keys (`keys`), card points (`encoding`), decryption
shares and opening (`shares`), joint randomness (`randomness`), ElGamal ciphertexts and decks
(`elgamal`), the proof of shuffle (`shuffle`) and the sans-IO deck session of a hand at 2..6
seats (`deck`, its messages and errors in `deck_wire`). The names below are the ones other
layers use most; the modules hold the rest.
"""

from buraco_p2p.crypto.deck import DeckError, DeckSession, RevealRefused
from buraco_p2p.crypto.elgamal import Ciphertext, InvalidCiphertext, open_deck
from buraco_p2p.crypto.encoding import card_id_of, card_point, card_points
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
from buraco_p2p.crypto.keys import (
    KeyAnnouncement,
    KeyPair,
    SchnorrProof,
    aggregate_key,
    prove_key,
    verify_key,
)
from buraco_p2p.crypto.randomness import (
    CoinContext,
    CommitReveal,
    combine,
    commitment,
    new_nonce,
    permutation,
    uniform_choice,
    uniform_int,
    verify_reveal,
)
from buraco_p2p.crypto.shares import (
    ChaumPedersenProof,
    DecryptionShare,
    ShareBatch,
    make_share,
    make_share_batch,
    open_card,
    open_private,
    own_share,
    verify_share,
    verify_share_batch,
)
from buraco_p2p.crypto.shuffle import ShuffleProof, prove_shuffle, shuffle_deck, verify_shuffle
from buraco_p2p.crypto.transcript import ProofContext, Transcript

__all__ = [
    "BASE",
    "IDENTITY",
    "ONE",
    "ZERO",
    "ChaumPedersenProof",
    "Ciphertext",
    "CoinContext",
    "CommitReveal",
    "CommitRevealError",
    "CommitmentMismatch",
    "CryptoError",
    "DeckError",
    "DeckSession",
    "DecryptionShare",
    "DeterministicRandomSource",
    "InvalidCiphertext",
    "InvalidPoint",
    "InvalidScalar",
    "KeyAnnouncement",
    "KeyPair",
    "L",
    "NotACard",
    "Point",
    "ProofContext",
    "ProofError",
    "RandomSource",
    "RevealRefused",
    "Scalar",
    "SchnorrProof",
    "ShareBatch",
    "ShuffleProof",
    "SystemRandomSource",
    "Transcript",
    "aggregate_key",
    "card_id_of",
    "card_point",
    "card_points",
    "combine",
    "commitment",
    "make_share",
    "make_share_batch",
    "multi_mul",
    "new_nonce",
    "open_card",
    "open_deck",
    "open_private",
    "own_share",
    "permutation",
    "prove_key",
    "prove_shuffle",
    "shuffle_deck",
    "uniform_choice",
    "uniform_int",
    "verify_key",
    "verify_reveal",
    "verify_share",
    "verify_share_batch",
    "verify_shuffle",
]
