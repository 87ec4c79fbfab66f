"""Randomness keyed by the log, so a restarted peer makes the same entries again.

A peer's secrets (hand keys, commit-reveal nonces, shuffle permutations, proof nonces) are
all drawn from its random source while its log stands at a given place. Deriving every draw
from a 32-byte secret, a key for that place (the hash of the whole log so far, `Table.chain`,
and of the entry a draw builds on before it is applied) and the draw's number there means a
peer restarted from its saved log and that secret produces byte-identical entries and the
same keys, without writing any key to disk: the secret file is the one thing to protect.
The key is the log's hash, not its length: a log cut back (docs/protocol.md 4.6) and grown
again differently reaches the same length with another history, and a draw made again there
(a hand key equal to an old proof's nonce) would give away a secret.
Draws are SHAKE256 of domain-separated, length-prefixed inputs, as `DeterministicRandomSource`
does, and the secret comes from the operating system's CSPRNG.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from typing import Final

__all__ = ["LogKeyedRandom"]

_TAG: Final = b"buraco-p2p/play/keyed-rng/v2"


class LogKeyedRandom:
    """A `RandomSource` whose output depends on (secret, the log's place, draw number)."""

    def __init__(self, secret: bytes, position: Callable[[], bytes] | None = None) -> None:
        if len(secret) != 32:
            raise ValueError("the randomness secret is 32 bytes")
        self._secret = secret
        self.position: Callable[[], bytes] = position or (lambda: b"")
        self._at: bytes | None = None
        self._count = 0

    def bytes(self, n: int) -> bytes:
        at = self.position()
        if at != self._at:
            self._at = at
            self._count = 0
        self._count += 1
        h = hashlib.shake_256()
        h.update(struct.pack(">I", len(_TAG)) + _TAG)
        h.update(struct.pack(">I", len(self._secret)) + self._secret)
        h.update(struct.pack(">I", len(at)) + at)
        h.update(struct.pack(">QI", self._count, n))
        return h.digest(n)
