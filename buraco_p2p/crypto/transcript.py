"""Fiat-Shamir transcripts: one hash that every proof's challenge comes from.

A transcript starts by absorbing the protocol label and the whole proof context (table, hand,
log index, prover), so a proof made for one context yields a different challenge, and so fails,
in any other. Every absorbed item is framed with an operation byte and length-prefixed label and
data, so no two different sequences of items hash the same bytes.

The challenge is SHA-512 over the concatenation of all frames so far, wide-reduced mod l. The
frames are exact and specified in docs/protocol.md section 1.2.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from buraco_p2p.crypto.group import Point, RandomSource, Scalar

__all__ = ["NONCE_TAG", "PROTOCOL_PREFIX", "ProofContext", "Transcript"]

PROTOCOL_PREFIX: Final = b"buraco-p2p/"
NONCE_TAG: Final = b"buraco-p2p/nonce/v1"
_NONCE_RANDOM_BYTES: Final = 32

_OP_INIT: Final = b"\x00"
_OP_APPEND: Final = b"\x01"
_OP_CHALLENGE: Final = b"\x02"
_OP_FORK: Final = b"\x03"

_U64_MAX: Final = 2**64 - 1
_U32_MAX: Final = 2**32 - 1

TranscriptItem = bytes | Point | Scalar | int | Sequence[Point | Scalar]


@dataclass(frozen=True, slots=True)
class ProofContext:
    """Where a proof belongs: which table, which hand, which log position and who proves it."""

    table_id: bytes
    hand: int
    log_index: int
    prover: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.table_id, bytes) or not isinstance(self.prover, bytes):
            raise TypeError("table_id and prover are bytes")
        for name in ("hand", "log_index"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= _U64_MAX:
                raise ValueError(f"{name} must be an integer in [0, 2^64), got {v!r}")

    def __reduce__(self) -> tuple[type[ProofContext], tuple[bytes, int, int, bytes]]:
        """Pickled as its four fields, checked again when rebuilt (a dataclass's default
        state, read field by field, is several times slower: `buraco_p2p.verify_jobs` sends
        one with every proof check)."""
        return (ProofContext, (self.table_id, self.hand, self.log_index, self.prover))


def _frame(op: bytes, label: bytes, data: bytes) -> bytes:
    if len(label) > _U32_MAX or len(data) > _U32_MAX:
        raise ValueError("transcript item too long")
    return op + struct.pack(">I", len(label)) + label + struct.pack(">I", len(data)) + data


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def encode_item(data: TranscriptItem) -> bytes:
    """The bytes a transcript absorbs for a value: raw bytes, 32-byte encodings, or u64be."""
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    if isinstance(data, Point | Scalar):
        return data.to_bytes()
    if isinstance(data, bool):
        raise TypeError("booleans are not transcript items; encode them explicitly")
    if isinstance(data, int):
        if not 0 <= data <= _U64_MAX:
            raise ValueError(f"integer transcript items are u64, got {data}")
        return struct.pack(">Q", data)
    if isinstance(data, Sequence):
        parts = []
        for item in data:
            if not isinstance(item, Point | Scalar):
                raise TypeError("a sequence item must be a Point or a Scalar")
            parts.append(item.to_bytes())
        return b"".join(parts)
    raise TypeError(f"cannot absorb {type(data).__name__} into a transcript")


class Transcript:
    """A running SHA-512 over framed items, bound to a `ProofContext` from the start."""

    __slots__ = ("_h",)

    def __init__(
        self,
        protocol_label: bytes,
        *,
        table_id: bytes,
        hand: int,
        log_index: int,
        prover: bytes,
    ) -> None:
        if not isinstance(protocol_label, bytes) or not protocol_label.startswith(PROTOCOL_PREFIX):
            raise ValueError(f"a protocol label starts with {PROTOCOL_PREFIX!r}")
        ctx = ProofContext(table_id=table_id, hand=hand, log_index=log_index, prover=prover)
        self._h = hashlib.sha512()
        self._h.update(_frame(_OP_INIT, b"protocol", protocol_label))
        self._h.update(_frame(_OP_INIT, b"table_id", ctx.table_id))
        self._h.update(_frame(_OP_INIT, b"hand", struct.pack(">Q", ctx.hand)))
        self._h.update(_frame(_OP_INIT, b"log_index", struct.pack(">Q", ctx.log_index)))
        self._h.update(_frame(_OP_INIT, b"prover", ctx.prover))

    @classmethod
    def for_context(cls, protocol_label: bytes, context: ProofContext) -> Transcript:
        return cls(
            protocol_label,
            table_id=context.table_id,
            hand=context.hand,
            log_index=context.log_index,
            prover=context.prover,
        )

    def append(self, label: bytes, data: TranscriptItem) -> None:
        """Absorb a labelled value: bytes, a Point, a Scalar, a u64, or a list of points/scalars."""
        self._h.update(_frame(_OP_APPEND, label, encode_item(data)))

    def challenge(self, label: bytes) -> Scalar:
        """A challenge scalar from everything absorbed so far; later challenges depend on it."""
        self._h.update(_frame(_OP_CHALLENGE, label, b""))
        return Scalar.from_hash(self._h.copy().digest())

    def challenges(self, label: bytes, n: int) -> list[Scalar]:
        """n challenges, exactly as n successive calls of `challenge(label)`."""
        return [self.challenge(label) for _ in range(n)]

    def challenge_bytes(self, label: bytes) -> bytes:
        """The raw 64-byte digest behind a challenge, for seeding derived values."""
        self._h.update(_frame(_OP_CHALLENGE, label, b""))
        return self._h.copy().digest()

    def nonce(self, secret: Scalar, rng: RandomSource) -> Scalar:
        """A proof nonce k bound to the secret, to everything absorbed so far and to 32 fresh
        random bytes; the transcript itself is left unchanged.

        A k drawn from the random source alone is only as good as the source: one that repeats
        (a reseeded deterministic source, a restored snapshot) gives two statements the same k,
        and two responses k + c*x with different c give x away. Hashing the statement in means
        a repeated source still yields a different k for a different statement, and hashing the
        secret in keeps k unpredictable to whoever knows the statement and the random bytes.
        """
        digest = self.copy().challenge_bytes(b"nonce")
        key = secret.to_bytes()
        while True:
            h = hashlib.sha512(
                _lp(NONCE_TAG) + key + rng.bytes(_NONCE_RANDOM_BYTES) + digest
            ).digest()
            k = Scalar.from_hash(h)
            if not k.is_zero():
                return k

    def fork(self, label: bytes) -> Transcript:
        """An independent child for a sub-proof; this transcript is left unchanged."""
        child = Transcript.__new__(Transcript)
        child._h = self._h.copy()
        child._h.update(_frame(_OP_FORK, label, b""))
        return child

    def copy(self) -> Transcript:
        """A snapshot: the prover and verifier of one proof can start from the same state."""
        child = Transcript.__new__(Transcript)
        child._h = self._h.copy()
        return child
