"""Randomness keyed by the log position, so a restarted peer makes the same entries again.

A peer's secrets (hand keys, commit-reveal nonces, shuffle permutations, proof nonces) are
all drawn from its random source while its log has a given length. Deriving every draw from
a 32-byte secret, the log length at the time of the draw and the draw's number at that length
means a peer restarted from its saved log and that secret produces byte-identical entries and
the same keys, without writing any key to disk: the secret file is the one thing to protect.
Draws are SHAKE256 of domain-separated, length-prefixed inputs, as `DeterministicRandomSource`
does, and the secret comes from the operating system's CSPRNG.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from typing import Final

__all__ = ["LogKeyedRandom"]

_TAG: Final = b"buraco-p2p/play/keyed-rng/v1"


class LogKeyedRandom:
    """A `RandomSource` whose output depends on (secret, log length, draw number)."""

    def __init__(self, secret: bytes, position: Callable[[], int] | None = None) -> None:
        if len(secret) != 32:
            raise ValueError("the randomness secret is 32 bytes")
        self._secret = secret
        self.position: Callable[[], int] = position or (lambda: 0)
        self._at = -1
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
        h.update(struct.pack(">QQI", at, self._count, n))
        return h.digest(n)
