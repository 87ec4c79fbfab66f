"""Joint randomness by commit-reveal, and unbiased draws from the agreed seed.

Every party picks a 32-byte nonce and publishes a commitment to it; once all commitments are in,
everyone reveals. The seed is a hash of all nonces in party order, so it is uniform as long as one
party's nonce is, and nobody could choose theirs after seeing another's. The commitment binds the
table, the purpose, the round and the party's position, so a commitment cannot be copied from
another party or replayed from another draw. (The last party to reveal can still refuse to; the
session treats a missing reveal as walking away, not as a redraw.)

Draws from the seed use rejection sampling over a hash stream, so every outcome of
`uniform_int`, `uniform_choice` and `permutation` is exactly equally likely.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from buraco_p2p.crypto.errors import CommitmentMismatch, CommitRevealError
from buraco_p2p.crypto.group import RandomSource

__all__ = [
    "COMMITMENT_BYTES",
    "NONCE_BYTES",
    "SEED_BYTES",
    "CoinContext",
    "CommitReveal",
    "CommitRevealError",
    "DrawStream",
    "combine",
    "commitment",
    "new_nonce",
    "permutation",
    "uniform_choice",
    "uniform_int",
    "verify_reveal",
]

NONCE_BYTES: Final = 32
COMMITMENT_BYTES: Final = 32
SEED_BYTES: Final = 32

_COMMIT_TAG: Final = b"buraco-p2p/commit/v1"
_COMBINE_TAG: Final = b"buraco-p2p/coin/v1"
_STREAM_TAG: Final = b"buraco-p2p/stream/v1"
_U32_MAX: Final = 2**32 - 1
_U64_MAX: Final = 2**64 - 1


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


@dataclass(frozen=True, slots=True)
class CoinContext:
    """Which draw this is: the table, what it decides (b"seats", b"dealer", b"cut"), and a round
    number (the hand, or a counter) so the same purpose can be drawn again later."""

    table_id: bytes
    purpose: bytes
    round: int

    def __post_init__(self) -> None:
        if not isinstance(self.table_id, bytes) or not isinstance(self.purpose, bytes):
            raise TypeError("table_id and purpose are bytes")
        r = self.round
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r <= _U64_MAX:
            raise ValueError(f"round must be an integer in [0, 2^64), got {r!r}")

    def _encode(self) -> bytes:
        return _lp(self.table_id) + _lp(self.purpose) + struct.pack(">Q", self.round)


def _check_party(party: int, n: int | None = None) -> None:
    if isinstance(party, bool) or not isinstance(party, int) or not 0 <= party <= _U32_MAX:
        raise ValueError(f"party must be an index in [0, 2^32), got {party!r}")
    if n is not None and party >= n:
        raise ValueError(f"party {party} out of range for {n} parties")


def new_nonce(rng: RandomSource) -> bytes:
    """A fresh 32-byte nonce from the injected source."""
    nonce = rng.bytes(NONCE_BYTES)
    if len(nonce) != NONCE_BYTES:
        raise ValueError("random source returned the wrong number of bytes")
    return nonce


def commitment(ctx: CoinContext, party: int, nonce: bytes) -> bytes:
    """SHA-512(lp(tag) || context || u32be(party) || lp(nonce)), first 32 bytes."""
    _check_party(party)
    if not isinstance(nonce, bytes) or len(nonce) != NONCE_BYTES:
        raise CommitmentMismatch(party, f"a nonce is {NONCE_BYTES} bytes")
    data = _lp(_COMMIT_TAG) + ctx._encode() + struct.pack(">I", party) + _lp(nonce)
    return hashlib.sha512(data).digest()[:COMMITMENT_BYTES]


def verify_reveal(ctx: CoinContext, party: int, nonce: bytes, committed: bytes) -> None:
    """Raise CommitmentMismatch(party) unless `nonce` opens `committed`."""
    expected = commitment(ctx, party, nonce)
    if not isinstance(committed, bytes) or not hmac.compare_digest(expected, committed):
        raise CommitmentMismatch(party)


def combine(ctx: CoinContext, nonces: Sequence[bytes]) -> bytes:
    """The joint seed: SHA-512(lp(tag) || context || u32be(n) || nonce_0 || ...)[:32]."""
    if not nonces:
        raise ValueError("no nonces to combine")
    for i, nonce in enumerate(nonces):
        if not isinstance(nonce, bytes) or len(nonce) != NONCE_BYTES:
            raise CommitmentMismatch(i, f"a nonce is {NONCE_BYTES} bytes")
    data = _lp(_COMBINE_TAG) + ctx._encode() + struct.pack(">I", len(nonces)) + b"".join(nonces)
    return hashlib.sha512(data).digest()[:SEED_BYTES]


@dataclass
class CommitReveal:
    """One commit-reveal round among n parties, sans-IO: feed it what arrives, in any order.

    Reveals are refused until every commitment is in, which is what makes the round fair.
    """

    ctx: CoinContext
    n: int
    _commitments: dict[int, bytes] = field(default_factory=dict)
    _nonces: dict[int, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int) or not 1 <= self.n <= _U32_MAX:
            raise ValueError(f"need at least one party, got {self.n!r}")

    def add_commitment(self, party: int, committed: bytes) -> None:
        _check_party(party, self.n)
        if party in self._commitments:
            raise CommitRevealError(f"party {party} already committed")
        if not isinstance(committed, bytes) or len(committed) != COMMITMENT_BYTES:
            raise CommitmentMismatch(party, f"a commitment is {COMMITMENT_BYTES} bytes")
        self._commitments[party] = committed

    @property
    def all_committed(self) -> bool:
        return len(self._commitments) == self.n

    def add_reveal(self, party: int, nonce: bytes) -> None:
        """Check `nonce` against the party's commitment; CommitmentMismatch names the party."""
        _check_party(party, self.n)
        if not self.all_committed:
            raise CommitRevealError(f"party {party} revealed before all parties committed")
        if party in self._nonces:
            raise CommitRevealError(f"party {party} already revealed")
        verify_reveal(self.ctx, party, nonce, self._commitments[party])
        self._nonces[party] = nonce

    @property
    def missing_reveals(self) -> tuple[int, ...]:
        return tuple(p for p in range(self.n) if p not in self._nonces)

    @property
    def done(self) -> bool:
        return len(self._nonces) == self.n

    def seed(self) -> bytes:
        if not self.done:
            raise CommitRevealError(f"waiting for reveals from {list(self.missing_reveals)}")
        return combine(self.ctx, [self._nonces[p] for p in range(self.n)])


class DrawStream:
    """Unbiased integers from a seed.

    Block i is SHA-512(lp(tag) || lp(seed) || lp(label) || u64be(i)); the stream is the blocks'
    concatenation, consumed front to back. `below(m)` takes ceil(k/8) bytes with k = bitlen(m-1),
    reads them big-endian, keeps the low k bits and accepts the value if it is below m, else
    draws again.
    """

    def __init__(self, seed: bytes, label: bytes = b"") -> None:
        if not isinstance(seed, bytes) or not isinstance(label, bytes):
            raise TypeError("seed and label are bytes")
        self._prefix = _lp(_STREAM_TAG) + _lp(seed) + _lp(label)
        self._counter = 0
        self._buffer = b""

    def _take(self, n: int) -> bytes:
        while len(self._buffer) < n:
            self._buffer += hashlib.sha512(self._prefix + struct.pack(">Q", self._counter)).digest()
            self._counter += 1
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def below(self, m: int) -> int:
        """A uniform integer in [0, m)."""
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise ValueError(f"need a positive bound, got {m!r}")
        if m == 1:
            return 0
        k = (m - 1).bit_length()
        nbytes = (k + 7) // 8
        mask = (1 << k) - 1
        while True:
            v = int.from_bytes(self._take(nbytes), "big") & mask
            if v < m:
                return v


def uniform_int(seed: bytes, lo: int, hi: int, *, label: bytes = b"") -> int:
    """A uniform integer in [lo, hi], both ends included (like a cut of lo..hi cards)."""
    if hi < lo:
        raise ValueError(f"empty range [{lo}, {hi}]")
    return lo + DrawStream(seed, label).below(hi - lo + 1)


def uniform_choice(seed: bytes, n: int, *, label: bytes = b"") -> int:
    """A uniform index in [0, n): the first dealer among n seats, say."""
    return DrawStream(seed, label).below(n)


def permutation(seed: bytes, n: int, *, label: bytes = b"") -> list[int]:
    """A uniform permutation of range(n) (Fisher-Yates, i from n-1 down to 1, j = below(i+1))."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"need a non-negative size, got {n!r}")
    stream = DrawStream(seed, label)
    out = list(range(n))
    for i in range(n - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out
